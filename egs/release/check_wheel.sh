#!/usr/bin/env bash
# Build the wheel (python -m build), install it in a fresh virtual environment outside the
# repository, and synthesize with the bundled voice from there: the wheel carries the models.
#   bash egs/release/check_wheel.sh [WORK_DIR]     (default: a temporary folder, removed afterwards)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY=${PY:-$ROOT/.venv/bin/python}
WORK=${1:-$(mktemp -d)}
mkdir -p "$WORK"
[ -z "${1:-}" ] && trap 'rm -rf "$WORK"' EXIT

echo "== building the wheel"
"$PY" -m build --wheel --outdir "$WORK/dist" "$ROOT" > "$WORK/build.log" 2>&1 || { tail -20 "$WORK/build.log"; exit 1; }
WHEEL=$(ls "$WORK"/dist/*.whl)
echo "$(basename "$WHEEL"): $(du -h "$WHEEL" | cut -f1)"

echo "== a fresh virtual environment with the wheel (torch: the pinned CPU build first)"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q torch==2.13.0
"$WORK/venv/bin/python" -m pip install -q "$WHEEL"

echo "== tts synthesize from outside the repository"
cd "$WORK"
"$WORK/venv/bin/tts" synthesize --text "The wheel carries the voice and its vocoder." --out "$WORK/out/hello.wav"
"$WORK/venv/bin/python" - "$WORK/out/hello.wav" <<'PY'
import sys

import soundfile as sf

import tts

wav, rate = sf.read(sys.argv[1])
assert "site-packages" in tts.__file__, f"tts was imported from {tts.__file__}, not from the installed wheel"
assert len(wav) > rate // 2 and abs(wav).max() > 0.01
print(f"ok: {len(wav) / rate:.2f} s of audio at {rate} Hz, tts imported from {tts.__file__}")
PY
