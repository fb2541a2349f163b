#!/usr/bin/env bash
# The attention study (docs/attention_study.md): bf16/fp32 parity, then every mechanism for 3,000
# updates. Both commands resume where they stopped: run this again to continue. Needs the corpus
# and its features (bash egs/synthetic/run.sh --stop-stage 2) and the machine to itself.
#   nohup setsid bash egs/synthetic/attention_study.sh > exp/attention_study.log 2>&1 &
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}
DATA=${DATA:-data/synthetic}
"$TTS" study --config configs/attention_study.yaml --data "$DATA" --out exp/bf16_parity --steps 1000 \
  --variant bf16:model.tacotron2.attention.kind=location_sensitive fp32:train.amp=off --no-suite --no-mos
"$TTS" study --config configs/attention_study.yaml --data "$DATA" --out exp/attention_study --steps 3000 --no-mos \
  --kinds dynamic_convolution location_sensitive forward gmm stepwise_monotonic hybrid location content \
  luong_concat luong_general luong_dot luong_local_m luong_local_p hard
