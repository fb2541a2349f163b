#!/usr/bin/env bash
# End-to-end experiment on the offline synthetic corpus (Festival HTS slt voice), on a CPU.
#   bash egs/synthetic/run.sh [--stage N] [--stop-stage M] [--size 3000] [--engine festival|flite]
#        [--config configs/tacotron2_small.yaml] [--exp exp/synthetic_tacotron2] [--jobs N] [-- key=value overrides]
# Transformer-TTS instead:  --config configs/transformer_tts_small.yaml --exp exp/synthetic_transformer
# Stages: 1 corpus → 2 features → 3 train → 4 synthesize → 5 evaluate + report
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/../.."
data=data/synthetic; config=configs/tacotron2_small.yaml; exp=exp/synthetic_tacotron2

corpus_stage() {
  local size=3000 engine=festival extra=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --size) size=$2; shift 2;;
      --engine) engine=$2; shift 2;;
      --jobs) extra+=(--jobs "$2"); shift 2;;
      *) echo "unknown option $1" >&2; exit 2;;
    esac
  done
  ${PY:-.venv/bin/python} recipes/synthetic/prepare.py --out "$data" --size "$size" --engine "$engine" "${extra[@]+"${extra[@]}"}"
}

source egs/stages.sh
