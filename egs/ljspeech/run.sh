#!/usr/bin/env bash
# LJSpeech with Tacotron2 at NVIDIA's sizes (a GPU job; use torchrun for several GPUs, see README).
#   bash egs/ljspeech/run.sh [--stage N] [--stop-stage M] [--data-dir /path/LJSpeech-1.1]
#        [--split nvidia|random] [--config configs/tacotron2.yaml] [--exp exp/ljspeech_tacotron2]
#        [--jobs N] [-- key=value overrides]
# NVIDIA's exact recipe instead: --config configs/tacotron2_nvidia.yaml --exp exp/ljspeech_nvidia
# Stages: 1 download/prepare → 2 features → 3 train → 4 synthesize → 5 evaluate + report
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/../.."
data=data/ljspeech; config=configs/tacotron2.yaml; exp=exp/ljspeech_tacotron2

corpus_stage() {
  local extra=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --data-dir) extra+=(--data-dir "$2"); shift 2;;
      --split) extra+=(--split "$2"); shift 2;;
      --jobs) shift 2;;
      *) echo "unknown option $1" >&2; exit 2;;
    esac
  done
  ${PY:-.venv/bin/python} recipes/ljspeech/prepare.py --out "$data" "${extra[@]+"${extra[@]}"}"
}

source egs/stages.sh
