#!/usr/bin/env bash
# End-to-end experiment on the offline synthetic corpus (Festival HTS slt voice).
#   bash egs/synthetic/run.sh [--stage N] [--stop-stage M] [--size 3000] [--engine festival|flite]
#                             [--config configs/tacotron2_small.yaml] [--exp exp/synthetic_tacotron2] [-- overrides...]
# Stages: 1 corpus → 2 features → 3 train → 4 synthesize → 5 evaluate
set -euo pipefail
cd "$(dirname "$0")/../.."

stage=1; stop_stage=5; size=3000; engine=festival
data=data/synthetic; config=configs/tacotron2_small.yaml; exp=exp/synthetic_tacotron2
PY=${PY:-.venv/bin/python}; TTS=${TTS:-.venv/bin/tts}
overrides=()
while [ $# -gt 0 ]; do
  case "$1" in
    --stage) stage=$2; shift 2;;
    --stop-stage) stop_stage=$2; shift 2;;
    --size) size=$2; shift 2;;
    --engine) engine=$2; shift 2;;
    --data) data=$2; shift 2;;
    --config) config=$2; shift 2;;
    --exp) exp=$2; shift 2;;
    --) shift; overrides=("$@"); break;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
run_stage() { [ "$stage" -le "$1" ] && [ "$stop_stage" -ge "$1" ]; }
log() { echo "[$(date +%H:%M:%S)] stage $*"; }

if run_stage 1; then
  log "1: corpus ($size utterances, $engine slt) → $data"
  $PY recipes/synthetic/prepare.py --out "$data" --size "$size" --engine "$engine"
fi
if run_stage 2; then
  log "2: features → $data/features/"
  $TTS features --data "$data" --config "$config"
fi
if run_stage 3; then
  log "3: train $config → $exp"
  resume=(); ls "$exp"/checkpoint_*.pt >/dev/null 2>&1 && resume=(--resume)
  $TTS train --config "$config" --data "$data" --out "$exp" "${resume[@]}" "${overrides[@]}"
fi
if run_stage 4; then
  log "4: synthesize held-out test sentences"
  echo "stage 4 (synthesize) is not implemented yet: see issue 'Synthesis from text'" >&2
fi
if run_stage 5; then
  log "5: evaluate"
  echo "stage 5 (evaluate) is not implemented yet: see issue 'Synthesis from text'" >&2
fi
