#!/usr/bin/env bash
# The everyday-text voice (docs/results.md, "A wider corpus"): the fortunes-only voice fine-tuned on
# the synthetic corpus's training split joined with 8,000 diphone-covering sentences and 600 short
# utterances, then scored beside it (the test split and the robustness suite, through the default
# vocoder). Every stage resumes: run the same command again after a stop.
#   bash egs/synthetic/everyday_voice.sh [--steps 1500] [--out exp/everyday] [--start CKPT] [--releases "last best average"]
#                                        [--words] [--corpora-only] [-- key=value ...]
# --start: the voice to fine-tune (default: the release before the bundled one, from git history);
# --releases: which to export and score (best: the best validation checkpoint, the only one chosen
# without reading a test set; none: train only, to choose among the checkpoints otherwise); --words: train on data/everyday_words, the same corpus joined with carrier
# sentences that say each of the 20,000 most frequent English words at least twice (prepare.py --texts
# words). JOBS (default 2): Festival processes speaking the corpora.
# Needs the synthetic corpus (bash egs/synthetic/run.sh --stop-stage 1). Run 10 (bundled 2026-11-25 to 12-07) is
# `--steps 1500 -- train.amp=bf16`'s release_last.pt, and the bundled run 11 two more runs of this script from it
# (tts/pretrained/MODEL_CARD.md, "Reproduce"; docs/results.md, "A wider corpus"): about
# 30 min (AMD EPYC Zen 4, JOBS=2) to 1.5 h for the corpora and 1 h of training on one thread, then
# 30-40 min per scored release.
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}; PY=${PY:-.venv/bin/python}
steps=1500; out=exp/everyday; overrides=(); corpora_only=0; jobs=${JOBS:-2}; start_from=""
releases="last best average"; words=0
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2;;
    --out) out=$2; shift 2;;
    --corpora-only) corpora_only=1; shift;;
    --words) words=1; shift;;
    --start) start_from=$2; shift 2;;
    --releases) releases=$2; shift 2;;
    --) shift; overrides=("$@"); break;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
log() { echo "[$(date +%H:%M:%S)] $*"; }
mkdir -p "$out"

log "corpora: broad (8,000 sentences covering diphones) and short (600 one-to-four-word utterances)"
$PY recipes/synthetic/prepare.py --out data/broad --texts broad --size 8000 --cover-target 5 --jobs "$jobs"
$PY recipes/synthetic/prepare.py --out data/short --texts fortunes --size 200 --short 600 --n-val 0 --n-test 0 \
  --seed 4321 --jobs "$jobs"
[ -f data/everyday/metadata.csv ] || $PY recipes/synthetic/combine.py --base data/synthetic --add data/broad data/short \
  --out data/everyday
corpus=data/everyday
if [ "$words" = 1 ]; then
  log "corpus: carrier sentences for the common words data/everyday says fewer than twice"
  $PY recipes/synthetic/prepare.py --out data/words --texts words --words-from data/everyday --words-top 20000 \
    --words-min-count 2 --n-val 0 --n-test 0 --jobs "$jobs"
  [ -f data/everyday_words/metadata.csv ] || $PY recipes/synthetic/combine.py --base data/synthetic \
    --add data/broad data/short data/words --out data/everyday_words
  corpus=data/everyday_words
fi
[ "$corpora_only" = 1 ] && exit 0

# The starting point: the release before this one (the fortunes-only voice, bundled until
# 2026-11-25), from the repository's history; since then the bundled file is this script's result.
start="$out/start.pt"
if [ ! -f "$start" ] && [ -n "$start_from" ]; then
  cp "$start_from" "$start.tmp" && mv "$start.tmp" "$start"
elif [ ! -f "$start" ]; then
  git show 9a3305d:tts/pretrained/tacotron2_synthetic.pt > "$start.tmp" && mv "$start.tmp" "$start"
fi
log "the starting voice's own config → $out/bundled_config.yaml"
$PY -c "import sys; from tts.checkpoint import read; from tts.config import save_config; \
save_config(read(sys.argv[1]).config, sys.argv[2])" "$start" "$out/bundled_config.yaml"
$TTS features --data "$corpus" --config "$out/bundled_config.yaml"

log "fine-tune $steps updates from the starting voice (its adversarial postnet kept)"
resume=(); ls "$out"/ft/checkpoint_*.pt >/dev/null 2>&1 && resume=(--resume)
$TTS train --config "$out/bundled_config.yaml" --data "$corpus" --out "$out/ft" "${resume[@]+"${resume[@]}"}" \
  train.warm_start="$start" "train.freeze=[postnet]" \
  loss.adversarial.weight=0 loss.adversarial.feature_matching_weight=0 train.max_steps="$steps" \
  train.checkpoint_every=250 train.validate_every=250 train.keep_last=8 optim.schedule.decay_steps=750 \
  "${overrides[@]+"${overrides[@]}"}"

[ "$releases" = none ] && exit 0
log "releases ($releases): the last checkpoint, the best validation checkpoint, the mean of the last four checkpoints' weights"
for release in $releases; do
  case "$release" in
    last) sources=("$out/ft/checkpoint_$(printf %08d "$steps").pt");;
    best) sources=("$out/ft/best.pt");;
    average) mapfile -t sources < <(ls "$out"/ft/checkpoint_*.pt | sort | tail -n 4);;
    *) echo "error: unknown release $release (last, best, average)" >&2; exit 2;;
  esac
  [ -f "$out/release_$release.pt" ] || $TTS export "${sources[@]}" --fp32 --out "$out/release_$release.pt"
  log "evaluate $release: test split, then the robustness suite (with the everyday held-out sentences)"
  [ -f "$out/eval_test_$release/summary.json" ] || $TTS evaluate --checkpoint "$out/release_$release.pt" \
    --data data/synthetic --split test --limit 100 --out "$out/eval_test_$release"
  [ -f "$out/suite_$release/summary.json" ] || $TTS evaluate --checkpoint "$out/release_$release.pt" \
    --suite robustness --data data/synthetic --out "$out/suite_$release"
done
log "the starting voice, the same way (the comparison is paired over the same sentences)"
[ -f "$out/eval_test_start/summary.json" ] || $TTS evaluate --checkpoint "$start" --data data/synthetic --split test \
  --limit 100 --out "$out/eval_test_start"
[ -f "$out/suite_start/summary.json" ] || $TTS evaluate --checkpoint "$start" --suite robustness --data data/synthetic \
  --out "$out/suite_start"
for release in $releases; do
  $PY egs/synthetic/paired.py "$out/eval_test_start" "$out/eval_test_$release"
done
if [[ " $releases " == *" best "* ]]; then
  log "the reporting set (which no choice reads) for the best validation release"
  [ -f "$out/report_best/summary.json" ] || $TTS evaluate --checkpoint "$out/release_best.pt" --suite report \
    --out "$out/report_best"
fi
