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
    """Centred STFT (Hann window, reflect padding) and its inverse, batched, on any device.

    The inverse is a frame-domain overlap-add (inverse real FFT of every frame, synthesis window,
    one strided add per window overlap, division by the window's squared-sum envelope): the same
    signal as ``torch.istft`` within float rounding, in less CPU time (Griffin-Lim inverts once per
    iteration).
    """

    window: torch.Tensor
    frame_window: torch.Tensor

    def __init__(self, n_fft: int, hop_length: int, win_length: int):
        super().__init__()
        self.n_fft, self.hop_length, self.win_length = n_fft, hop_length, win_length
        self.register_buffer("window", torch.hann_window(win_length), persistent=False)
        left = (n_fft - win_length) // 2  # torch.stft centres a shorter window inside the frame
        self.register_buffer("frame_window", nn.functional.pad(self.window, (left, n_fft - win_length - left)),
                             persistent=False)

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        """wav ``(B, T_wav)`` → complex spectrum ``(B, n_fft // 2 + 1, T_frames)``."""
        return torch.stft(wav, self.n_fft, self.hop_length, self.win_length, self.window,
                          center=True, pad_mode="reflect", return_complex=True)

    def overlap_add(self, frames: torch.Tensor) -> torch.Tensor:
        """frames ``(B, T_frames, n_fft)`` (an expanded view is read, not copied) → their sum at hop
        spacing ``(B, n_fft + hop · (T_frames − 1))``."""
        batch, n_frames, n_fft = frames.shape
        hop = self.hop_length
        overlaps = -(-n_fft // hop)  # frames that cover one hop-long block of the output
        if overlaps * hop != n_fft:
            frames = nn.functional.pad(frames, (0, overlaps * hop - n_fft))
        chunks = frames.reshape(batch, n_frames, overlaps, hop)
        blocks = frames.new_zeros(batch, n_frames + overlaps - 1, hop)
        for k in range(overlaps):
            blocks[:, k:k + n_frames] += chunks[:, :, k]
        return blocks.flatten(1)[:, :n_fft + hop * (n_frames - 1)]

    def inverse(self, spec: torch.Tensor, length: int | None = None) -> torch.Tensor:
        """complex spectrum ``(B, F, T_frames)`` → wav ``(B, length)``, ``length`` defaulting to ``hop · (T_frames − 1)``.

        Samples past the last frame's reach are zeros, as in ``torch.istft``.
        """
        n_frames = spec.shape[-1]
        length = self.hop_length * (n_frames - 1) if length is None else length
        frames = torch.fft.irfft(spec.transpose(1, 2), n=self.n_fft, dim=-1).mul_(self.frame_window)
        start = self.n_fft // 2
        wav = self.overlap_add(frames)[:, start:start + length]
        envelope = self.overlap_add(self.frame_window.square().expand(1, n_frames, -1))[:, start:start + length]
        if float(envelope.amin()) < 1e-11:
            raise ValueError(f"the window (length {self.win_length}) does not overlap-add to a non-zero "
                             f"envelope at hop {self.hop_length}: the STFT cannot be inverted")
        wav = wav / envelope
        return nn.functional.pad(wav, (0, length - wav.shape[-1]))


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

    basis: torch.Tensor

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
