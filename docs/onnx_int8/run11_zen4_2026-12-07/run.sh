#!/usr/bin/env bash
# run 11's int8 and ONNX quality readings (docs/speed.md "int8", docs/serving.md "int8 decoder step"),
# one after another on one thread beside the study's two lanes
set -euo pipefail
cd /work/main
export OMP_NUM_THREADS=1
D=exp/run11_int8
T=(--data data/synthetic --split test --limit 100 --threads 1)
echo "[$(date +%H:%M:%S)] PyTorch int8 through HiFi-GAN"
[ -f $D/test_int8/summary.json ] || .venv/bin/tts evaluate "${T[@]}" --int8 --out $D/test_int8
.venv/bin/python egs/synthetic/paired.py exp/everyday_ss3_s2/eval_test_450 $D/test_int8 > $D/paired_int8.json
echo "[$(date +%H:%M:%S)] ONNX exports"
[ -d $D/export_fp32 ] || .venv/bin/tts export tts/pretrained/tacotron2_synthetic.pt --format onnx --vocoder vocos-student --out $D/export_fp32
[ -d $D/export_int8 ] || .venv/bin/tts export tts/pretrained/tacotron2_synthetic.pt --format onnx --int8 --vocoder vocos-student --out $D/export_int8
for e in fp32 int8; do
  echo "[$(date +%H:%M:%S)] ONNX $e through the student"
  [ -f $D/test_onnx_$e/summary.json ] || .venv/bin/tts evaluate "${T[@]}" --engine onnx --checkpoint $D/export_$e --out $D/test_onnx_$e
done
.venv/bin/python egs/synthetic/paired.py $D/test_onnx_fp32 $D/test_onnx_int8 > $D/paired_onnx.json
.venv/bin/python egs/synthetic/paired.py exp/release_run11/test_student $D/test_onnx_fp32 > $D/paired_torch_onnx.json
echo "[$(date +%H:%M:%S)] done"
