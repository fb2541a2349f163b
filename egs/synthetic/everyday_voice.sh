#!/usr/bin/env bash
# The everyday-text voice (docs/results.md, "A wider corpus"): the bundled voice fine-tuned on the
# synthetic corpus's training split joined with 8,000 diphone-covering sentences and 600 short
# utterances, then scored where the bundled voice is (the test split and the robustness suite,
# through the default vocoder). Every stage resumes: run the same command again after a stop.
#   bash egs/synthetic/everyday_voice.sh [--steps 1500] [--out exp/everyday] [-- key=value ...]
# Needs the synthetic corpus (bash egs/synthetic/run.sh --stop-stage 1). About 1.5 h on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}; PY=${PY:-.venv/bin/python}
steps=1500; out=exp/everyday; overrides=()
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2;;
    --out) out=$2; shift 2;;
    --) shift; overrides=("$@"); break;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
log() { echo "[$(date +%H:%M:%S)] $*"; }
mkdir -p "$out"

log "corpora: broad (8,000 sentences covering diphones) and short (600 one-to-four-word utterances)"
$PY recipes/synthetic/prepare.py --out data/broad --texts broad --size 8000 --cover-target 5 --jobs 2
$PY recipes/synthetic/prepare.py --out data/short --texts fortunes --size 200 --short 600 --n-val 0 --n-test 0 \
  --seed 4321 --jobs 2
[ -f data/everyday/metadata.csv ] || $PY recipes/synthetic/combine.py --base data/synthetic --add data/broad data/short \
  --out data/everyday

log "the bundled voice's own config → $out/bundled_config.yaml"
$PY -c "import sys; from tts.checkpoint import read_bundled; from tts.config import save_config; \
save_config(read_bundled().config, sys.argv[1])" "$out/bundled_config.yaml"
$TTS features --data data/everyday --config "$out/bundled_config.yaml"

log "fine-tune $steps updates from the bundled voice (its adversarial postnet kept)"
resume=(); ls "$out"/ft/checkpoint_*.pt >/dev/null 2>&1 && resume=(--resume)
$TTS train --config "$out/bundled_config.yaml" --data data/everyday --out "$out/ft" "${resume[@]+"${resume[@]}"}" \
  train.warm_start=tts/pretrained/tacotron2_synthetic.pt "train.freeze=[postnet]" \
  loss.adversarial.weight=0 loss.adversarial.feature_matching_weight=0 train.max_steps="$steps" \
  train.checkpoint_every=250 train.validate_every=250 train.keep_last=8 optim.schedule.decay_steps=750 \
  "${overrides[@]+"${overrides[@]}"}"

log "releases: the best validation checkpoint, and the mean of the last four checkpoints' weights"
[ -f "$out/release_best.pt" ] || $TTS export "$out/ft/best.pt" --fp32 --out "$out/release_best.pt"
mapfile -t last < <(ls "$out"/ft/checkpoint_*.pt | sort | tail -n 4)
[ -f "$out/release_average.pt" ] || $TTS export "${last[@]}" --fp32 --out "$out/release_average.pt"

for release in best average; do
  log "evaluate $release: test split, then the robustness suite (with the everyday held-out sentences)"
  [ -f "$out/eval_test_$release/summary.json" ] || $TTS evaluate --checkpoint "$out/release_$release.pt" \
    --data data/synthetic --split test --limit 100 --out "$out/eval_test_$release"
  [ -f "$out/suite_$release/summary.json" ] || $TTS evaluate --checkpoint "$out/release_$release.pt" \
    --suite robustness --data data/synthetic --out "$out/suite_$release"
done
log "the bundled voice, the same way (the comparison is paired over the same sentences)"
[ -f "$out/eval_test_bundled/summary.json" ] || $TTS evaluate --data data/synthetic --split test --limit 100 \
  --out "$out/eval_test_bundled"
[ -f "$out/suite_bundled/summary.json" ] || $TTS evaluate --suite robustness --data data/synthetic \
  --out "$out/suite_bundled"
for release in best average; do
  $PY egs/synthetic/paired.py "$out/eval_test_bundled" "$out/eval_test_$release"
done
