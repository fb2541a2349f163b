#!/usr/bin/env bash
# The attention study (docs/attention_study.md): every mechanism for 3,000 updates in bf16, and the
# fp32 arm of the bf16 parity check. Every run resumes where it stopped: run this again to continue.
# Needs the corpus and its features (bash egs/synthetic/run.sh --stop-stage 2) and the machine to itself.
#   nohup setsid bash egs/synthetic/attention_study.sh > exp/attention_study.log 2>&1 &
#
# The parity check's bf16 arm is the study's location_sensitive variant itself (the same config,
# seed and batches; its validations at updates 500 and 1,000), so only the fp32 arm runs apart, in
# exp/bf16_parity, for 1,000 updates.
#
# Two lanes of one thread each: on 2 cores, two 1-thread runs side by side make 1.5x the updates per
# second of one 2-thread run, and a third process (an evaluation, a CI run) slows them in proportion
# instead of stalling a 2-thread run's synchronizing threads (about 7x). Each lane logs to
# exp/logs/; the report is written when both lanes are done. The likely best mechanisms go first,
# so their second seeds can start early; luong_local_p goes last.
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}
DATA=${DATA:-data/synthetic}
mkdir -p exp/logs
export OMP_NUM_THREADS=1

STUDY=("$TTS" study --config configs/attention_study.yaml --data "$DATA" --out exp/attention_study --steps 3000
       --no-mos)

lane_a() {
  "${STUDY[@]}" --kinds location_sensitive dynamic_convolution gmm content luong_general luong_dot luong_local_m
}
lane_b() {
  "$TTS" study --config configs/attention_study.yaml --data "$DATA" --out exp/bf16_parity --steps 1000 \
    --no-suite --no-mos --variant fp32:train.amp=off
  "${STUDY[@]}" --kinds forward stepwise_monotonic hybrid location luong_concat hard luong_local_p
}

lane_a > exp/logs/study_a.log 2>&1 & pid_a=$!
sleep 15  # the first lane records the study folder before the second reads it
lane_b > exp/logs/study_b.log 2>&1 & pid_b=$!
wait "$pid_a" && wait "$pid_b"
"${STUDY[@]}" --report-only
