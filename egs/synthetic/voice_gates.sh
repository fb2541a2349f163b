#!/usr/bin/env bash
# The gates a voice candidate passes before the reporting set reads it (docs/results.md, "A wider corpus"), fixed
# before any candidate's figures and the same for every candidate since 2026-12-02 (gate 1 reads 300 words since
# 2026-12-06 night, where it read the first 100: one reading's standard error falls from 0.03 to about 0.018):
#   1. every listed checkpoint reads the 100 one_word_choice and the 200 one_word_choice_more words, paired against
#      the bundled voice read on the same machine (exp/one_word_choice{,_more}/bundled_HASH, HASH the first 8 hex
#      digits of the bundled file's SHA-256, so a new release is read afresh; the release of 2026-11-25, which every
#      gate until 2026-12-07 read against, is bundled_8d8e883c); the latest within 0.02 of it goes on;
#   2. it reads the everyday held-out set free-running (exposure_wer.py); below 0.0500 it goes on;
#   3. it is exported and read once on the reporting set, the test split and the suite (one_word, long), each
#      through the default vocoder.
# Each gate says where it stops. Resumable: what is already read is not read again.
#   bash egs/synthetic/voice_gates.sh RUN NAME STEP...
# RUN: the everyday_voice.sh output folder (checkpoints in RUN/ft); NAME: the prefix of the choice-set readings
# (exp/one_word_choice/NAME_STEP and exp/one_word_choice_more/NAME_STEP; the pooled comparison in the first's
# paired.json).
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}; PY=${PY:-.venv/bin/python}
[ $# -ge 3 ] || { echo "usage: voice_gates.sh RUN NAME STEP..." >&2; exit 2; }
run=$1; name=$2; shift 2
steps=("$@")
log() { echo "[$(date +%H:%M:%S)] $*"; }
checkpoint() { echo "$run/ft/checkpoint_$(printf %08d "$1").pt"; }
choice_sets=(one_word_choice one_word_choice_more)
bundled=bundled_$(sha256sum tts/pretrained/tacotron2_synthetic.pt | cut -c1-8)
for category in "${choice_sets[@]}"; do
  [ -f "exp/$category/$bundled/summary.json" ] || $TTS evaluate --suite robustness --categories "$category" \
    --no-mos --out "exp/$category/$bundled"
done
for step in "${steps[@]}"; do
  for category in "${choice_sets[@]}"; do
    out=exp/$category/${name}_$step
    [ -f "$out/summary.json" ] || $TTS evaluate --checkpoint "$(checkpoint "$step")" --suite robustness \
      --categories "$category" --no-mos --out "$out"
  done
  $PY egs/synthetic/paired.py "exp/one_word_choice/$bundled" "exp/one_word_choice/${name}_$step" \
    --with "exp/one_word_choice_more/$bundled" "exp/one_word_choice_more/${name}_$step" --by-reference \
    > "exp/one_word_choice/${name}_$step/paired.json"
done
chosen=""
for ((i = ${#steps[@]} - 1; i >= 0; i--)); do
  step=${steps[$i]}
  if $PY -c "import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))['recognized']['b_minus_a'] >= -0.02 else 1)" \
      "exp/one_word_choice/${name}_$step/paired.json"; then chosen=$step; break; fi
done
[ -n "$chosen" ] || { log "no checkpoint of $run keeps the choice words within 0.02: stop"; exit 0; }
log "update $chosen keeps the choice words within 0.02: the everyday held-out set reads it"
exposure=$run/exposure_$chosen.json
[ -f "$exposure" ] || $PY egs/synthetic/exposure_wer.py --checkpoint "$(checkpoint "$chosen")" --limit 100 \
  --ways free_running --baseline docs/everyday_voice/exposure_wer.json --out "$exposure"
if ! $PY -c "import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))['summary']['wer']['free_running'] < 0.05 else 1)" \
    "$exposure"; then
  log "update $chosen reads the everyday held-out set at 0.0500 or worse: stop"; exit 0
fi
log "update $chosen reads the everyday held-out set below 0.0500: the reporting set, test split and suite read it"
release=$run/release_$chosen.pt
[ -f "$release" ] || $TTS export "$(checkpoint "$chosen")" --fp32 --out "$release"
[ -f "$run/report_$chosen/summary.json" ] || $TTS evaluate --checkpoint "$release" --suite report \
  --out "$run/report_$chosen"
[ -f "$run/eval_test_$chosen/summary.json" ] || $TTS evaluate --checkpoint "$release" --data data/synthetic \
  --split test --limit 100 --out "$run/eval_test_$chosen"
[ -f "$run/suite_$chosen/summary.json" ] || $TTS evaluate --checkpoint "$release" --suite robustness \
  --categories one_word long --data data/synthetic --out "$run/suite_$chosen"
