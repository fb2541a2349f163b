"""Int8 inference weights: each quantized product against its float original, on every kernel path,
and the probe that keeps CPUs whose int8 products saturate (no VNNI) on exact kernels."""

import json
import os
import subprocess
import sys

import pytest
import torch
from torch import nn

from tts.models.quantize import (
    Int8Kernels,
    Int8LSTMCell,
    Int8Product,
    _sign_patterns,
    int8_kernels,
    quantize_int8,
    quantize_rows,
)

#: each way Int8Product can multiply, with the relative error it is held to
PATHS = {
    "per_row_int_mm": (Int8Kernels(True, 255, ()), 0.01),
    "quantized_linear_8bit": (Int8Kernels(False, 255, ()), 0.01),
    "quantized_linear_7bit": (Int8Kernels(False, 127, ()), 0.025),
    "float_product": (Int8Kernels(False, 0, ()), 0.01),
}


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm())


def on_path(product: Int8Product, path: str) -> float:
    """Put ``product`` on ``path`` (skipping where this CPU's kernel for it is not exact); its tolerance."""
    kernels, tolerance = PATHS[path]
    probed = int8_kernels()
    if (kernels.per_row_exact and not probed.per_row_exact) or kernels.activation_levels > probed.activation_levels:
        pytest.skip(f"this CPU's kernel for {path} is not exact ({probed.describe()})")
    product.kernels = kernels
    return tolerance


def test_rows_round_trip_within_half_a_step():
    matrix = torch.randn(7, 33) * torch.logspace(-3, 2, 7)[:, None]  # rows of very different sizes
    quantized, scale = quantize_rows(matrix)
    assert quantized.dtype == torch.int8 and scale.shape == (7, 1)
    assert int(quantized.abs().amax(dim=1).min()) == 127  # every row uses its whole range
    assert torch.all((quantized.float() * scale - matrix).abs() <= scale / 2 + 1e-7)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("rows", [1, 3, 16])
@pytest.mark.parametrize("bias", [True, False])
def test_int8_product_is_the_linear_layer_on_every_path(path, rows, bias):
    torch.manual_seed(0)
    linear = nn.Linear(96, 40, bias=bias)
    product = Int8Product(linear.weight, linear.bias)
    tolerance = on_path(product, path)
    x = torch.randn(2, rows, 96)
    out = product(x)
    assert out.shape == (2, rows, 40) and out.dtype == torch.float32
    assert relative_error(out, linear(x).detach()) < tolerance


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("rows", [2, 8])
def test_int8_product_keeps_a_quiet_row_beside_a_loud_one_accurate(path, rows):
    """Per-row activation scales on every path: a row 10⁴ times quieter keeps its precision."""
    torch.manual_seed(0)
    linear = nn.Linear(64, 32)
    product = Int8Product(linear.weight, None)
    tolerance = on_path(product, path)
    x = torch.randn(rows, 64)
    x[0] *= 100.0
    x[1] *= 0.01
    expected = (x @ linear.weight.T).detach()
    assert relative_error(product(x)[1], expected[1]) < 2 * tolerance


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


def pmaddubsw_product(activations_u8: torch.Tensor, weight_s8: torch.Tensor) -> torch.Tensor:
    """What x86 without VNNI computes for uint8 ``(N, K)`` × int8 ``(M, K)``ᵀ: adjacent pairs of
    products summed in saturating 16-bit arithmetic, then added in 32 bits."""
    pairs = (activations_u8.long()[:, None, :] * weight_s8.long()[None, :, :]).reshape(
        activations_u8.shape[0], weight_s8.shape[0], -1, 2).sum(-1)
    return pairs.clamp(-32768, 32767).sum(-1)


def test_the_probe_inputs_overflow_pair_sums_at_8_bits_and_not_at_7():
    """The probe's worst cases are worst cases: emulated without VNNI, the signed product (oneDNN adds
    128 to signed activations) and 255-level activations come out wrong; 127-level ones are exact."""
    patterns = _sign_patterns(64)
    exact = patterns.long() @ patterns.long().t()
    shifted = pmaddubsw_product((patterns.long() + 128).to(torch.uint8), patterns) - 128 * patterns.long().sum(1)
    assert not torch.equal(shifted, exact)
    for levels, saturates in ((255, True), (127, False)):
        activations = torch.full((4, 64), levels, dtype=torch.uint8)
        assert torch.equal(pmaddubsw_product(activations, patterns),
                           activations.long() @ patterns.long().t()) != saturates


AVX2_CHECK = """
import json, torch
from torch import nn
from tts.models.quantize import Int8LSTMCell, Int8Product, int8_kernels
torch.manual_seed(0)
linear = nn.Linear(96, 40)
product = Int8Product(linear.weight, linear.bias)
errors = {}
for rows in (1, 3, 16):
    x = torch.randn(rows, 96)
    errors[rows] = float((product(x) - linear(x)).norm() / linear(x).norm())
cell = nn.LSTMCell(24, 48)
int8 = Int8LSTMCell(cell)
state = int8_state = (torch.zeros(8, 48), torch.zeros(8, 48))
for _ in range(50):
    x = torch.randn(8, 24)
    state, int8_state = cell(x, state), int8(x, int8_state)
errors["lstm"] = float((int8_state[0] - state[0]).norm() / state[0].norm())
kernels = int8_kernels()
print(json.dumps({"errors": errors, "levels": kernels.activation_levels, "fast": kernels.fast}))
"""


def test_int8_is_right_on_a_cpu_without_vnni():
    """oneDNN limited to AVX2 (``ONEDNN_MAX_CPU_ISA``) multiplies bytes as a Zen 3 does: its 8-bit
    kernels saturate there, the probe sees it, and the products stay within the 7-bit tolerance."""
    env = {**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX2"}
    done = subprocess.run([sys.executable, "-c", AVX2_CHECK], env=env, capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["levels"] == 127 and not found["fast"]
    tolerance = PATHS["quantized_linear_7bit"][1]
    assert all(found["errors"][rows] < tolerance for rows in ("1", "3", "16")), found
    assert found["errors"]["lstm"] < 0.05, found
