"""Layers shared by the acoustic models: masked conv blocks, prenet, postnet, zoneout."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Literal, overload

import torch
from torch import nn
from torch.nn import functional as F

from tts.config.model import PostnetConfig

#: the gain names of ``nn.init.calculate_gain`` that Xavier initialization uses here
Gain = Literal["linear", "tanh", "relu", "sigmoid"]


def xavier_uniform(roles: list[tuple[nn.Module | torch.Tensor, Gain]]) -> None:
    """NVIDIA/tacotron2's ``LinearNorm`` / ``ConvNorm`` initialization: Xavier-uniform weights, each
    layer with the gain of the non-linearity it feeds; biases keep PyTorch's initialization."""
    with torch.no_grad():
        for module, gain in roles:
            assert isinstance(module, nn.Module)
            weight = module.weight
            assert isinstance(weight, torch.Tensor)
            nn.init.xavier_uniform_(weight, gain=nn.init.calculate_gain(gain))


def sequence_mask(lengths: torch.Tensor, max_len: int | None = None) -> torch.Tensor:
    """``(B,) → (B, T)`` bool, True on positions ``< length``."""
    max_len = int(lengths.max()) if max_len is None else max_len
    return torch.arange(max_len, device=lengths.device)[None] < lengths[:, None]


def padded_ids(sequences: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Token id lists → ids ``(B, T_text)`` zero-padded (the padding id) and lengths ``(B,)``."""
    lengths = torch.tensor([len(ids) for ids in sequences])
    ids = torch.zeros(len(sequences), int(lengths.max()), dtype=torch.long)
    for i, item in enumerate(sequences):
        ids[i, : len(item)] = torch.tensor(item)
    return ids, lengths


def sliding_windows(x: torch.Tensor, size: int) -> torch.Tensor:
    """Every window of ``size`` consecutive values of the last axis: ``(B, T + size − 1) → (B, T, size)``.
    ``unfold`` in PyTorch (the fastest); in an ONNX export, where unfold over a length that varies
    has no operator, the same windows stacked from ``size`` shifted slices."""
    if not torch.onnx.is_in_onnx_export():
        return x.unfold(-1, size, 1)
    steps = x.shape[-1] - size + 1
    return torch.stack([x[..., k: k + steps] for k in range(size)], dim=-1)


@overload
def decoder_steps(n_frames: int, r: int) -> int: ...
@overload
def decoder_steps(n_frames: torch.Tensor, r: int) -> torch.Tensor: ...
def decoder_steps(n_frames: int | torch.Tensor, r: int) -> int | torch.Tensor:
    """Decoder steps that produce ``n_frames`` mel frames at ``r`` frames per step (the last step may
    hold padding): ``ceil(n_frames / r)``, for an int or a tensor of lengths."""
    return -(-n_frames // r)


class ConvBlock(nn.Module):
    """Conv1d → BatchNorm → activation → dropout over ``(B, C, T)``; padded steps are zeroed
    after the block, so an item's output does not depend on how much padding follows it."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, dropout: float,
                 activation: str = "relu"):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=(kernel_size - 1) // 2)
        self.norm = nn.BatchNorm1d(out_channels)
        self.activation = {"relu": nn.ReLU(), "tanh": nn.Tanh(), "none": nn.Identity()}[activation]
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """x ``(B, C_in, T)``, mask ``(B, T)`` (None: padded steps are computed like real ones) →
        ``(B, C_out, T)``."""
        y = self.dropout(self.activation(self.norm(self.conv(x))))
        return y if mask is None else y * mask.unsqueeze(1)


class Prenet(nn.Module):
    """Fully connected ReLU layers with dropout: on in training, and in evaluation while
    :func:`prenet_noise` gives it a generator (decoding with ``inference.prenet_dropout``)."""

    def __init__(self, in_dim: int, dims: list[int], dropout: float, bias: bool = True):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b, bias=bias) for a, b in zip([in_dim] + dims[:-1], dims))
        self.dropout = dropout
        self.noise: torch.Generator | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(..., in_dim) → (..., dims[-1])``."""
        for layer in self.layers:
            x = F.relu(layer(x))
            if self.training:
                x = F.dropout(x, p=self.dropout, training=True)
            elif self.noise is not None and self.dropout > 0:
                keep = torch.rand(x.shape, generator=self.noise, device=x.device) >= self.dropout
                x = x * keep / (1.0 - self.dropout)
        return x


@contextmanager
def prenet_noise(model: nn.Module, seed: int, device: torch.device) -> Iterator[int]:
    """While the block runs, every :class:`Prenet` of ``model`` keeps its dropout on in evaluation,
    its masks drawn from one generator on ``device`` seeded with ``seed`` (the same texts decoded
    in the same batches give the same audio); yields how many prenets it reached."""
    prenets = [module for module in model.modules() if isinstance(module, Prenet)]
    generator = torch.Generator(device=device).manual_seed(seed)
    for prenet in prenets:
        prenet.noise = generator
    try:
        yield len(prenets)
    finally:
        for prenet in prenets:
            prenet.noise = None


class Postnet(nn.Module):
    """N conv blocks (tanh except the last) predicting a residual for the mel: ``(B, n_mels, T)``."""

    def __init__(self, n_mels: int, config: PostnetConfig):
        super().__init__()
        layers = config.layers
        #: mel frames on each side that reach an output frame (for refining a mel in chunks)
        self.context_frames = layers * (config.kernel_size // 2)
        dims = [n_mels] + [config.channels] * (layers - 1) + [n_mels]
        self.blocks = nn.ModuleList(
            ConvBlock(a, b, config.kernel_size, config.dropout, "tanh" if i < layers - 1 else "none")
            for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])))

    def xavier_initialization(self) -> None:
        """NVIDIA/tacotron2's: tanh gains, the last (linear) block's gain 1."""
        last = len(self.blocks) - 1
        xavier_uniform([(block.conv, "linear" if i == last else "tanh") for i, block in enumerate(self.blocks)])

    def forward(self, mel: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """mel ``(B, n_mels, T)``; mask ``(B, T)``, or None to run over padded frames too."""
        x = mel if mask is None else mel * mask.unsqueeze(1)
        for block in self.blocks:
            x = block(x, mask)
        return x


def zoneout(new: tuple[torch.Tensor, torch.Tensor], old: tuple[torch.Tensor, torch.Tensor], p: float,
            training: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Zoneout (Krueger et al. 2017) on an LSTM state ``(h, c)``: in training each unit keeps its
    previous value with probability ``p``; at inference the expected mix is used."""
    if p <= 0:
        return new
    if training:
        return tuple(torch.where(torch.rand_like(n) < p, o, n) for n, o in zip(new, old))  # type: ignore[return-value]
    return tuple(p * o + (1 - p) * n for n, o in zip(new, old))  # type: ignore[return-value]
