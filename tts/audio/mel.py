"""The one mel-spectrogram definition used everywhere (features, training, evaluation).

Log of the mel-filtered STFT magnitude, clamped at ``log_floor`` — the same features as
NVIDIA/tacotron2 (Slaney mel filters from librosa, Hann window, reflect-padded centred STFT).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from tts.config import AudioConfig


def mel_basis(config: AudioConfig) -> np.ndarray:
    """Mel filterbank ``(n_mels, n_fft // 2 + 1)`` (librosa, Slaney normalisation)."""
    import librosa

    return librosa.filters.mel(sr=config.sample_rate, n_fft=config.n_fft, n_mels=config.n_mels,
                               fmin=config.fmin, fmax=config.fmax).astype(np.float32)


class STFT(nn.Module):
    """Centred STFT magnitude/phase and its inverse, batched, on any device."""

    def __init__(self, n_fft: int, hop_length: int, win_length: int):
        super().__init__()
        self.n_fft, self.hop_length, self.win_length = n_fft, hop_length, win_length
        self.register_buffer("window", torch.hann_window(win_length), persistent=False)

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        """wav ``(B, T_wav)`` → complex spectrum ``(B, n_fft // 2 + 1, T_frames)``."""
        return torch.stft(wav, self.n_fft, self.hop_length, self.win_length, self.window,
                          center=True, pad_mode="reflect", return_complex=True)

    def inverse(self, spec: torch.Tensor, length: int | None = None) -> torch.Tensor:
        """complex spectrum ``(B, F, T_frames)`` → wav ``(B, T_wav)``."""
        return torch.istft(spec, self.n_fft, self.hop_length, self.win_length, self.window,
                           center=True, length=length)


def spectral_convergence(target_magnitude: torch.Tensor, wav: torch.Tensor, stft: STFT) -> torch.Tensor:
    """``‖S − |STFT(x)|‖_F / ‖S‖_F`` per item; S ``(B, F, T)``, wav ``(B, T_wav)`` → ``(B,)``."""
    rebuilt = stft(wav).abs()
    frames = min(rebuilt.shape[-1], target_magnitude.shape[-1])
    diff = target_magnitude[..., :frames] - rebuilt[..., :frames]
    return diff.flatten(1).norm(dim=1) / target_magnitude[..., :frames].flatten(1).norm(dim=1)


class MelSpectrogram(nn.Module):
    """Waveform → log-mel, batched.

    ``forward(wav (B, T_wav) or (T_wav,)) → mel (B, n_mels, T_mel) or (n_mels, T_mel)`` with
    ``T_mel = T_wav // hop_length + 1``.
    """

    def __init__(self, config: AudioConfig | None = None):
        super().__init__()
        self.config = config or AudioConfig()
        c = self.config
        self.stft = STFT(c.n_fft, c.hop_length, c.win_length)
        self.register_buffer("basis", torch.from_numpy(mel_basis(c)), persistent=False)

    def magnitude_to_mel(self, magnitude: torch.Tensor) -> torch.Tensor:
        """Linear magnitude ``(..., n_fft//2+1, T)`` → log-mel ``(..., n_mels, T)``."""
        return torch.log(torch.clamp(self.basis @ magnitude, min=self.config.log_floor))

    def differentiable(self, wav: torch.Tensor) -> torch.Tensor:
        """wav ``(B, T_wav)`` → log-mel ``(B, n_mels, T_mel)`` with gradients (a vocoder's mel loss)."""
        return self.magnitude_to_mel(self.stft(wav.float()).abs())

    @torch.no_grad()
    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        squeeze = wav.dim() == 1
        if squeeze:
            wav = wav.unsqueeze(0)
        mel = self.differentiable(wav)
        return mel.squeeze(0) if squeeze else mel
