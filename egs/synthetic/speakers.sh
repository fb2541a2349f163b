#!/usr/bin/env bash
# Many voices on the offline synthetic corpora (docs/speakers.md), on a CPU:
#   bash egs/synthetic/speakers.sh [--stage N] [--stop-stage M] [--steps 1500] [--adapt-steps 600]
#        [--minutes "5 10 30"] [--eval-limit N] [--held-out kal] [--no-mos] [--curve-steps "100 300"]
#        [--curve-limit 25]
# Stages: 1 corpora (four training voices; the held-out voice alone) → 2 features → 3 train the
# multi-speaker model (warm-started from the bundled voice) → 4 evaluate it per speaker →
# 5 the unadapted model on the held-out voice, as each of its speakers → 6 adapt to the held-out
# voice from each amount of its speech, and evaluate its checkpoints at --curve-steps (the first
# --curve-limit test sentences) and its best one (the whole test split). Every stage resumes or
# skips what is done.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}; TTS=${TTS:-.venv/bin/tts}
stage=1; stop_stage=6; steps=1500; adapt_steps=600; minutes="5 10 30"; eval_limit=""; held_out=kal; no_mos=""
curve_steps="100 300"; curve_limit=25
speakers=slt,awb,rms,ked
config=configs/multispeaker_small.yaml; data=data/multispeaker; exp=exp/multispeaker
while [ $# -gt 0 ]; do
  case "$1" in
    --stage) stage=$2; shift 2;;
    --stop-stage) stop_stage=$2; shift 2;;
    --steps) steps=$2; shift 2;;
    --adapt-steps) adapt_steps=$2; shift 2;;
    --minutes) minutes=$2; shift 2;;
    --eval-limit) eval_limit="--limit $2"; shift 2;;
    --held-out) held_out=$2; shift 2;;
    --no-mos) no_mos=--no-mos; shift;;
    --curve-steps) curve_steps=$2; shift 2;;
    --curve-limit) curve_limit=$2; shift 2;;
    *) echo "error: unknown option $1" >&2; exit 2;;
  esac
done
adapt_data=data/$held_out
run_stage() { [ "$stage" -le "$1" ] && [ "$stop_stage" -ge "$1" ]; }
log() { echo "[$(date +%H:%M:%S)] stage $*"; }
resume_flag() { ls "$1"/checkpoint_*.pt >/dev/null 2>&1 && echo --resume || true; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# the first token held through the 0.15 s lead-in, as the config says (also for a model trained
# before the config said so)
hold=inference.first_token_steps=6

if run_stage 1; then
  log "1: corpora → $data ($speakers), $adapt_data ($held_out)"
  $PY recipes/synthetic/prepare.py --out "$data" --size 4000 --speakers "$speakers" --n-val 25 --n-test 50
  $PY recipes/synthetic/prepare.py --out "$adapt_data" --size 620 --speakers "$held_out" --n-val 10 --n-test 50 \
    --seed 4321
fi
if run_stage 2; then
  log "2: features"
  $TTS features --data "$data" --config "$config"
  $TTS features --data "$adapt_data" --config "$config"
fi
if run_stage 3; then
  log "3: train → $exp"
  # shellcheck disable=SC2046
  $TTS train --config "$config" --data "$data" --out "$exp" --no-progress $(resume_flag "$exp") \
    train.max_steps="$steps"
fi
if run_stage 4; then
  log "4: evaluate each speaker's test sentences → $exp/eval"
  # shellcheck disable=SC2086
  $TTS evaluate --checkpoint "$exp/best.pt" --data "$data" --split test --out "$exp/eval" $eval_limit $no_mos \
    "$hold"
fi
if run_stage 5; then
  for speaker in ${speakers//,/ }; do
    log "5: the unadapted model as $speaker on $held_out's test → $exp/on_${held_out}_as_$speaker"
    # shellcheck disable=SC2086
    $TTS evaluate --checkpoint "$exp/best.pt" --data "$adapt_data" --split test --speaker "$speaker" \
      --out "$exp/on_${held_out}_as_$speaker" $eval_limit $no_mos "$hold"
  done
fi
if run_stage 6; then
  for m in $minutes; do
    subset=${adapt_data}_${m}min; out=exp/adapt_${held_out}_${m}min
    [ -d "$subset" ] || $PY egs/synthetic/minutes_subset.py --data "$adapt_data" --config "$config" --minutes "$m" \
      --out "$subset"
    log "6: adapt to $held_out from $m minutes → $out"
    # shellcheck disable=SC2046
    $TTS train --config "$config" --data "$subset" --out "$out" --no-progress $(resume_flag "$out") \
      train.warm_start="$exp/best.pt" train.max_steps="$adapt_steps" train.validate_every=100 \
      train.checkpoint_every=100 train.keep_last=20 optim.schedule.warmup_steps=20 optim.schedule.decay_steps=300
    for step in $curve_steps; do  # the learning curve against training time: the first test sentences
      ckpt=$(printf "%s/checkpoint_%08d.pt" "$out" "$step")
      [ -f "$out/eval_$step/summary.json" ] || $TTS evaluate --checkpoint "$ckpt" --data "$adapt_data" --split test \
        --speaker "$held_out" --limit "$curve_limit" --no-mos --out "$out/eval_$step"
    done
    # shellcheck disable=SC2086
    [ -f "$out/eval/summary.json" ] || $TTS evaluate --checkpoint "$out/best.pt" --data "$adapt_data" --split test \
      --speaker "$held_out" --out "$out/eval" $eval_limit $no_mos
  done
fi
