#!/usr/bin/env bash
# The speed figures of a voice and its vocoder, each beside its target (the fast-voice issue's
# "Done when"): end-to-end RTF at batch 1 on 2 threads (the bundled voice, text to wav, PyTorch and
# onnxruntime, float32 and with an int8 decoder step), `tts bench model` at batch 1 and 16, `tts bench serve` (50 requests at once),
# `tts bench streaming` (time to first audio) and every vocoder's RTF. Nothing else may run meanwhile:
# --pause PGID stops a process group (a training run) for the duration and continues it after,
# whatever happens (repeat it for several).
#   bash egs/bench/voice_speed.sh [--vocoder vocos-student] [--pause PGID ...] OUT
# OUT/<benchmark>.json: each benchmark's output; OUT/targets.json and OUT/targets.md: the figures
# against their targets, with the CPU, the commit and the date.
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}; PY=${PY:-.venv/bin/python}
vocoder=vocos-student; paused=()
while [ $# -gt 0 ]; do
  case "$1" in
    --vocoder) vocoder=$2; shift 2;;
    --pause) paused+=("$2"); shift 2;;
    *) break;;
  esac
done
[ $# -eq 1 ] || { echo "usage: voice_speed.sh [--vocoder V] [--pause PGID ...] OUT" >&2; exit 2; }
out=$1
mkdir -p "$out"
source egs/bench/pause_groups.sh
trap resume_groups EXIT
pause_groups "${paused[@]+"${paused[@]}"}"

bench() {  # bench NAME ARGS...: one benchmark's JSON into OUT/NAME.json, written whole or not at all
  local name=$1; shift
  echo "[$(date +%H:%M:%S)] tts bench $*" >&2
  $TTS bench "$@" > "$out/.$name.json"
  mv "$out/.$name.json" "$out/$name.json"
}
$PY -c "import sys; from tts.checkpoint import read_bundled; from tts.config import save_config; \
save_config(read_bundled().config, sys.argv[1])" "$out/bundled_voice.yaml"
bench onnx onnx --vocoder "$vocoder" --threads 2 --int8
bench model model --config "$out/bundled_voice.yaml" --precisions fp32 --vocoder "$vocoder" --batch-sizes 1 16 --threads 2
bench serve serve --vocoder "$vocoder" --rounds 2
bench streaming streaming --vocoder "$vocoder" --threads 2
bench vocoder vocoder --threads 2
$PY egs/bench/voice_speed_targets.py "$out" --vocoder "$vocoder"
