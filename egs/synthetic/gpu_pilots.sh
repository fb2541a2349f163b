#!/usr/bin/env bash
# The attention study's fair-settings pilots (egs/synthetic/pilots.sh) on one accelerator, all at
# once, for a fixed wall-clock time: each pilot is one process on the GPU, validated every epoch
# (67 updates) against Festival's true alignment, and its curves come back as one archive. The
# runs share the card, so they are compared with each other only, never with CPU runs.
#
# Here, before sending (the machine can be sent 64 MiB; the bundled models are not needed there):
#   .venv/bin/python egs/synthetic/compact_corpus.py pack --data data/synthetic \
#       --config configs/attention_study.yaml --bits 7 --out .gpu/synthetic.tar.xz
#   pip download the wheels the machine lacks into .whl (librosa, soundfile, soxr, ...: docs/attention_study/second_edition.md)
# The tracked tree (about 40 MB, 36 of them the bundled models) and the archive together pass 64 MiB:
# move tts/pretrained/*.pt out of the checkout for the call (nothing there needs them) and back after.
# There (device tool, carry .gpu and .whl):
#   bash egs/synthetic/gpu_pilots.sh [--set e20|u5360] --seconds 480 --out "$OUT"
set -uo pipefail
cd "$(dirname "$0")/../.."
seconds=480; out=out/gpu_pilots
# --set e20: the first look (20-epoch schedule, 12,800 frames, validated every epoch of 67 updates);
# --set u5360: every distinct mechanism on 3,200-frame batches (5,360-update schedule, validated every 134)
e20=(ls_lr2e-3_e20 ls_lr4e-3_e20 ls_noguide_e20 content_e20 content_noguide_e20 sma_bias1_e20 sma_bias3.5_e20
     forward_e20 forward_ta_e20 hard_e20 hard_fast_e20 gmm_e20 dca_e20)
u5360=(location_sensitive_u5360 ls_lr4e-3_u5360 dynamic_convolution_u5360 gmm_u5360 content_u5360
       luong_general_u5360 luong_local_m_u5360 forward_u5360 stepwise_monotonic_u5360 sma_bias1_u5360 hybrid_u5360
       location_u5360 luong_local_p_u5360 hard_u5360)
names=("${e20[@]}"); validate_every=67
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2;;
    --out) out=$2; shift 2;;
    --names) IFS=' ' read -r -a names <<< "$2"; shift 2;;
    --set)
      case "$2" in
        e20) names=("${e20[@]}"); validate_every=67;;
        u5360) names=("${u5360[@]}"); validate_every=134;;
        *) echo "error: unknown set $2 (e20 or u5360)" >&2; exit 2;;
      esac
      shift 2;;
    *) echo "error: unknown option $1" >&2; exit 2;;
  esac
done
mkdir -p "$out"

if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1
nvidia-smi -L
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())" || exit 1
data=data/synthetic_gpu
[ -d "$data" ] || python3 egs/synthetic/compact_corpus.py unpack --archive .gpu/synthetic.tar.xz --config configs/attention_study.yaml \
  --out "$data" || exit 1
rm -rf /tmp/smoke exp/pilots_gpu
# a two-update smoke run first: a failure costs a minute, not the lease
python3 -m tts.cli train --config configs/attention_study.yaml --data "$data" --out /tmp/smoke --device cuda \
  --no-progress train.max_steps=2 train.validate_every=2 train.checkpoint_every=2 train.n_val_audio=0 \
  data.max_frames_per_batch=12800 data.max_batch_size=128 2>&1 | tail -4
[ -f /tmp/smoke/metrics.jsonl ] || { echo "smoke run failed"; exit 1; }
PY=python3 DATA=$data PILOTS_OUT=exp/pilots_gpu DEVICE=cuda \
  EXTRA="train.validate_every=$validate_every train.n_val_audio=0 train.checkpoint_every=670" \
  bash egs/synthetic/pilots.sh "${names[@]}"
started=$(date +%s); deadline=$((started + seconds))
while [ "$(date +%s)" -lt "$deadline" ]; do
  sleep 60
  echo "--- $(( $(date +%s) - started )) s"
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
  for name in "${names[@]}"; do
    printf '%s: %s\n' "$name" "$(tail -n 1 "exp/pilots_gpu/$name/metrics.jsonl" 2>/dev/null | cut -c1-60)"
  done
done
pkill -INT -f "tts.cli train" ; sleep 8; pkill -KILL -f "tts.cli train"
tar -czf "$out/pilots_gpu.tar.gz" --exclude='*.pt' --exclude='*.png' --exclude='*.wav' exp/pilots_gpu
for name in "${names[@]}"; do tail -n 3 "exp/pilots_gpu/$name/train.log"; done | grep -E "validation|rror" | cut -c1-300
ls -la "$out"
