#!/usr/bin/env bash
# The int8 product checks on an emulated AVX2-only CPU (AMD EPYC Zen 3: AVX2, no AVX-512, no VNNI),
# for a machine that has AVX-512 or VNNI itself (docs/serving.md, "int8 decoder step"). QEMU's
# user-mode emulator runs this project's Python under that CPU model, so onnxruntime and oneDNN
# choose the kernels they would choose there. Writes OUT (JSON): the CPU features the emulated
# Python sees, onnxruntime's int8 product error with the uint8 weights that `tts export --int8`
# writes and with signed weights, and PyTorch's int8 kernel probe (which finds oneDNN's 8-bit
# activations saturating on a real AVX2-only CPU: if it does here too, the emulation reproduces
# that failure). --tests also runs the suite's int8 tests that need no corpus under the emulator
# (PyTorch's int8 products and the int8 ONNX export; about 2 min on a Zen 4 host. Tests that build a corpus crash
# inside numpy under QEMU 7.2, so the rest of the suite cannot run this way).
# Installs Debian's qemu-user when it is missing (as root).
#   bash egs/bench/int8_on_avx2.sh OUT.json [--tests]
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
[ $# -ge 1 ] || { echo "usage: $0 OUT.json [--tests]" >&2; exit 2; }
out=$1; tests=${2:-}
command -v qemu-x86_64 >/dev/null || make -s system-deps APT_PACKAGES=qemu-user
cpu=EPYC-Milan
emulated() { qemu-x86_64 -cpu "$cpu" "$PY" "$@" 2> >(grep -v "TCG doesn't support requested feature" >&2); }
host="$(lscpu | sed -n 's/^Model name: *//p') ($(grep -o -w -E 'avx2|avx512f|avx512_vnni|avx512_bf16|amx_bf16|avx_vnni' \
  /proc/cpuinfo | sort -u | tr '\n' ' ' | sed 's/ $//'))"
emulated - "$cpu" "$host" "bash $0 $*" > "$out.tmp" <<'EOF'
import datetime, json, sys

import torch

from tts.models.quantize import int8_kernels
from tts.onnx.int8 import int8_product_error

try:
    from numpy._core._multiarray_umath import __cpu_features__ as features
except ImportError:  # numpy < 2
    from numpy.core._multiarray_umath import __cpu_features__ as features

report = {"command": sys.argv[3], "date": datetime.date.today().isoformat(),
          "emulated_cpu": sys.argv[1], "host_cpu": sys.argv[2], "torch": torch.__version__,
          "cpu_features_seen": {k: bool(features.get(k)) for k in ("AVX2", "AVX512F", "AVX512_VNNI", "AVX512VNNI", "AVXVNNI")},
          "onnxruntime_uint8_weights_error": int8_product_error()}
report["onnxruntime_int8_weights_error"] = int8_product_error(signed_weights=True)
kernels = int8_kernels()
report["torch_int8_kernels"] = {"per_row_exact": kernels.per_row_exact, "activation_levels": kernels.activation_levels}
json.dump(report, sys.stdout, indent=1)
print()
EOF
mv "$out.tmp" "$out"
cat "$out"
if [ "$tests" = --tests ]; then
  emulated -m pytest -q -rs -p no:cacheprovider -k "int8 or quantiz" tests/test_quantize.py tests/test_layers.py \
    tests/test_onnx.py
fi
