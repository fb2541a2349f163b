#!/usr/bin/env bash
# The README's main job: show the frontend and the mel → Griffin-Lim path on this machine, offline.
# Outputs land in out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
TTS=${TTS:-.venv/bin/tts}
OUT=${OUT:-out/demo}
mkdir -p "$OUT"

echo "== text frontend (normalization → G2P → ids)"
for text in "Dr. Smith paid \$3.50 for 2 books on March 3rd, 1999." \
            "I refuse to collect the refuse at 10:45 p.m." \
            "The meeting moved to St. Mary's Church; 1,250 people came, 15% more than in 2019."; do
  echo "\$ tts g2p \"$text\""
  "$TTS" g2p "$text"
done

echo "== mel → Griffin-Lim round trip of recorded speech"
espeak-ng -w "$OUT/reference.wav" "Printing, in the only sense with which we are at present concerned, differs from most if not from all the arts and crafts represented in the exhibition."
"$TTS" resynth "$OUT/reference.wav" -o "$OUT/resynth.wav"
echo "listen to $OUT/reference.wav and $OUT/resynth.wav"
