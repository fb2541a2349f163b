#!/usr/bin/env bash
# Score a training student's checkpoints as they appear (docs/vocoders.md, "How it got there"): each
# named update is exported, reads 40 validation sentences of the bundled voice, and is compared
# sentence by sentence with the teacher (HiFi-GAN V1) and with the bundled student reading the same
# sentences; a release is chosen on these, never on the test split. Waits for a checkpoint that is
# not written yet, so it can run beside the training (one thread; it slows the run a little).
#   bash egs/synthetic/student_checkpoints.sh RUN OUT STEP [STEP ...]
#   e.g. bash egs/synthetic/student_checkpoints.sh exp/student_v3_anneal exp/student_v3 900 1500 2100
# Writes OUT/sSTEP.pt, OUT/val40_sSTEP/ and OUT/paired_{teacher,bundled}_sSTEP.json (student − the other,
# ± SE); the two baselines once per voice, into exp/vocoders/val40_hifigan_<voice> and val40_bundled_<student>_<voice>
# (<voice>, <student>: the first 8 hex digits of the bundled voice's and the bundled student's SHA-256), so a new
# release of either is read afresh.
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}; PY=${PY:-.venv/bin/python}
[ $# -ge 3 ] || { echo "usage: $0 RUN OUT STEP [STEP ...]" >&2; exit 2; }
run=$1; out=$2; shift 2
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
log() { echo "[$(date +%H:%M:%S)] $*"; }
mkdir -p "$out" exp/vocoders
val40() { $TTS evaluate --data data/synthetic --split val --limit 40 --vocoder "$1" --out "$2"; }
digest() { sha256sum "$1" | cut -c1-8; }
voice=$(digest tts/pretrained/tacotron2_synthetic.pt)
teacher=exp/vocoders/val40_hifigan_$voice
[ -f "$teacher/summary.json" ] || val40 hifigan "$teacher"
bundled=exp/vocoders/val40_bundled_$(digest tts/pretrained/vocos_student.pt)_$voice
[ -f "$bundled/summary.json" ] || val40 vocos-student "$bundled"
for step in "$@"; do
  ckpt=$run/checkpoint_$(printf %08d "$step").pt
  until [ -f "$ckpt" ]; do sleep 30; done   # written atomically: once it is there, it is whole
  log "update $step"
  $TTS export "$ckpt" --out "$out/s$step.pt"
  [ -f "$out/val40_s$step/summary.json" ] || val40 "$out/s$step.pt" "$out/val40_s$step"
  $PY egs/synthetic/paired.py "$teacher" "$out/val40_s$step" > "$out/paired_teacher_s$step.json"
  $PY egs/synthetic/paired.py "$bundled" "$out/val40_s$step" > "$out/paired_bundled_s$step.json"
  $PY -c "import json, sys; d = json.load(open(sys.argv[1])); print(sys.argv[2], 'student − teacher:', \
', '.join(f'{k} {d[k][\"b_minus_a\"]:+.3f} ± {d[k][\"standard_error\"]:.3f}' for k in ('dnsmos_p808', 'dnsmos_ovrl', 'wer')))" \
    "$out/paired_teacher_s$step.json" "$step"
done
