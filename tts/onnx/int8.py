"""An export's decoder step with int8 weights: :func:`quantize_step` and the kernel check
:func:`check_int8_products` that an int8 export runs before it loads.

At batch 1 the decoder step is bound by reading its weights (a free-running step reads all of
them: 432 steps for 10 s of the bundled voice), so the step graph's matrix products get uint8 weights with one
scale and zero point per output column (onnxruntime's dynamic quantization; activations are
quantized per call). Only the step: the encoder and postnet run once per sentence.

Why uint8 weights and not int8: onnxruntime's unsigned × signed byte product on CPUs without
VNNI (AVX2 only) adds pairs of byte products in 16 bits, which saturates for large values; its
unsigned × unsigned product widens first. :func:`check_int8_products` verifies this on the
CPU at hand with products whose every term is extreme, against the exact sums.
"""

from __future__ import annotations

import functools
import logging
import tempfile
from pathlib import Path

import numpy as np

from tts.errors import TTSError, brief

#: the graphs of an export whose weights ``tts export --format onnx --int8`` quantizes
QUANTIZED = ("step.onnx",)
#: the probe's inner dimension and its largest relative error (exact sums, float32 scaling)
_PROBE_K, _PROBE_TOLERANCE = 512, 1e-5


def _quantize(source: Path, target: Path, signed_weights: bool = False) -> None:
    """``source``'s matrix products with uint8 weights (int8 where ``signed_weights``), per output
    column, written to ``target``."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantizer_log = logging.getLogger()  # the quantizer advises pre-processing on the root logger
    level = quantizer_log.level
    quantizer_log.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8 if signed_weights else QuantType.QUInt8,
                         per_channel=True)
    except Exception as exc:  # noqa: BLE001 - the quantizer raises many kinds; the user needs the first line
        raise TTSError(f"{source.name} does not quantize to int8 ({brief(exc, 200)}): export without --int8") from None
    finally:
        quantizer_log.setLevel(level)


def quantize_step(folder: Path) -> None:
    """Replace the graphs of :data:`QUANTIZED` in the export ``folder`` with their int8 versions."""
    for name in QUANTIZED:
        source = folder / name
        target = folder / f"{name}.int8"
        _quantize(source, target)
        target.replace(source)


@functools.cache
def int8_product_error(signed_weights: bool = False) -> float:
    """The largest relative error of onnxruntime's quantized matrix product on this CPU, for
    batches of 1 and 16 rows whose activations and weights all quantize exactly to extreme
    bytes (a saturating kernel is off by tens of percent; an exact one by float rounding), with
    the uint8 weights an export gets, or with int8 ones (``signed_weights``, for comparison)."""
    import onnx
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    # weights ±: bytes 0 and 255 around zero point 128 (scale 1/255), both in every column
    weights = np.where(rng.random((_PROBE_K, 64)) < 0.5, -128.0, 127.0).astype(np.float32) / 255
    weights[0], weights[1] = -128 / 255, 127 / 255
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "int8_probe",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", _PROBE_K])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", 64])],
                              [numpy_helper.from_array(weights, "w")])
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "probe.onnx", Path(tmp) / "probe.int8.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(source))
        _quantize(source, target, signed_weights)
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        session = onnxruntime.InferenceSession(str(target), options, providers=["CPUExecutionProvider"])
        worst = 0.0
        for rows in (1, 16):
            # activations 0 or 1: bytes 0 and 255 (scale 1/255, zero point 0), mostly 255
            x = (rng.random((rows, _PROBE_K)) < 0.9).astype(np.float32)
            x[:, 0] = 0.0
            expected = x.astype(np.float64) @ weights.astype(np.float64)
            got = session.run(None, {"x": x})[0]
            worst = max(worst, float(np.abs(got - expected).max() / np.abs(expected).max()))
    return worst


def check_int8_products(path: Path) -> None:
    """Refuse to run the int8 export at ``path`` where onnxruntime's quantized product is not exact."""
    error = int8_product_error()
    if not error < _PROBE_TOLERANCE:
        raise TTSError(f"{path} has int8 weights, and this CPU's onnxruntime computes their products "
                       f"{100 * error:.1f} % off exact sums: export without --int8 for this machine")
