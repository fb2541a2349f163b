#!/usr/bin/env bash
# The README's main job. With the bundled model: synthesize example sentences (numbers,
# abbreviations, a multi-sentence paragraph) into out/demo/ with wavs, alignment plots and an
# HTML page. Without one: show the frontend and a mel → Griffin-Lim round trip.
set -euo pipefail
cd "$(dirname "$0")/.."
TTS=${TTS:-.venv/bin/tts}
PY=${PY:-.venv/bin/python}
OUT=${OUT:-out/demo}
mkdir -p "$OUT"

echo "== text frontend (normalization → G2P → ids)"
"$TTS" g2p "Dr. Smith paid \$3.50 for 2 books on March 3rd, 1999."

if $PY -c "from tts.checkpoint import PRETRAINED; raise SystemExit(not PRETRAINED.is_file())"; then
  cat > "$OUT/sentences.txt" <<'TXT'
The quick brown fox jumps over the lazy dog.
Dr. Smith paid $3.50 for 2 books on March 3rd, 1999.
Mr. Jones arrives at 10:45 p.m. with 15% more luggage than last time.
I refuse to collect the refuse.
Printing differs from most of the arts. It is the art of the arts, and the mother of all knowledge. Nothing spreads ideas faster than the printed word.
TXT
  echo "== synthesizing $(wc -l < "$OUT/sentences.txt") texts with the bundled model"
  # the default vocoder; VOCODERS="hifigan griffin-lim" plays several side by side in index.html
  # shellcheck disable=SC2086
  "$TTS" synthesize --text-file "$OUT/sentences.txt" --out "$OUT/speech" ${VOCODERS:+--vocoder $VOCODERS}
  echo "open $OUT/speech/index.html (audio players + alignment plots)"
else
  echo "== no bundled model (tts/pretrained/): mel → Griffin-Lim round trip of recorded speech"
  espeak-ng -w "$OUT/reference.wav" "Printing, in the only sense with which we are at present concerned, differs from most if not from all the arts and crafts represented in the exhibition."
  "$TTS" resynth "$OUT/reference.wav" -o "$OUT/resynth.wav"
  echo "listen to $OUT/reference.wav and $OUT/resynth.wav"
fi
