#!/usr/bin/env bash
# Issue 23's GPU measurements in one go, on a machine with a CUDA GPU; one JSON file each in OUT:
#   model.json        NVIDIA's sizes, ours (fp32, bf16 autocast; batch 1, 16, 64; synthesis with
#                     Griffin-Lim on the GPU) against NVIDIA/tacotron2 with train.py's fp16 AMP on the
#                     same card and batch (egs/bench/nvidia_on_device.py), side by side
#   model_small.json  configs/tacotron2_small.yaml (the bundled voice's size), ours only
#   griffin_lim.json  Griffin-Lim on the GPU against librosa-60 on the CPU
#   vocoder.json      Griffin-Lim and each HiFi-GAN config, RTF on the GPU
# SHARED holds reference/nvidia_tacotron2 and bench/nvidia_baseline.py (../shared beside a checkout;
# copy it into the tree where the machine cannot see it).
#   bash egs/bench/gpu.sh [--out out/bench_gpu] [--shared ../shared] [--python python3]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=out/bench_gpu; shared=../shared; python=${PYTHON:-python3}
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2;;
    --shared) shared=$2; shift 2;;
    --python) python=$2; shift 2;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
tts() { "$python" -m tts.cli "$@"; }
reference="$python egs/bench/nvidia_on_device.py --device cuda --amp fp16 --threads 8 \
  --nvidia-src $shared/reference/nvidia_tacotron2 --harness $shared/bench"
tts bench model --device cuda --threads 8 --vocoder griffin-lim --reference-command "$reference" > "$out/model.json"
tts bench model --device cuda --threads 8 --vocoder griffin-lim --config configs/tacotron2_small.yaml > "$out/model_small.json"
tts bench griffin-lim --device cuda --threads 8 > "$out/griffin_lim.json"
tts bench vocoder --device cuda --threads 8 > "$out/vocoder.json"
echo "wrote $out/{model,model_small,griffin_lim,vocoder}.json"
