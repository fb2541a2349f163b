"""LSTM pieces for teacher-forced decoder loops: step products with one weight gradient per loop.

Autograd gives a weight used at every step of a loop one gradient matrix per step and sums
them: for a Tacotron2 decoder at NVIDIA's sizes that is millions of floats written, read back
and added at each of ~600 steps, a memory-bound cost several times the arithmetic. A weight
shared by the steps (:class:`SharedWeight`) instead records each step's input and output
gradient during the backward pass and forms its gradient once, after the last step's backward,
as one matrix product over all steps and items, ``∂L/∂W = Σ_t g_tᵀ x_t = Gᵀ X``. The values are
the same (up to summation order); only the memory traffic changes.
"""

from __future__ import annotations

from typing import Callable

import torch
from torch.nn import functional as F


class _Anchor(torch.autograd.Function):
    """A scalar that every step's product depends on; its backward runs after all of theirs
    (the autograd engine waits for every consumer) and turns their records into ``∂L/∂W``."""

    @staticmethod
    def forward(ctx, weight: torch.Tensor, shared: "SharedWeight") -> torch.Tensor:  # type: ignore[override]
        ctx.shared = shared
        return weight.new_zeros(())

    @staticmethod
    def backward(ctx, _: torch.Tensor) -> tuple[torch.Tensor | None, None]:  # type: ignore[override]
        return ctx.shared.gradient(), None


class _StepProduct(torch.autograd.Function):
    """``x W_cᵀ`` for one step (``W_c``: the weight in its compute dtype); the backward returns
    ``∂L/∂x`` and records ``(x, ∂L/∂y)`` for the weight's gradient."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, anchor: torch.Tensor, shared: "SharedWeight") -> torch.Tensor:  # type: ignore[override]
        ctx.shared = shared
        ctx.save_for_backward(x)
        return x.to(shared.compute.dtype) @ shared.compute.t()

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None]:  # type: ignore[override]
        (x,) = ctx.saved_tensors
        shared = ctx.shared
        grad = grad.to(shared.compute.dtype)
        shared.record(x, grad)
        return (grad @ shared.compute).to(x.dtype), grad.new_zeros(()), None


class SharedWeight:
    """A weight ``(out, in)`` used at every step of one loop: ``shared(x)`` is ``x Wᵀ`` ``(B, out)``
    for ``x`` ``(B, in)``. Create one per forward pass (it keeps that pass's records). Under
    autocast the weight is cast once, to the autocast dtype of its device."""

    def __init__(self, weight: torch.Tensor):
        self.weight = weight
        device = weight.device.type
        dtype = torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else weight.dtype
        self.compute = weight.detach().to(dtype).contiguous()
        self.inputs: list[torch.Tensor] = []
        self.grads: list[torch.Tensor] = []
        self.anchor = _Anchor.apply(weight, self)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return _StepProduct.apply(x, self.anchor, self)

    def record(self, x: torch.Tensor, grad: torch.Tensor) -> None:
        self.inputs.append(x.to(self.compute.dtype))
        self.grads.append(grad)

    def gradient(self) -> torch.Tensor | None:
        """``Σ_t g_tᵀ x_t`` over the recorded steps, in the weight's dtype (None when none was recorded)."""
        if not self.grads:
            return None
        gradient = torch.cat(self.grads).t() @ torch.cat(self.inputs)
        self.inputs, self.grads = [], []
        return gradient.to(self.weight.dtype)


def step_product(weight: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    """``x ↦ x Wᵀ`` for every step of a loop: a :class:`SharedWeight` when the weight's gradient
    will be needed, else a plain product."""
    if torch.is_grad_enabled() and weight.requires_grad:
        return SharedWeight(weight)
    return lambda x: F.linear(x, weight)


def lstm_update(gates: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``nn.LSTMCell``'s update from its summed pre-activations ``(B, 4H)`` (input, forget, cell,
    output, in PyTorch's order) and the previous cell ``c`` ``(B, H)`` → ``(h, c)``."""
    input_gate, forget_gate, cell_gate, output_gate = gates.chunk(4, dim=1)
    c = torch.sigmoid(forget_gate) * c + torch.sigmoid(input_gate) * torch.tanh(cell_gate)
    return torch.sigmoid(output_gate) * torch.tanh(c), c
