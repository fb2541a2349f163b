#!/usr/bin/env bash
# The attention study's pilots (docs/attention_study.md, "Pilots"): short runs on the synthetic corpus
# that choose the budget and the shared settings, each a `tts train` of configs/attention_study.yaml
# with the overrides below, one CPU thread each (one lane), resumable: run it again and an unfinished
# pilot continues from its last checkpoint. Progress: exp/pilots/<name>/train.log, metrics.jsonl.
#   bash egs/synthetic/pilots.sh NAME [NAME ...]      (bash egs/synthetic/pilots.sh --list)
#   bash egs/synthetic/pilots.sh --evaluate NAME ...  the test split through HiFi-GAN and Whisper, of each
#                                                     finished pilot's best-validation checkpoint (one lane each)
# Environment: PY (python), DATA (corpus), PILOTS_OUT (exp/pilots), DEVICE (cpu; cuda on an accelerator,
# egs/synthetic/gpu_pilots.sh), EXTRA (more overrides for every pilot).
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
data=${DATA:-data/synthetic}
root=${PILOTS_OUT:-exp/pilots}
device=${DEVICE:-cpu}

# The batch: 12,800 mel frames (about 42 utterances, 67 updates an epoch), the most utterances per
# lane-hour but 3 % of the largest measured (docs/attention_study/throughput.json). 20 epochs: 1,340 updates.
EPOCHS20="train.max_steps=1340 data.max_frames_per_batch=12800 data.max_batch_size=128
  train.validate_every=134 train.checkpoint_every=134 train.keep_last=2 train.n_val_audio=1
  optim.schedule.warmup_steps=100 optim.schedule.decay_steps=670 optim.schedule.min_lr=1e-4
  loss.guided_attention.decay=0.998 loss.guided_attention.until_step=1340"

# The same lane-hours as 20 epochs at 12,800 frames, spent on 4x the updates of a quarter the size
# (3,200 frames, 1.4 s an update): does alignment and reading need updates rather than epochs?
UPDATES5360="train.max_steps=5360 data.max_frames_per_batch=3200 data.max_batch_size=128
  train.validate_every=536 train.checkpoint_every=536 train.keep_last=2 train.n_val_audio=1
  optim.schedule.warmup_steps=100 optim.schedule.decay_steps=2680 optim.schedule.min_lr=1e-4
  loss.guided_attention.decay=0.9995 loss.guided_attention.until_step=5360"

# Twice that (forward_u5360 tracked the speech but read at CER 0.31, 9.4x the reference): the budget pilot
UPDATES10720="train.max_steps=10720 data.max_frames_per_batch=3200 data.max_batch_size=128
  train.validate_every=1072 train.checkpoint_every=536 train.keep_last=2 train.n_val_audio=1
  optim.schedule.warmup_steps=100 optim.schedule.decay_steps=5360 optim.schedule.min_lr=1e-4
  loss.guided_attention.decay=0.99975 loss.guided_attention.until_step=10720"

KIND=model.tacotron2.attention.kind
GUIDE_OFF=loss.guided_attention.enabled=false
declare -A PILOTS=(
  [ls_lr1e-3_e20]="$KIND=location_sensitive optim.lr=1e-3 $EPOCHS20"
  [ls_lr2e-3_e20]="$KIND=location_sensitive optim.lr=2e-3 $EPOCHS20"
  # fair settings (issue 60, item 5): each mechanism's sensitive settings, lr 2e-3, on validation only
  [ls_lr4e-3_e20]="$KIND=location_sensitive optim.lr=4e-3 $EPOCHS20"
  [ls_noguide_e20]="$KIND=location_sensitive optim.lr=2e-3 $EPOCHS20 $GUIDE_OFF"
  [content_e20]="$KIND=content optim.lr=2e-3 $EPOCHS20"
  [content_noguide_e20]="$KIND=content optim.lr=2e-3 $EPOCHS20 $GUIDE_OFF"
  [sma_bias1_e20]="$KIND=stepwise_monotonic model.tacotron2.attention.energy_bias=1.0 optim.lr=2e-3 $EPOCHS20"
  [sma_bias3.5_e20]="$KIND=stepwise_monotonic model.tacotron2.attention.energy_bias=3.5 optim.lr=2e-3 $EPOCHS20"
  [forward_e20]="$KIND=forward optim.lr=2e-3 $EPOCHS20"
  [forward_u5360]="$KIND=forward optim.lr=2e-3 $UPDATES5360"
  [forward_u10720]="$KIND=forward optim.lr=2e-3 $UPDATES10720"
  [forward_ta_e20]="$KIND=forward model.tacotron2.attention.transition_agent=true optim.lr=2e-3 $EPOCHS20"
  [hard_e20]="$KIND=hard model.tacotron2.attention.anneal_steps=1340 optim.lr=2e-3 $EPOCHS20"
  [hard_fast_e20]="$KIND=hard model.tacotron2.attention.anneal_steps=670 optim.lr=2e-3 $EPOCHS20"
  [gmm_e20]="$KIND=gmm optim.lr=2e-3 $EPOCHS20"
  [dca_e20]="$KIND=dynamic_convolution optim.lr=2e-3 $EPOCHS20"
  # the smaller batch's schedule for every distinct mechanism (first on one GPU, egs/synthetic/gpu_pilots.sh
  # --set u5360), with the first looks' fair settings: guided attention on, stepwise monotonic's energy bias at
  # He et al.'s 3.5 (and 1.0), hard attention annealed over the whole run, location-sensitive also at 4e-3
  [stepwise_monotonic_u5360]="$KIND=stepwise_monotonic model.tacotron2.attention.energy_bias=3.5 optim.lr=2e-3 $UPDATES5360"
  [sma_bias1_u5360]="$KIND=stepwise_monotonic model.tacotron2.attention.energy_bias=1.0 optim.lr=2e-3 $UPDATES5360"
  [hard_u5360]="$KIND=hard model.tacotron2.attention.anneal_steps=5360 optim.lr=2e-3 $UPDATES5360"
  [ls_lr4e-3_u5360]="$KIND=location_sensitive optim.lr=4e-3 $UPDATES5360"
)
for kind in location_sensitive dynamic_convolution gmm content luong_general luong_local_m hybrid location luong_local_p; do
  PILOTS[${kind}_u5360]="$KIND=$kind optim.lr=2e-3 $UPDATES5360"
done

if [ "${1:-}" = "--evaluate" ]; then
  shift
  for name in "$@"; do
    out=$root/$name
    [ -f "$out/best.pt" ] || { echo "no $out/best.pt: train the pilot first" >&2; exit 2; }
    OMP_NUM_THREADS=1 nohup setsid .venv/bin/tts evaluate --checkpoint "$out/best.pt" --data "$data" --split test \
      --vocoder hifigan --out "$out/eval" > "$out/evaluate.log" 2>&1 &
    echo "evaluating $name (pid $!): $out/evaluate.log"
  done
  exit 0
fi
if [ "${1:-}" = "--list" ]; then
  for name in "${!PILOTS[@]}"; do echo "$name: ${PILOTS[$name]}" | tr -s ' \n' ' '; echo; done
  exit 0
fi
for name in "$@"; do
  overrides=${PILOTS[$name]:?unknown pilot $name (see --list)}
  out=$root/$name
  resume=(); ls "$out"/checkpoint_*.pt >/dev/null 2>&1 && resume=(--resume)
  mkdir -p "$out"
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=1 nohup setsid $PY -m tts.cli train --config configs/attention_study.yaml --data "$data" \
    --out "$out" --device "$device" --no-progress "${resume[@]+"${resume[@]}"}" $overrides ${EXTRA:-} \
    >> "$out/train.log" 2>&1 &
  echo "started $name (pid $!): $out/train.log"
done
