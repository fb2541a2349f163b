"""Int8 weights for fast CPU inference, on PyTorch's integer matrix product (``torch._int_mm``).

At batch 1 the autoregressive decoder is bound by reading its LSTM and projection weights
from memory every step; storing them as int8 reads 4x fewer bytes. Each weight row has its own
scale (symmetric, 127 levels); each activation row is quantized the same way at every call
(dynamic quantization), the product runs in int8 with int32 sums, and the result is rescaled to
float. ``torch.ao.quantization.quantize_dynamic``, which did this before, is deprecated and to be
removed; torchao's eager int8 modules, its replacement, measured 30-60x slower at batch 1 on the
CPU without ``torch.compile`` (README, "What to expect").
"""

from __future__ import annotations

import copy
from typing import TypeVar

import torch
from torch import nn

from tts.models.recurrent import lstm_bias, lstm_update

M = TypeVar("M", bound=nn.Module)


def quantize_rows(matrix: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-row int8: ``(N, K)`` float → (``(N, K)`` int8, ``(N, 1)`` float scale) with
    ``matrix ≈ int8 · scale``. (Few ops: at batch 1 their count, not arithmetic, sets the cost.)"""
    top = torch.linalg.vector_norm(matrix, float("inf"), dim=1, keepdim=True).clamp_(min=1e-8)
    return torch.round(matrix * (127.0 / top)).to(torch.int8), top / 127.0


class Int8Product(nn.Module):
    """``x ↦ x Wᵀ (+ b)`` with ``W`` ``(out, in)`` stored as int8 and ``x`` ``(..., in)`` quantized at
    each call → ``(..., out)`` float32.

    Up to :attr:`FEW_ROWS` rows (autoregressive decoding at batch 1-4): each row gets its own int8
    scale and ``torch._int_mm`` multiplies. More rows: one asymmetric uint8 scale for all of them
    and oneDNN's quantized linear on the weight prepacked for it, 1.5-2x faster than ``_int_mm``
    at 16 rows.
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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1]).float()
        if rows.shape[0] <= self.FEW_ROWS:
            quantized, scale = quantize_rows(rows)
            products, scale = torch._int_mm(quantized, self.weight_int8.t()).float(), scale * self.weight_scale
            out = products * scale if self.bias is None else torch.addcmul(self.bias, products, scale)
        else:
            low, high = (float(v) for v in torch.aminmax(rows))
            step = max(max(high, 0.0) - min(low, 0.0), 1e-8) / 255.0
            zero_point = int(round(-min(low, 0.0) / step))
            quantized = torch.clamp(torch.round(rows / step) + zero_point, 0, 255).to(torch.uint8)
            out = torch.ops.onednn.qlinear_pointwise(quantized, step, zero_point, self.packed, self.weight_scale,
                                                     self.zero_points, self.bias, 1.0, 0, torch.float32,
                                                     "none", [], "")
        return out.reshape(*x.shape[:-1], out.shape[-1])


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
    """A CPU copy of ``model`` in eval mode with every ``nn.Linear`` and ``nn.LSTMCell`` on int8 weights."""
    model = copy.deepcopy(model).cpu().eval()
    for parent in list(model.modules()):
        for name, child in parent.named_children():
            if isinstance(child, nn.Linear):
                setattr(parent, name, Int8Product(child.weight, child.bias))
            elif isinstance(child, nn.LSTMCell):
                setattr(parent, name, Int8LSTMCell(child))
    return model
