#!/usr/bin/env bash
# The voice's next candidate (docs/results.md, "Three passes after the short clips x4"), two stages, each
# resumable (run the script again after a stop):
#   A: the short-clips-x4 run (lr 1e-4, the bundled voice's batch, one-pass scheduled sampling, short clips
#      teacher-forced), 900 updates from the bundled voice: what kept the single words;
#   B: from A's update 900, three-pass scheduled sampling (what read the reporting set at 1.35x), 450 updates,
#      still lr 1e-4 with the short clips x4.
# Gates, fixed before any figure (2026-12-02): egs/synthetic/voice_gates.sh on B's checkpoints.
#   bash egs/synthetic/voice_sso3.sh [--amp off|bf16]   (off on a CPU without bf16 arithmetic; bf16 where it has it)
set -euo pipefail
cd "$(dirname "$0")/../.."
amp=off
[ "${1:-}" = --amp ] && amp=$2
common=(train.amp="$amp" optim.lr=1e-4 train.scheduled_sampling.probability=0.5 train.scheduled_sampling.min_frames=150
        "data.oversample=[{prefix: SHT, times: 4}]")
bash egs/synthetic/everyday_voice.sh --start tts/pretrained/tacotron2_synthetic.pt --steps 900 --out exp/everyday_sso \
  --releases none -- "${common[@]}" train.scheduled_sampling.ramp_steps=300 train.validate_every=300 train.checkpoint_every=300
bash egs/synthetic/everyday_voice.sh --start exp/everyday_sso/ft/checkpoint_00000900.pt --steps 450 --out exp/everyday_sso3 \
  --releases none -- "${common[@]}" train.scheduled_sampling.ramp_steps=0 train.scheduled_sampling.passes=3 \
  train.validate_every=150 train.checkpoint_every=150
bash egs/synthetic/voice_gates.sh exp/everyday_sso3 sso3 150 300 450
