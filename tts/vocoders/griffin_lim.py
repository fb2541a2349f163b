"""Griffin-Lim vocoder: log-mel → linear magnitude → waveform, batched torch, CPU or GPU.

Uses the fast Griffin-Lim of Perraudin et al. (2013): each phase update extrapolates
along the previous update with a momentum term, which reaches in ~30 iterations the
spectral convergence plain Griffin-Lim needs 60+ for.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from tts.audio.mel import STFT, mel_basis
from tts.config import AudioConfig, InferenceConfig
from tts.vocoders.base import Vocoder


class GriffinLim(Vocoder):
    """``forward(mel (B, n_mels, T_mel), lengths) → (wav (B, T_wav), wav_lengths)`` with
    ``T_wav = (T_mel - 1) · hop``; each item is peak-normalized to at most 0.95 on its own samples.

    Args:
        audio: mel definition and the algorithm's momentum and magnitude power.
        iterations: default number of phase updates (``forward(..., n_iter=)`` overrides it).
    """

    def __init__(self, audio: AudioConfig | None = None, iterations: int = InferenceConfig.griffin_lim_iters):
        super().__init__(audio or AudioConfig())
        c = self.audio
        self.iterations = iterations
        self.stft = STFT(c.n_fft, c.hop_length, c.win_length)
        self.register_buffer("basis_pinv", torch.from_numpy(np.linalg.pinv(mel_basis(c))), persistent=False)

    def options(self, settings: InferenceConfig) -> dict:
        return {"n_iter": settings.griffin_lim_iters}

    def mel_to_magnitude(self, mel: torch.Tensor) -> torch.Tensor:
        """Log-mel ``(B, n_mels, T)`` → non-negative linear magnitude ``(B, F, T)`` (clamped pseudo-inverse)."""
        return torch.clamp(self.basis_pinv @ torch.exp(mel.float()), min=1e-10)

    def reconstruct(self, magnitude: torch.Tensor, n_iter: int | None = None, seed: int = 0) -> torch.Tensor:
        """Fast Griffin-Lim from a linear magnitude ``(B, F, T)`` → wav ``(B, T_wav)``."""
        n_iter = self.iterations if n_iter is None else n_iter
        length = (magnitude.shape[-1] - 1) * self.audio.hop_length
        min_frames = self.audio.n_fft // self.audio.hop_length + 2  # the reflect padding needs this many
        if magnitude.shape[-1] < min_frames:  # very short mels: pad with silence, cut afterwards
            padded = nn.functional.pad(magnitude, (0, min_frames - magnitude.shape[-1]))
            return self.reconstruct(padded, n_iter, seed)[..., :length]
        generator = torch.Generator(device="cpu").manual_seed(seed)
        phase = torch.rand(magnitude.shape, generator=generator).to(magnitude.device) * (2 * torch.pi)
        angles = torch.polar(torch.ones_like(magnitude), phase)
        previous = torch.zeros_like(angles)
        alpha = self.audio.griffin_lim_momentum / (1.0 + self.audio.griffin_lim_momentum)
        for _ in range(n_iter):
            rebuilt = self.stft(self.stft.inverse(magnitude * angles, length=length))
            angles = rebuilt - alpha * previous
            angles = angles / (angles.abs() + 1e-16)
            previous = rebuilt
        return self.stft.inverse(magnitude * angles, length=length)

    @torch.no_grad()
    def forward(self, mel: torch.Tensor, lengths: torch.Tensor | None = None,
                n_iter: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        self.check_mel(mel)
        if lengths is None:
            lengths = torch.full((mel.shape[0],), mel.shape[2], dtype=torch.long, device=mel.device)
        magnitude = self.mel_to_magnitude(mel) ** self.audio.griffin_lim_power
        wav = self.reconstruct(magnitude, n_iter=n_iter)
        wav_lengths = self.frames_to_samples(lengths)
        wav = wav * (torch.arange(wav.shape[-1], device=wav.device)[None] < wav_lengths[:, None])
        if wav.shape[-1]:
            peak = wav.abs().amax(dim=-1, keepdim=True).clamp(min=1e-8)
            wav = wav / peak * torch.clamp(peak, max=0.95)
        return wav, wav_lengths
