"""Int8 inference weights: each quantized product against its float original."""

import pytest
import torch
from torch import nn

from tts.models.quantize import Int8LSTMCell, Int8Product, quantize_int8, quantize_rows


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm())


def test_rows_round_trip_within_half_a_step():
    matrix = torch.randn(7, 33) * torch.logspace(-3, 2, 7)[:, None]  # rows of very different sizes
    quantized, scale = quantize_rows(matrix)
    assert quantized.dtype == torch.int8 and scale.shape == (7, 1)
    assert int(quantized.abs().amax(dim=1).min()) == 127  # every row uses its whole range
    assert torch.all((quantized.float() * scale - matrix).abs() <= scale / 2 + 1e-7)


@pytest.mark.parametrize("rows", [1, 3, 16])  # the per-row _int_mm path and the oneDNN path
@pytest.mark.parametrize("bias", [True, False])
def test_int8_product_is_the_linear_layer_within_one_percent(rows, bias):
    torch.manual_seed(0)
    linear = nn.Linear(96, 40, bias=bias)
    x = torch.randn(2, rows, 96)
    out = Int8Product(linear.weight, linear.bias)(x)
    assert out.shape == (2, rows, 40) and out.dtype == torch.float32
    assert relative_error(out, linear(x).detach()) < 0.01


def test_int8_product_keeps_large_and_small_rows_accurate():
    """Per-row activation scales: a quiet row beside a loud one keeps its precision (per-row path)."""
    torch.manual_seed(0)
    linear = nn.Linear(64, 32)
    x = torch.randn(2, 64) * torch.tensor([[100.0], [0.01]])
    out = Int8Product(linear.weight, None)(x)
    expected = (x @ linear.weight.T).detach()
    assert relative_error(out[1], expected[1]) < 0.02


@pytest.mark.parametrize("batch", [1, 8])
def test_int8_lstm_cell_follows_the_float_cell_over_many_steps(batch):
    torch.manual_seed(0)
    cell = nn.LSTMCell(24, 48)
    int8 = Int8LSTMCell(cell)
    state = int8_state = (torch.zeros(batch, 48), torch.zeros(batch, 48))
    for _ in range(50):
        x = torch.randn(batch, 24)
        state = cell(x, state)
        int8_state = int8(x, int8_state)
    assert relative_error(int8_state[0], state[0].detach()) < 0.05
    h, c = int8(torch.randn(batch, 24))  # no state: zeros, as nn.LSTMCell
    assert h.shape == c.shape == (batch, 48)


def test_quantize_int8_replaces_every_linear_and_lstm_cell_in_a_copy():
    model = nn.Sequential(nn.Linear(8, 8), nn.ModuleDict({"cell": nn.LSTMCell(8, 8), "conv": nn.Conv1d(8, 8, 3)}))
    quantized = quantize_int8(model)
    assert isinstance(quantized[0], Int8Product) and isinstance(quantized[1]["cell"], Int8LSTMCell)
    assert isinstance(quantized[1]["conv"], nn.Conv1d) and not quantized.training
    assert isinstance(model[0], nn.Linear)  # the original is untouched
