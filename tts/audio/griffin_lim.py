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
from tts.config import AudioConfig


def spectral_convergence(target_magnitude: torch.Tensor, wav: torch.Tensor, stft: STFT) -> torch.Tensor:
    """``‖S − |STFT(x)|‖_F / ‖S‖_F`` per item; S ``(B, F, T)``, wav ``(B, T_wav)`` → ``(B,)``."""
    rebuilt = stft(wav).abs()
    frames = min(rebuilt.shape[-1], target_magnitude.shape[-1])
    diff = target_magnitude[..., :frames] - rebuilt[..., :frames]
    return diff.flatten(1).norm(dim=1) / target_magnitude[..., :frames].flatten(1).norm(dim=1)


class GriffinLim(nn.Module):
    """``forward(mel (B, n_mels, T_mel)) → wav (B, T_wav)`` with ``T_wav = (T_mel - 1) * hop``.

    Args:
        config: audio settings (mel definition, iterations, momentum, magnitude power).
        nnls_iters: projected-gradient refinement steps of the mel → linear inversion
            (0 = clamped pseudo-inverse only).
    """

    def __init__(self, config: AudioConfig | None = None, nnls_iters: int = 0):
        super().__init__()
        self.config = config or AudioConfig()
        c = self.config
        basis = mel_basis(c)
        self.stft = STFT(c.n_fft, c.hop_length, c.win_length)
        self.register_buffer("basis", torch.from_numpy(basis), persistent=False)
        self.register_buffer("basis_pinv", torch.from_numpy(np.linalg.pinv(basis)), persistent=False)
        self.nnls_iters = nnls_iters

    def mel_to_magnitude(self, mel: torch.Tensor) -> torch.Tensor:
        """Log-mel ``(B, n_mels, T)`` → non-negative linear magnitude ``(B, F, T)``."""
        mel_lin = torch.exp(mel.float())
        magnitude = torch.clamp(self.basis_pinv @ mel_lin, min=1e-10)
        if self.nnls_iters:
            # projected gradient on ‖basis·X − M‖², step 1/L with L = ‖basis‖₂²
            step = 1.0 / float(torch.linalg.matrix_norm(self.basis, ord=2) ** 2)
            for _ in range(self.nnls_iters):
                grad = self.basis.T @ (self.basis @ magnitude - mel_lin)
                magnitude = torch.clamp(magnitude - step * grad, min=1e-10)
        return magnitude

    def reconstruct(self, magnitude: torch.Tensor, n_iter: int | None = None,
                    momentum: float | None = None, seed: int = 0) -> torch.Tensor:
        """Fast Griffin-Lim from a linear magnitude ``(B, F, T)`` → wav ``(B, T_wav)``."""
        n_iter = self.config.griffin_lim_iters if n_iter is None else n_iter
        momentum = self.config.griffin_lim_momentum if momentum is None else momentum
        length = (magnitude.shape[-1] - 1) * self.config.hop_length
        min_frames = self.config.n_fft // self.config.hop_length + 2  # the reflect padding needs this many
        if magnitude.shape[-1] < min_frames:  # very short mels: pad with silence, cut afterwards
            padded = nn.functional.pad(magnitude, (0, min_frames - magnitude.shape[-1]))
            return self.reconstruct(padded, n_iter, momentum, seed)[..., :length]
        generator = torch.Generator(device="cpu").manual_seed(seed)
        phase = torch.rand(magnitude.shape, generator=generator).to(magnitude.device) * (2 * torch.pi)
        angles = torch.polar(torch.ones_like(magnitude), phase)
        previous = torch.zeros_like(angles)
        alpha = momentum / (1.0 + momentum)
        for _ in range(n_iter):
            rebuilt = self.stft(self.stft.inverse(magnitude * angles, length=length))
            angles = rebuilt - alpha * previous
            angles = angles / (angles.abs() + 1e-16)
            previous = rebuilt
        return self.stft.inverse(magnitude * angles, length=length)

    @torch.no_grad()
    def forward(self, mel: torch.Tensor, n_iter: int | None = None) -> torch.Tensor:
        squeeze = mel.dim() == 2
        if squeeze:
            mel = mel.unsqueeze(0)
        magnitude = self.mel_to_magnitude(mel) ** self.config.griffin_lim_power
        wav = self.reconstruct(magnitude, n_iter=n_iter)
        if wav.shape[-1] == 0:
            return wav.squeeze(0) if squeeze else wav
        peak = wav.abs().amax(dim=-1, keepdim=True).clamp(min=1e-8)
        wav = wav / peak * torch.clamp(peak, max=0.95)
        return wav.squeeze(0) if squeeze else wav
