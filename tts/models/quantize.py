"""Int8 weights for fast CPU inference, on PyTorch's integer matrix products.

At batch 1 the autoregressive decoder is bound by reading its LSTM and projection weights
from memory every step; storing them as int8 reads 4x fewer bytes. Each weight row has its own
scale (symmetric, 127 levels); activations are quantized at every call (dynamic quantization),
the product runs in int8 with int32 sums, and the result is rescaled to float.
``torch.ao.quantization.quantize_dynamic``, which did this before, is deprecated and to be
removed; torchao's eager int8 modules, its replacement, measured 30-60x slower at batch 1 on the
CPU without ``torch.compile`` (README, "What to expect").

Not every CPU sums int8 products exactly. Without VNNI or AMX, x86 multiplies bytes with
``pmaddubsw``, which adds pairs of u8×s8 products in saturating 16-bit arithmetic: full-range
activations overflow it, and oneDNN's kernels came out 10-17 % wrong on such a CPU. So the kernels
are probed once, with the inputs that overflow most (:func:`int8_kernels`), and only exact ones are
used: 7-bit activations where 8-bit ones saturate (the reason FBGEMM uses ``reduce_range``), a
float product of the int8 weights where nothing is exact.
"""

from __future__ import annotations

import copy
import functools
import logging
from dataclasses import dataclass
from typing import TypeVar

import torch
from torch import nn

from tts.devices import cpu_int8_instructions
from tts.models.recurrent import lstm_bias, lstm_update

M = TypeVar("M", bound=nn.Module)
log = logging.getLogger(__name__)


def quantize_rows(matrix: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-row int8: ``(N, K)`` float → (``(N, K)`` int8, ``(N, 1)`` float scale) with
    ``matrix ≈ int8 · scale``. (Few ops: at batch 1 their count, not arithmetic, sets the cost.)"""
    top = torch.linalg.vector_norm(matrix, float("inf"), dim=1, keepdim=True).clamp_(min=1e-8)
    return torch.round(matrix * (127.0 / top)).to(torch.int8), top / 127.0


def quantized_linear(activations: torch.Tensor, zero_point: int, packed: torch.Tensor, weight_scale: torch.Tensor,
                     weight_zero_points: torch.Tensor) -> torch.Tensor:
    """oneDNN's quantized linear: uint8 ``(N, K)`` activations (``value = a - zero_point``) times
    the prepacked int8 weight ``(out, K)`` with per-row ``weight_scale`` (its zero points
    ``weight_zero_points``, all 0) → ``(N, out)`` float32."""
    return torch.ops.onednn.qlinear_pointwise(activations, 1.0, zero_point, packed, weight_scale, weight_zero_points,
                                              None, 1.0, 0, torch.float32, "none", [], "")


@dataclass(frozen=True)
class Int8Kernels:
    """What this CPU's int8 products compute exactly (:func:`int8_kernels`).

    ``per_row_exact``: ``torch._int_mm`` (int8 × int8 → int32) at 1 to :attr:`Int8Product.FEW_ROWS`
    rows and beyond. ``activation_levels``: the widest uint8 activation range (255, or 127: 7 bits)
    for which oneDNN's quantized linear is exact; 0 for none. ``instructions``: the CPU's int8
    instructions (VNNI, AMX), for the records."""

    per_row_exact: bool
    activation_levels: int
    instructions: tuple[str, ...]

    @property
    def fast(self) -> bool:
        """Whether int8 products can beat float ones here: the CPU multiplies bytes into int32
        sums (VNNI or AMX), and the kernels are exact at full range."""
        return bool(self.instructions) and self.per_row_exact and self.activation_levels == 255

    def describe(self) -> str:
        products = ("per-row int8 products" if self.per_row_exact else "no exact per-row int8 product") + (
            f", {self.activation_levels}-level activations in oneDNN's quantized linear"
            if self.activation_levels else ", int8 weights multiplied in float")
        return f"{products} ({' '.join(self.instructions) or 'no VNNI or AMX'})"


def _sign_patterns(k: int) -> torch.Tensor:
    """``(4, k)`` int8 rows at ±127: all +, all −, alternating, alternating in pairs. Between any
    two of them some pair of adjacent products has the largest sum of either sign, which is what
    overflows 16-bit pair sums (with oneDNN's +128 shift of signed activations too)."""
    index = torch.arange(k)
    signs = torch.stack([torch.ones(k), -torch.ones(k), 1 - 2 * (index % 2), 1 - 2 * (index // 2 % 2)])
    return (127 * signs).to(torch.int8)


@functools.cache
def int8_kernels() -> Int8Kernels:
    """Probe this CPU's int8 kernels once, against exact integer sums: ``torch._int_mm`` with ±127
    at 1, 4 and 16 rows, and oneDNN's quantized linear with uint8 activations at 255 and at 127."""
    k = 64
    patterns = _sign_patterns(k)
    weight = patterns.repeat(6, 1)  # (24, k): oneDNN may block output channels by 8 or 16
    exact_weight = weight.long().t()
    per_row_exact = True
    for rows in (1, Int8Product.FEW_ROWS, 16):
        for pattern in patterns:
            activations = pattern.expand(rows, k).contiguous()
            per_row_exact &= torch.equal(torch._int_mm(activations, weight.t()).long(),
                                         activations.long() @ exact_weight)
    packed = torch.ops.onednn.qlinear_prepack(weight, None)
    levels = 0
    for candidate in (255, 127):
        activations = torch.full((16, k), candidate, dtype=torch.uint8)
        out = quantized_linear(activations, 0, packed, torch.ones(weight.shape[0]),
                               torch.zeros(weight.shape[0], dtype=torch.int64))
        if torch.equal(out.double(), (activations.long() @ exact_weight).double()):
            levels = candidate
            break
    return Int8Kernels(per_row_exact, levels, tuple(cpu_int8_instructions()))


class Int8Product(nn.Module):
    """``x ↦ x Wᵀ (+ b)`` with ``W`` ``(out, in)`` stored as int8 and ``x`` ``(..., in)`` quantized at
    each call → ``(..., out)`` float32, on whichever kernel :func:`int8_kernels` found exact.

    Each activation row gets its own symmetric scale. Up to :attr:`FEW_ROWS` rows (autoregressive
    decoding at batch 1-4) ``torch._int_mm`` multiplies; more rows (or where ``_int_mm`` is not
    exact) go through oneDNN's quantized linear on the weight prepacked for it, 1.5-2x faster than
    ``_int_mm`` at 16 rows, with 255 activation levels or 127 where 8-bit ones saturate; where
    neither is exact, the int8 weights are multiplied in float.
    """

    weight_int8: torch.Tensor
    weight_scale: torch.Tensor
    bias: torch.Tensor | None

    FEW_ROWS = 4

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None):
        super().__init__()
        quantized, scale = quantize_rows(weight.detach().float())
        self.register_buffer("weight_int8", quantized)
        self.register_buffer("weight_scale", scale.squeeze(1))
        self.register_buffer("bias", None if bias is None else bias.detach().float().clone())
        self.packed = torch.ops.onednn.qlinear_prepack(quantized, None)
        self.zero_points = torch.zeros(quantized.shape[0], dtype=torch.int64)
        self.kernels = int8_kernels()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1]).float()
        if rows.shape[0] <= self.FEW_ROWS and self.kernels.per_row_exact:
            out = self._per_row(rows)
        elif self.kernels.activation_levels:
            out = self._quantized_linear(rows, self.kernels.activation_levels)
        else:
            out = nn.functional.linear(rows, self.weight_int8.float() * self.weight_scale[:, None], self.bias)
        return out.reshape(*x.shape[:-1], out.shape[-1])

    def _per_row(self, rows: torch.Tensor) -> torch.Tensor:
        quantized, scale = quantize_rows(rows)
        return self._rescaled(torch._int_mm(quantized, self.weight_int8.t()).float(), scale * self.weight_scale)

    def _quantized_linear(self, rows: torch.Tensor, levels: int) -> torch.Tensor:
        """Per-row symmetric activations offset to uint8 (``levels`` 255: ±127 around 128; 127:
        ±63 around 64), so that a quiet row beside a loud one keeps its precision."""
        half = levels // 2
        top = torch.linalg.vector_norm(rows, float("inf"), dim=1, keepdim=True).clamp_(min=1e-8)
        quantized = (torch.round(rows * (half / top)) + (half + 1)).to(torch.uint8)
        products = quantized_linear(quantized, half + 1, self.packed, self.weight_scale, self.zero_points)
        return self._rescaled(products, top / half)

    def _rescaled(self, products: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        """``products · scale (+ bias)``: integer products ``(N, out)`` back to float."""
        return products * scale if self.bias is None else torch.addcmul(self.bias, products, scale)


class Int8LSTMCell(nn.Module):
    """``nn.LSTMCell`` with int8 weights: ``(x (B, I), (h, c) (B, H) each) → (h, c)``. The input and
    hidden weights are one int8 matrix ``(4H, I + H)`` read by one product over ``[x, h]``."""

    def __init__(self, cell: nn.LSTMCell):
        super().__init__()
        self.product = Int8Product(torch.cat([cell.weight_ih, cell.weight_hh], dim=1), lstm_bias(cell))
        self.hidden_size = cell.hidden_size

    def forward(self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor] | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        return lstm_update(self.product(torch.cat([x, state[0]], dim=1)), state[1])


def quantize_int8(model: M) -> M:
    """A CPU copy of ``model`` in eval mode with every ``nn.Linear`` and ``nn.LSTMCell`` on int8
    weights (with a warning where this CPU's int8 products are slower or less exact than usual)."""
    kernels = int8_kernels()
    if not kernels.fast:
        log.warning("int8 on this CPU: %s; expect it slower than float32 (docs/speed.md)", kernels.describe())
    model = copy.deepcopy(model).cpu().eval()
    for parent in list(model.modules()):
        for name, child in parent.named_children():
            if isinstance(child, nn.Linear):
                setattr(parent, name, Int8Product(child.weight, child.bias))
            elif isinstance(child, nn.LSTMCell):
                setattr(parent, name, Int8LSTMCell(child))
    return model
