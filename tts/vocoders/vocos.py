"""Vocos (Siuzdak 2023, "Vocos: Closing the gap between time-domain and Fourier-based neural
vocoders for high-quality audio synthesis"): a generator whose network runs at the frame rate.

log-mel ``(B, n_mels, T)`` → a 7-tap convolution and layer norm → ConvNeXt blocks (depthwise
convolution, layer norm, pointwise MLP with GELU, layer scale, residual) → layer norm → a linear
head giving, per frame, the log magnitude and the phase of every one of the ``n_fft / 2 + 1``
STFT bins → the inverse STFT → waveform ``(B, 1, T · hop)``. HiFi-GAN spends most of its
operations at the sample rate, after upsampling; Vocos spends them on ``T`` frames, which is what
makes it cheap on a CPU (to train as well as to run).

The inverse STFT is one transposed convolution whose kernels are the windowed inverse-DFT basis
(it overlap-adds as it goes), divided by the overlap-added squared window: the same numbers as
``torch.istft`` with ``center=True``, written with operations an ONNX export keeps.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from tts.config import AudioConfig, VocosConfig
from tts.errors import TTSError
from tts.vocoders.base import NeuralVocoder

#: the largest magnitude the head may give a bin (Vocos clips ``exp`` of its output there)
MAX_MAGNITUDE = 100.0


class InverseSTFT(nn.Module):
    """``forward(real (B, F, T), imag (B, F, T))`` with ``F = n_fft / 2 + 1`` → waveform ``(B, T · hop)``:
    frame ``t`` centred on sample ``t · hop`` (``center=True``), a periodic Hann window of
    ``win_length`` zero-padded to ``n_fft``, as :func:`torch.stft` makes spectra."""

    basis: torch.Tensor
    window_square: torch.Tensor

    def __init__(self, n_fft: int, hop_length: int, win_length: int):
        super().__init__()
        if hop_length > n_fft // 2:
            raise TTSError(f"the inverse STFT needs hop_length ≤ n_fft / 2 (got {hop_length} and {n_fft})")
        self.n_fft, self.hop = n_fft, hop_length
        window = torch.zeros(n_fft, dtype=torch.float64)
        start = (n_fft - win_length) // 2
        window[start:start + win_length] = torch.hann_window(win_length, dtype=torch.float64)
        bins = torch.arange(n_fft // 2 + 1, dtype=torch.float64)[:, None]
        angle = 2 * math.pi * bins * torch.arange(n_fft, dtype=torch.float64)[None] / n_fft
        weight = torch.full_like(bins, 2.0)
        weight[0] = weight[-1] = 1.0  # DC and Nyquist appear once in the full spectrum
        basis = torch.cat([weight * torch.cos(angle), -weight * torch.sin(angle)]) * window / n_fft
        self.register_buffer("basis", basis.float()[:, None], persistent=False)  # (2F, 1, n_fft)
        self.register_buffer("window_square", window.pow(2).float()[None, None], persistent=False)

    def forward(self, real: torch.Tensor, imag: torch.Tensor) -> torch.Tensor:
        frames = real.shape[-1]
        wav = F.conv_transpose1d(torch.cat([real, imag], dim=1), self.basis, stride=self.hop)
        envelope = F.conv_transpose1d(torch.ones_like(real[:1, :1]), self.window_square, stride=self.hop)
        start = self.n_fft // 2
        wav = wav[:, 0, start:start + frames * self.hop]
        return wav / envelope[:, 0, start:start + frames * self.hop].clamp(min=1e-11)


class ConvNeXtBlock(nn.Module):
    """``x + γ · MLP(LayerNorm(depthwise_conv(x)))`` on ``(B, dim, T)``."""

    def __init__(self, dim: int, hidden: int, kernel: int, layer_scale: float):
        super().__init__()
        self.depthwise = nn.Conv1d(dim, dim, kernel, padding=kernel // 2, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.expand = nn.Linear(dim, hidden)
        self.project = nn.Linear(hidden, dim)
        self.gamma = nn.Parameter(torch.full((dim,), layer_scale))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm(self.depthwise(x).transpose(1, 2))
        y = self.gamma * self.project(F.gelu(self.expand(y)))
        return x + y.transpose(1, 2)


class VocosGenerator(NeuralVocoder):
    """The Vocos generator (a :class:`NeuralVocoder`: :meth:`generate` is the raw network)."""

    def __init__(self, config: VocosConfig, audio: AudioConfig):
        super().__init__(audio)
        if config.kernel % 2 == 0:
            raise TTSError(f"vocoder.vocos.kernel must be odd (got {config.kernel})")
        self.config = config
        self.embed = nn.Conv1d(audio.n_mels, config.dim, 7, padding=3)
        self.norm = nn.LayerNorm(config.dim, eps=1e-6)
        self.blocks = nn.ModuleList(ConvNeXtBlock(config.dim, config.hidden, config.kernel, 1.0 / config.layers)
                                    for _ in range(config.layers))
        self.final_norm = nn.LayerNorm(config.dim, eps=1e-6)
        self.n_bins = audio.n_fft // 2 + 1
        self.head = nn.Linear(config.dim, 2 * self.n_bins)
        self.istft = InverseSTFT(audio.n_fft, audio.hop_length, audio.win_length)
        for module in self.modules():
            if isinstance(module, (nn.Conv1d, nn.Linear)) and module.bias is not None:
                nn.init.trunc_normal_(module.weight, std=0.02)
                nn.init.zeros_(module.bias)

    def spectrum(self, mel: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """log-mel ``(B, n_mels, T)`` → the head's STFT magnitude and phase, each ``(B, n_fft / 2 + 1, T)``,
        in the weights' precision whatever the autocast."""
        x = self.norm(self.embed(mel).transpose(1, 2)).transpose(1, 2)
        for block in self.blocks:
            x = block(x)
        head = self.head(self.final_norm(x.transpose(1, 2))).transpose(1, 2)
        with torch.autocast(mel.device.type, enabled=False):
            log_magnitude, phase = head.to(self.istft.basis.dtype).split(self.n_bins, dim=1)
            return torch.exp(log_magnitude).clamp(max=MAX_MAGNITUDE), phase

    def generate(self, mel: torch.Tensor) -> torch.Tensor:
        """log-mel ``(B, n_mels, T)`` → waveform ``(B, 1, T · hop)``: :meth:`spectrum` through the inverse STFT."""
        magnitude, phase = self.spectrum(mel)
        with torch.autocast(mel.device.type, enabled=False):
            wav = self.istft(magnitude * torch.cos(phase), magnitude * torch.sin(phase))
        return wav.unsqueeze(1)

    def grown_weights(self, weights: dict[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], list[str]]:
        """A narrower student's ``weights`` widened to this generator's ``dim`` and ``hidden`` without
        changing its waveforms (Net2Net, Chen et al. 2016).

        ``hidden``: the old units keep their weights, the new ones keep this generator's fresh input
        weights and start with zero outgoing weights (into ``project``), so they learn from the
        first update. ``dim`` (only to a whole multiple ``k`` of the old one): every channel of the
        residual stream is carried by ``k`` copies, whose producers (the first convolution, each
        block's ``project``, the depthwise convolutions, layer norms and layer scales) are copied;
        a layer norm over copies gives what it gave over the originals (the same mean and
        variance). Each consumer's weight from an old channel (``expand``, ``head``) is split among
        its copies with random shares that sum to one, so the copies' gradients differ from the
        first update on (equal shares would keep them identical under Adam)."""
        c, layers = self.config, self.config.layers
        old_embed, old_expand = weights.get("embed.weight"), weights.get("blocks.0.expand.weight")
        if old_embed is None or old_expand is None or any(f"blocks.{i}.expand.weight" not in weights
                                                          for i in range(layers)):
            return weights, []
        d, n = old_embed.shape[0], old_expand.shape[0]
        if (d, n) == (c.dim, c.hidden) or c.dim < d or c.hidden < n or c.dim % d or old_expand.shape[1] != d:
            return weights, []
        copies = torch.arange(c.dim) % d                    # new channel j carries old channel j mod d
        shares = torch.Generator().manual_seed(0)

        def split(weight: torch.Tensor) -> torch.Tensor:
            """A consumer's ``(rows, d)`` → ``(rows, dim)``: each old column spread over its copies."""
            weight = weight.float()
            if c.dim == d:
                return weight
            share = torch.rand(weight.shape[0], c.dim, generator=shares) + 0.5
            total = weight.new_zeros(weight.shape[0], d).index_add_(1, copies, share)
            return weight[:, copies] * share / total[:, copies]

        own = self.state_dict()
        grown = dict(weights)
        for name in ("embed.weight", "embed.bias", "norm.weight", "norm.bias", "final_norm.weight", "final_norm.bias"):
            grown[name] = weights[name][copies]
        grown["head.weight"] = split(weights["head.weight"])
        for i in range(layers):
            prefix = f"blocks.{i}."
            for name in ("depthwise.weight", "depthwise.bias", "norm.weight", "norm.bias", "gamma", "project.bias"):
                grown[prefix + name] = weights[prefix + name][copies]
            expand, bias = own[prefix + "expand.weight"].clone(), own[prefix + "expand.bias"].clone()  # (hidden, dim)
            expand[:n] = split(weights[prefix + "expand.weight"])
            bias[:n] = weights[prefix + "expand.bias"]
            project = expand.new_zeros(c.dim, c.hidden)                                                # (dim, hidden)
            project[:, :n] = weights[prefix + "project.weight"][copies]
            grown[prefix + "expand.weight"], grown[prefix + "expand.bias"] = expand, bias
            grown[prefix + "project.weight"] = project
        grown_what = []
        if c.dim > d:
            grown_what.append(f"residual stream {d} → {c.dim} channels (each old one in {c.dim // d} copies)")
        if c.hidden > n:
            grown_what.append(f"ConvNeXt MLPs {n} → {c.hidden} hidden units (new units' outgoing weights zero)")
        return grown, grown_what

    @property
    def context_frames(self) -> int:
        """The receptive field's radius in mel frames: the first convolution's 3, each block's
        ``kernel // 2``, and the frames whose windows overlap a sample's (``n_fft / 2 / hop``)."""
        c = self.config
        return 3 + c.layers * (c.kernel // 2) + math.ceil(self.audio.n_fft / (2 * self.audio.hop_length))
