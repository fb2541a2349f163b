"""LSTM pieces for teacher-forced decoder loops: step products with one weight gradient per loop.

Autograd gives a weight used at every step of a loop one gradient matrix per step and sums
them: for a Tacotron2 decoder at NVIDIA's sizes that is millions of floats written, read back
and added at each of ~600 steps, a memory-bound cost several times the arithmetic. A weight
shared by the steps (:class:`SharedWeight`) instead records each step's input and output
gradient during the backward pass and forms its gradient once, after the last step's backward,
as one matrix product over all steps and items, ``∂L/∂W = Σ_t g_tᵀ x_t = Gᵀ X``. The values are
the same (up to summation order); only the memory traffic changes.

A loop's products also use a fixed weight at every step, so on the CPU the weight is reordered
once into oneDNN's blocked layout (:func:`fixed_weight_product`): PyTorch's default GEMM re-packs
the weight at every call, which makes a batch-1…16 product 2–4× slower than the memory allows.
The same holds for bfloat16 weights (training and decoding under bf16 autocast) on CPUs where
oneDNN computes bfloat16 itself (AVX-512 or AMX); elsewhere they take ``F.linear``.
"""

from __future__ import annotations

import functools
from typing import Callable

import torch
from torch import nn
from torch.nn import functional as F


@functools.cache
def packed_products_work(dtype: torch.dtype = torch.float32) -> bool:
    """Whether this PyTorch build has oneDNN's private packed-weight linear ops
    (``torch.ops.mkldnn._reorder_linear_weight`` / ``_linear_pointwise``) and they compute
    ``F.linear``'s product in ``dtype`` (float32, or bfloat16 where oneDNN computes it on this CPU):
    checked once per dtype, on a small product, so that a build or CPU without them (or a build that
    changed them) falls back to ``F.linear`` instead of failing."""
    if not torch.backends.mkldnn.is_available() or dtype not in (torch.float32, torch.bfloat16):
        return False
    generator = torch.Generator().manual_seed(0)
    weight, x = torch.randn(24, 40, generator=generator).to(dtype), torch.randn(3, 40, generator=generator).to(dtype)
    try:
        if dtype == torch.bfloat16 and not torch.ops.mkldnn._is_mkldnn_bf16_supported():
            return False
        packed = torch.ops.mkldnn._reorder_linear_weight(weight, 3)
        product = torch.ops.mkldnn._linear_pointwise(x, packed, None, "none", [], "")
    except (AttributeError, RuntimeError, TypeError):
        return False
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    return product.shape == (3, 24) and product.dtype == dtype and bool(
        torch.allclose(product.float(), F.linear(x, weight).float(), rtol=tolerance, atol=tolerance))


def fixed_weight_product(weight: torch.Tensor, batch_size: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """``x ↦ x Wᵀ`` ``(B, in) → (B, out)`` for a weight ``(out, in)`` that stays fixed across many
    calls with about ``batch_size`` rows: on the CPU in float32 or bfloat16, where
    :func:`packed_products_work` for that dtype, the weight reordered once for oneDNN (any B works;
    ``batch_size`` tunes the layout); elsewhere ``F.linear``. ``x`` has the weight's dtype. No autograd."""
    weight = weight.detach()
    if weight.device.type == "cpu" and packed_products_work(weight.dtype):
        packed = torch.ops.mkldnn._reorder_linear_weight(weight, batch_size)
        return lambda x: torch.ops.mkldnn._linear_pointwise(x, packed, None, "none", [], "")
    return lambda x: F.linear(x, weight)


def compute_dtype(weight: torch.Tensor) -> torch.dtype:
    """The dtype a loop's products with ``weight`` run in: the autocast dtype of its device when
    autocast is on there (cast once per loop, not per step), else the weight's own."""
    device = weight.device.type
    return torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else weight.dtype


class _Anchor(torch.autograd.Function):
    """A scalar that every step's product depends on; its backward runs after all of theirs
    (the autograd engine waits for every consumer) and turns their records into ``∂L/∂W``."""

    @staticmethod
    def forward(ctx, weight: torch.Tensor, shared: "SharedWeight") -> torch.Tensor:
        ctx.shared = shared
        return weight.new_zeros(())

    @staticmethod
    def backward(ctx, _: torch.Tensor) -> tuple[torch.Tensor | None, None]:
        return ctx.shared.gradient(), None


class _StepProduct(torch.autograd.Function):
    """``x W_cᵀ`` for one step (``W_c``: the weight in its compute dtype); the backward returns
    ``∂L/∂x`` and records ``(x, ∂L/∂y)`` for the weight's gradient."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, anchor: torch.Tensor, shared: "SharedWeight") -> torch.Tensor:
        ctx.shared = shared
        ctx.save_for_backward(x)
        return shared.product(x.to(shared.dtype))

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None]:
        (x,) = ctx.saved_tensors
        shared = ctx.shared
        grad = grad.to(shared.dtype)
        shared.record(x, grad)
        return shared.transposed_product(grad).to(x.dtype), grad.new_zeros(()), None


class SharedWeight:
    """A weight ``(out, in)`` used at every step of one loop: ``shared(x)`` is ``x Wᵀ`` ``(B, out)``
    for ``x`` ``(B, in)``. Create one per forward pass (it keeps that pass's records). Under
    autocast the weight is cast once, to the autocast dtype of its device."""

    def __init__(self, weight: torch.Tensor, batch_size: int):
        self.weight = weight
        self.dtype = compute_dtype(weight)
        compute = weight.detach().to(self.dtype)
        self.product = fixed_weight_product(compute, batch_size)                      # x ↦ x Wᵀ
        self.transposed_product = fixed_weight_product(compute.t().contiguous(), batch_size)  # g ↦ g W
        self.inputs: list[torch.Tensor] = []
        self.grads: list[torch.Tensor] = []
        self.anchor = _Anchor.apply(weight, self)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return _StepProduct.apply(x, self.anchor, self)

    def record(self, x: torch.Tensor, grad: torch.Tensor) -> None:
        self.inputs.append(x.to(self.dtype))
        self.grads.append(grad)

    def gradient(self) -> torch.Tensor | None:
        """``Σ_t g_tᵀ x_t`` over the recorded steps, in the weight's dtype (None when none was recorded)."""
        if not self.grads:
            return None
        gradient = torch.cat(self.grads).t() @ torch.cat(self.inputs)
        self.inputs, self.grads = [], []
        return gradient.to(self.weight.dtype)


def step_product(weight: torch.Tensor, batch_size: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """``x ↦ x Wᵀ`` for every step of a loop over ``batch_size`` items: a :class:`SharedWeight`
    when the weight's gradient will be needed, else :func:`fixed_weight_product`; either runs in
    :func:`compute_dtype` (under autocast, its dtype for input and weight alike)."""
    if torch.is_grad_enabled() and weight.requires_grad:
        return SharedWeight(weight, batch_size)
    dtype = compute_dtype(weight)
    product = fixed_weight_product(weight.to(dtype), batch_size)
    return lambda x: product(x.to(dtype))


LSTMStep = Callable[[torch.Tensor, tuple[torch.Tensor, torch.Tensor]], tuple[torch.Tensor, torch.Tensor]]


def lstm_step(cell: nn.Module, batch_size: int) -> LSTMStep:
    """The step ``(x (B, I), (h, c) (B, H) each) → (h, c)`` of an LSTM cell for a loop that does
    not train it (inference, validation): a float ``nn.LSTMCell`` runs on fixed-weight products
    (:func:`fixed_weight_product`, in the autocast dtype under autocast); a cell being trained,
    traced for export, or any other cell (int8) runs as it is."""
    if not isinstance(cell, nn.LSTMCell) or (torch.is_grad_enabled() and cell.weight_ih.requires_grad) \
            or torch.jit.is_tracing():
        return cell
    dtype = compute_dtype(cell.weight_ih)
    from_input = fixed_weight_product(cell.weight_ih.to(dtype), batch_size)
    from_hidden = fixed_weight_product(cell.weight_hh.to(dtype), batch_size)
    bias = lstm_bias(cell)

    def step(x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        gates = from_input(x.to(dtype)) + from_hidden(state[0].to(dtype))
        return lstm_update(gates if bias is None else gates + bias, state[1])

    return step


class LSTMSteps:
    """The :func:`lstm_step` of each cell of a module, made once per batch size, dtype and set of
    weights, and made again when the weights change (an optimizer step, a loaded state dict, a
    move to another device). It belongs to the module, not to a decoding state, which then holds
    tensors only; a copy of the module starts with none made."""

    #: steps kept (e.g. two cells at four batch sizes); older ones are made again when asked for
    kept = 8

    def __init__(self) -> None:
        self._made: dict[tuple, tuple[tuple, LSTMStep]] = {}

    def __call__(self, cell: nn.Module, batch_size: int) -> LSTMStep:
        if not isinstance(cell, nn.LSTMCell):
            return cell
        weights = [t for t in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh) if t is not None]
        key = (id(cell), batch_size, compute_dtype(cell.weight_ih), torch.is_grad_enabled(), torch.jit.is_tracing())
        version = tuple((t.data_ptr(), t._version) for t in weights)
        made = self._made.get(key)
        if made is None or made[0] != version:
            made = (version, lstm_step(cell, batch_size))
            self._made[key] = made
            while len(self._made) > self.kept:
                del self._made[next(iter(self._made))]  # the oldest
        return made[1]

    def __deepcopy__(self, memo: dict) -> "LSTMSteps":
        return LSTMSteps()


def lstm_bias(cell: nn.LSTMCell) -> torch.Tensor | None:
    """The cell's two biases as one ``(4H,)`` (None for a cell without biases)."""
    return cell.bias_ih + cell.bias_hh if cell.bias else None


def lstm_update(gates: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``nn.LSTMCell``'s update from its summed pre-activations ``(B, 4H)`` (input, forget, cell,
    output, in PyTorch's order) and the previous cell ``c`` ``(B, H)`` → ``(h, c)``."""
    input_gate, forget_gate, cell_gate, output_gate = gates.chunk(4, dim=1)
    c = torch.sigmoid(forget_gate) * c + torch.sigmoid(input_gate) * torch.tanh(cell_gate)
    return torch.sigmoid(output_gate) * torch.tanh(c), c
