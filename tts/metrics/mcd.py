"""Mel cepstral distortion between two log-mel spectrograms, after DTW alignment."""

from __future__ import annotations

import numpy as np
from scipy.fft import dct

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
