#!/usr/bin/env bash
# The attention study (docs/attention_study.md): every mechanism for 3,000 updates in bf16. Every
# run resumes where it stopped, and the variants whose result files are committed
# (docs/attention_study/results/) are not trained again: run this again to continue, on this
# machine or a new one. Needs the corpus and its features (bash egs/synthetic/run.sh --stop-stage 2)
# and the machine to itself.
#   nohup setsid bash egs/synthetic/attention_study.sh [--with-parity] > exp/attention_study.log 2>&1 &
#
# --with-parity first runs the fp32 arm of the bf16 parity check (1,000 updates in exp/bf16_parity;
# its bf16 arm is the study's location_sensitive variant itself: the same config, seed and batches).
#
# Two lanes of one thread each: on 2 cores, two 1-thread runs side by side make about 1.3x the
# updates per second of one 2-thread run, and a third process (an evaluation, a CI run) slows them
# in proportion instead of stalling a 2-thread run's synchronizing threads (several times over).
# Each lane logs to exp/logs/. When both lanes are done, the five best mechanisms by test WER (CER
# breaking ties) are trained again with seed 2 (variants <kind>_seed2, two lanes again), and the
# report compares each with its first run: what the seed alone changes (test WER and CER, and when
# it aligned: the seeds skip the robustness suite, which that comparison does not read; 6 of
# luong_local_m's 95 minutes). luong_concat runs in the
# second phase, beside the seeds, so that neither phase leaves a lane idle: it is content
# attention's function under another name (bit for bit the same run on the same CPU), so it cannot
# change which five are best; beside content's run it shows what the CPU alone changes, or nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}
DATA=${DATA:-data/synthetic}
parity=0
[ "${1:-}" = "--with-parity" ] && parity=1
mkdir -p exp/logs exp/attention_study/results
cp -n docs/attention_study/results/* exp/attention_study/results/ 2>/dev/null || true
[ -f docs/attention_study/cost.json ] && cp -n docs/attention_study/cost.json exp/attention_study/
export OMP_NUM_THREADS=1

STUDY=("$TTS" study --config configs/attention_study.yaml --data "$DATA" --out exp/attention_study --steps 3000
       --no-mos)

lane_a() {
  "${STUDY[@]}" --kinds location_sensitive dynamic_convolution gmm content luong_general luong_dot luong_local_m
}
lane_b() {
  if [ "$parity" = 1 ]; then
    "$TTS" study --config configs/attention_study.yaml --data "$DATA" --out exp/bf16_parity --steps 1000 \
      --no-suite --no-mos --variant fp32:train.amp=off
  fi
  "${STUDY[@]}" --kinds forward stepwise_monotonic hybrid location luong_local_p hard
}

# the study's first runs, best reader first (the report's ranking)
ranked_kinds() {
  "${STUDY[@]}" --report-only > /dev/null
  .venv/bin/python -c '
import json
from tts.evaluation.study_report import by_reading, split_repeats
firsts, _ = split_repeats(json.load(open("exp/attention_study/study.json"))["rows"])
print(" ".join(r["variant"] for r in by_reading(firsts)))'
}
seed2() {
  for kind in "$@"; do echo "${kind}_seed2:model.tacotron2.attention.kind=${kind},train.seed=2"; done
}

two_lanes() {
  "$1" > exp/logs/study_a.log 2>&1 & pid_a=$!
  sleep 15  # the first lane records the study folder before the second reads it
  "$2" > exp/logs/study_b.log 2>&1 & pid_b=$!
  wait "$pid_a" && wait "$pid_b"
}
two_lanes lane_a lane_b

read -r -a best <<< "$(ranked_kinds)"
seeds_a() { "${STUDY[@]}" --no-suite --variant $(seed2 "${best[0]}" "${best[2]}" "${best[4]}"); }
seeds_b() {
  "${STUDY[@]}" --kinds luong_concat
  "${STUDY[@]}" --no-suite --variant $(seed2 "${best[1]}" "${best[3]}")
}
two_lanes seeds_a seeds_b
"${STUDY[@]}" --report-only
