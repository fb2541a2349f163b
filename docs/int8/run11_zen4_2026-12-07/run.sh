#!/usr/bin/env bash
# Run 11's int8 and ONNX quality readings (docs/speed.md "int8", docs/serving.md "int8 decoder step"),
# one after another on one thread: the bundled voice on the 100 test sentences in float32 and int8
# through HiFi-GAN, in PyTorch and as float32 and int8 ONNX exports through the student, then the
# paired differences. Resumable: a finished evaluation is kept. Needs data/synthetic (`make setup`
# and the synthetic recipe). On 2026-12-07 the float32 HiFi-GAN reading was the voice release's own
# evaluation of the same file (exp/everyday_ss3_s2/eval_test_450), and the PyTorch student's was
# exp/release_run11/test_student.
set -euo pipefail
cd "$(dirname "$0")/../../.."
export OMP_NUM_THREADS=1
D=${1:-exp/run11_int8}
T=(--data data/synthetic --split test --limit 100 --threads 1)
evaluate() {  # OUT, then tts evaluate's other arguments
  local out=$1; shift
  echo "[$(date +%H:%M:%S)] $out"
  [ -f "$out/summary.json" ] || .venv/bin/tts evaluate "${T[@]}" "$@" --out "$out"
}
evaluate "$D/test_fp32"
evaluate "$D/test_int8" --int8
evaluate "$D/test_torch_student" --vocoder vocos-student
for e in fp32 int8; do
  flag=(); [ "$e" = int8 ] && flag=(--int8)
  [ -d "$D/export_$e" ] || .venv/bin/tts export tts/pretrained/tacotron2_synthetic.pt --format onnx "${flag[@]}" \
    --vocoder vocos-student --out "$D/export_$e"
  evaluate "$D/test_onnx_$e" --engine onnx --checkpoint "$D/export_$e"
done
.venv/bin/python egs/synthetic/paired.py "$D/test_fp32" "$D/test_int8" > "$D/paired_int8.json"
.venv/bin/python egs/synthetic/paired.py "$D/test_onnx_fp32" "$D/test_onnx_int8" > "$D/paired_onnx.json"
.venv/bin/python egs/synthetic/paired.py "$D/test_torch_student" "$D/test_onnx_fp32" > "$D/paired_torch_onnx.json"
echo "[$(date +%H:%M:%S)] done: $D/paired_*.json"
