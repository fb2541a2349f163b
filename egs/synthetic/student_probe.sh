#!/usr/bin/env bash
# Why the fast student is a Vocos (docs/vocoders.md, "The fast student"): HiFi-GAN V2's generator
# and the Vocos generator trained side by side for the same updates on the same teacher waveforms
# (the first 200 training utterances), the same segments, batches and reconstruction losses, no
# discriminator; each reports the validation mel L1 to the teacher and its seconds per update.
# Run it with the machine to itself (the seconds are compared as a ratio):
#   bash egs/synthetic/student_probe.sh [--steps 200] [--out exp/student_probe]
# Needs the bundled voice's feature cache (the first stage of egs/synthetic/vocos_student.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}; PY=${PY:-.venv/bin/python}
steps=200; out=exp/student_probe
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2;;
    --out) out=$2; shift 2;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
same=(train.max_steps="$steps" train.validate_every="$steps" train.checkpoint_every="$steps"
      vocoder.train_utterances=200 vocoder.n_val_utterances=6 vocoder.adversarial_start="$steps")
for student in vocos hifigan; do
  if [ "$student" = vocos ]; then config=configs/vocos_student.yaml; extra=()
  else  # V2's generator under the Vocos student's data, optimizer and losses
    config=configs/hifigan_student.yaml
    extra=(vocoder.mels=teacher_forced vocoder.acoustic_checkpoint=tts/pretrained/tacotron2_synthetic.pt
           vocoder.lr=0.0005 vocoder.waveform_weight=45.0 vocoder.stft_weight=2.0 train.grad_clip=1000.0)
  fi
  [ -f "$out/$student/checkpoint_$(printf %08d "$steps").pt" ] || \
    $TTS train-vocoder --config "$config" --data data/synthetic --out "$out/$student" "${same[@]}" "${extra[@]}"
done
$PY - "$out" "$steps" <<'EOF'
import json, sys
from pathlib import Path
out, steps = Path(sys.argv[1]), int(sys.argv[2])
for student in ("vocos", "hifigan"):
    rows = [json.loads(line) for line in (out / student / "metrics.jsonl").read_text().splitlines()]
    val = [r for r in rows if r.get("split") == "val" and r["step"] == steps][-1]
    print(json.dumps({"student": student, "updates": steps, "val_mel_l1_to_teacher": val["mel_l1"],
                      "seconds_per_update": round(val["train_seconds"] / steps, 3)}))
EOF
