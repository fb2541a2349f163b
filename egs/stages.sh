#!/usr/bin/env bash
# Shared stage runner for egs/<corpus>/run.sh. The corpus script records the caller's folder in
# `caller`, sets defaults, defines `corpus_stage` (stage 1) and sources this file, which parses the
# common options and runs
#   1 corpus → 2 features → 3 train → 4 synthesize → 5 evaluate (+ HTML report)
# Options: --stage N --stop-stage M --data DIR --config YAML --exp DIR --eval-limit N --jobs N
#          [-- key=value overrides]
# Paths given on the command line are taken relative to the folder run.sh was called from.
# Overrides reach features and training; the inference.* ones also reach synthesis and evaluation.
set -euo pipefail
PY=${PY:-.venv/bin/python}; TTS=${TTS:-.venv/bin/tts}
stage=${stage:-1}; stop_stage=${stop_stage:-5}; eval_limit=${eval_limit:-100}
overrides=(); corpus_args=(); jobs=()
absolute() { case "$1" in /*) echo "$1";; *) echo "$caller/$1";; esac; }
while [ $# -gt 0 ]; do
  case "$1" in
    --stage) stage=$2; shift 2;;
    --stop-stage) stop_stage=$2; shift 2;;
    --data) data=$(absolute "$2"); shift 2;;
    --config) config=$(absolute "$2"); shift 2;;
    --exp) exp=$(absolute "$2"); shift 2;;
    --eval-limit) eval_limit=$2; shift 2;;
    --jobs) jobs=(--jobs "$2"); corpus_args+=(--jobs "$2"); shift 2;;
    --data-dir) corpus_args+=(--data-dir "$(absolute "$2")"); shift 2;;
    --) shift; overrides=("$@"); break;;
    *) corpus_args+=("$1"); shift;;
  esac
done
inference_overrides=()
for o in "${overrides[@]+"${overrides[@]}"}"; do
  case "$o" in inference.*) inference_overrides+=("$o");; esac
done
run_stage() { [ "$stage" -le "$1" ] && [ "$stop_stage" -ge "$1" ]; }
log() { echo "[$(date +%H:%M:%S)] stage $*"; }
latest_checkpoint() { ls "$exp"/checkpoint_*.pt 2>/dev/null | sort | tail -n 1; }

if run_stage 1; then
  log "1: corpus → $data"
  corpus_stage "${corpus_args[@]+"${corpus_args[@]}"}"
fi
if run_stage 2; then
  log "2: features → $data/features/"
  $TTS features --data "$data" --config "$config" "${jobs[@]+"${jobs[@]}"}" "${overrides[@]+"${overrides[@]}"}"
fi
if run_stage 3; then
  log "3: train $config → $exp"
  resume=(); [ -n "$(latest_checkpoint)" ] && resume=(--resume)
  $TTS train --config "$config" --data "$data" --out "$exp" "${resume[@]+"${resume[@]}"}" "${overrides[@]+"${overrides[@]}"}"
fi
if run_stage 4; then
  ckpt=$(latest_checkpoint); [ -n "$ckpt" ] || { echo "stage 4: no checkpoint in $exp (run stage 3)" >&2; exit 2; }
  log "4: synthesize 10 held-out test sentences with $ckpt → $exp/synth"
  $TTS synthesize --checkpoint "$ckpt" --data "$data" --split test --limit 10 --out "$exp/synth" \
    "${inference_overrides[@]+"${inference_overrides[@]}"}"
fi
if run_stage 5; then
  ckpt=$(latest_checkpoint); [ -n "$ckpt" ] || { echo "stage 5: no checkpoint in $exp (run stage 3)" >&2; exit 2; }
  log "5: evaluate $ckpt on $eval_limit test utterances → $exp/eval"
  meters=(); $PY -c "import faster_whisper" 2>/dev/null || { meters=(--no-asr); echo "faster-whisper missing: no WER (pip install -e '.[eval]')"; }
  $PY -c "import speechmos" 2>/dev/null || { meters+=(--no-mos); echo "speechmos missing: no DNSMOS (pip install -e '.[eval]')"; }
  $TTS evaluate --checkpoint "$ckpt" --data "$data" --split test --limit "$eval_limit" --out "$exp/eval" \
    "${meters[@]+"${meters[@]}"}" "${inference_overrides[@]+"${inference_overrides[@]}"}"
  $TTS report "$exp"
fi
