"""Intrusive quality of a resynthesized recording against the original: wideband PESQ (ITU-T
P.862.2, 16 kHz; from -0.5 to 4.64, higher is better) and STOI (Taal et al. 2011; intelligibility
from 0 to 1) — the ``pesq`` and ``pystoi`` packages of the ``eval`` extra.

Both need the two signals time-aligned, as a vocoder's output is with its input recording; the
longer one is cut to the shorter one's length. Either is None where it is undefined: STOI on
less than 30 analysis frames of speech (~0.4 s), PESQ on a clip without detectable speech.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from tts.errors import TTSError

PESQ_RATE = 16000
#: STOI's frames: 256 samples at 10 kHz, hop 128, of which it needs 30 after dropping silent ones
STOI_MIN_SECONDS = 30 * 128 / 10000


@dataclass(frozen=True)
class ResynthesisQuality:
    pesq: float | None
    stoi: float | None


def resynthesis_quality(resynthesized: np.ndarray, original: np.ndarray, sample_rate: int) -> ResynthesisQuality:
    """PESQ (wideband) and STOI of ``resynthesized`` ``(T_wav,)`` against ``original`` ``(T_wav',)``."""
    import librosa

    try:
        from pesq import NoUtterancesError, pesq
        from pystoi import stoi
    except ImportError:
        raise TTSError("PESQ and STOI need the eval extra: pip install -e '.[eval]' (pesq, pystoi)") from None
    n = min(len(resynthesized), len(original))
    degraded, reference = (np.asarray(x[:n], dtype=np.float32) for x in (resynthesized, original))
    if not (np.isfinite(degraded).all() and np.isfinite(reference).all()):
        raise TTSError("PESQ/STOI need finite waveforms")
    intelligibility = None
    if n >= STOI_MIN_SECONDS * sample_rate:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # too little speech: its 1e-5 is discarded below
            value = float(stoi(reference, degraded, sample_rate, extended=False))
        intelligibility = value if value > 1e-5 else None
    if sample_rate != PESQ_RATE:
        degraded = librosa.resample(degraded, orig_sr=sample_rate, target_sr=PESQ_RATE)
        reference = librosa.resample(reference, orig_sr=sample_rate, target_sr=PESQ_RATE)
    try:
        with np.errstate(invalid="ignore", divide="ignore"):
            perceptual = float(pesq(PESQ_RATE, reference, degraded, "wb"))
    except NoUtterancesError:
        perceptual = None
    return ResynthesisQuality(perceptual, intelligibility)
