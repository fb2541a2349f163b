#!/usr/bin/env bash
# The attention study (docs/attention_study.md): bf16/fp32 parity, then every mechanism for 3,000
# updates. Every run resumes where it stopped: run this again to continue. Needs the corpus and its
# features (bash egs/synthetic/run.sh --stop-stage 2) and the machine to itself.
#   nohup setsid bash egs/synthetic/attention_study.sh > exp/attention_study.log 2>&1 &
#
# Two lanes of one thread each: on 2 cores, two 1-thread runs side by side make 1.5x the updates per
# second of one 2-thread run, and a third process (an evaluation, a CI run) slows them in proportion
# instead of stalling a 2-thread run's synchronizing threads (about 7x). Each lane logs to
# exp/logs/; the report is written when both lanes are done.
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}
DATA=${DATA:-data/synthetic}
mkdir -p exp/logs
export OMP_NUM_THREADS=1

lanes() {  # lanes NAME COMMAND_A -- COMMAND_B: run both, staggered, and fail if either fails
  local name=$1; shift
  local a=() b=()
  while [ "$1" != "--" ]; do a+=("$1"); shift; done; shift; b=("$@")
  "${a[@]}" > "exp/logs/${name}_a.log" 2>&1 & local pid_a=$!
  sleep 15  # the first lane records the study folder before the second reads it
  "${b[@]}" > "exp/logs/${name}_b.log" 2>&1 & local pid_b=$!
  wait "$pid_a" && wait "$pid_b"
}

PARITY=("$TTS" study --config configs/attention_study.yaml --data "$DATA" --out exp/bf16_parity --steps 1000
        --no-suite --no-mos)
lanes parity "${PARITY[@]}" --variant bf16:model.tacotron2.attention.kind=location_sensitive \
  -- "${PARITY[@]}" --variant fp32:train.amp=off

STUDY=("$TTS" study --config configs/attention_study.yaml --data "$DATA" --out exp/attention_study --steps 3000
       --no-mos)
lanes study "${STUDY[@]}" --kinds dynamic_convolution forward stepwise_monotonic location luong_concat luong_dot \
  luong_local_p \
  -- "${STUDY[@]}" --kinds location_sensitive gmm hybrid content luong_general luong_local_m hard
"$TTS" study --config configs/attention_study.yaml --data "$DATA" --out exp/attention_study --steps 3000 --report-only
