"""Naturalness predicted offline: DNSMOS (Reddy et al. 2021/2022), Microsoft's MOS predictors,
whose ONNX models ship inside the ``speechmos`` package (the ``eval`` extra).

``p808`` predicts the ITU-T P.808 MOS; ``sig`` / ``bak`` / ``ovrl`` are the P.835 scores for the
speech signal, the background and the whole. Clips are scored at 16 kHz; DNSMOS looks at 9 s
windows, so a shorter clip is repeated to fill one (as the package does).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tts.errors import TTSError


@dataclass(frozen=True)
class MOSScores:
    p808: float
    sig: float
    bak: float
    ovrl: float


class MOSPredictor:
    """``predictor(waveform (T_wav,), sample_rate) → MOSScores``."""

    SAMPLE_RATE = 16000

    def __init__(self) -> None:
        try:
            from speechmos.dnsmos import DNSMOS
        except ImportError:
            raise TTSError("DNSMOS needs the eval extra: pip install -e '.[eval]' (speechmos, onnxruntime)") from None
        import speechmos

        models = Path(speechmos.__file__).parent / "dnsmos_models"
        self._model = DNSMOS(str(models / "sig_bak_ovr.onnx"), str(models / "model_v8.onnx"))

    def __call__(self, waveform: np.ndarray, sample_rate: int) -> MOSScores:
        import librosa

        audio = np.asarray(waveform, dtype=np.float32)
        if sample_rate != self.SAMPLE_RATE:
            audio = librosa.resample(audio, orig_sr=sample_rate, target_sr=self.SAMPLE_RATE)
        if audio.size == 0 or not np.isfinite(audio).all():
            raise TTSError("DNSMOS needs a non-empty, finite waveform")
        scores = self._model(np.clip(audio, -1.0, 1.0), self.SAMPLE_RATE, False)
        return MOSScores(float(scores["p808_mos"]), float(scores["sig_mos"]), float(scores["bak_mos"]),
                         float(scores["ovrl_mos"]))
