#!/usr/bin/env bash
# The fast student (docs/vocoders.md, "The fast student"): a Vocos generator distilled from the
# pretrained HiFi-GAN V1 on a voice's teacher-forced mels (stage 1: reconstruction losses;
# stage 2: adversarial, from stage 1's generator, into <out>_gan), then scored beside its teacher
# on the 100 test sentences (paired) and timed beside Griffin-Lim. Every stage resumes: run the
# same command again after a stop. Needs the synthetic corpus (bash egs/synthetic/run.sh --stop-stage 1).
#   bash egs/synthetic/vocos_student.sh [--out exp/vocos_student] [--gan-steps N] [--voice CKPT] [--data D]
#                                       [--start GENERATOR] [--train-only] [-- key=value ...]
# --voice: the acoustic model whose teacher-forced mels the student learns from (default: the bundled
# voice), on corpus --data (default data/synthetic); --start: a trained student (e.g. the bundled
# tts/pretrained/vocos_student.pt) to continue adversarially from, in place of stage 1; --train-only:
# stop after stage 2, leaving the test split unread until a checkpoint is chosen on validation
# (egs/synthetic/student_checkpoints.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}; PY=${PY:-.venv/bin/python}
out=exp/vocos_student; gan_steps=2000; overrides=(); voice=""; data=data/synthetic; start=""; train_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2;;
    --gan-steps) gan_steps=$2; shift 2;;
    --voice) voice=$2; shift 2;;
    --data) data=$2; shift 2;;
    --start) start=$2; shift 2;;
    --train-only) train_only=1; shift;;
    --) shift; overrides=("$@"); break;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
log() { echo "[$(date +%H:%M:%S)] $*"; }
mkdir -p "$out" exp/vocoders
[ -n "$voice" ] && overrides=(vocoder.acoustic_checkpoint="$voice" "${overrides[@]+"${overrides[@]}"}")

log "the voice's feature cache (its teacher-forced mels are the student's inputs)"
$PY -c "import sys; from tts.checkpoint import read, read_bundled; from tts.config import save_config; \
save_config((read(sys.argv[2]) if sys.argv[2] else read_bundled()).config, sys.argv[1])" \
  "$out.voice_config.yaml" "$voice"
$TTS features --data "$data" --config "$out.voice_config.yaml"

# train <folder> <key=value ...>: a resumable train-vocoder run of configs/vocos_student.yaml
train() {
  local folder=$1; shift
  if ls "$folder"/checkpoint_*.pt >/dev/null 2>&1; then
    $TTS train-vocoder --config "$folder/config.yaml" --data "$data" --out "$folder" --resume "$@"
  else
    $TTS train-vocoder --config configs/vocos_student.yaml --data "$data" --out "$folder" "$@"
  fi
}
if [ -z "$start" ]; then
  log "stage 1: distil (the teacher vocodes 1,000 utterances once, then the student trains; resumable)"
  train "$out" "${overrides[@]+"${overrides[@]}"}"
  start="$out/best.pt"
fi
log "stage 2: $gan_steps adversarial updates from $start"
train "${out}_gan" train.warm_start="$start" vocoder.adversarial_start=0 vocoder.waveform_weight=0 \
  train.max_steps="$gan_steps" "${overrides[@]+"${overrides[@]}"}"
[ "$train_only" = 1 ] && { log "stopped after training (--train-only)"; exit 0; }
[ -f "$out/student.pt" ] || $TTS export "${out}_gan/checkpoint_$(printf %08d "$gan_steps").pt" --out "$out/student.pt"

log "the voice through the teacher and through the student: the 100 test sentences, paired"
# the teacher's reading is the voice's as much as the vocoder's: named after the bundled file, read afresh for a new release
voice_flag=(); teacher_eval=exp/vocoders/test_hifigan-ljspeech_$(sha256sum tts/pretrained/tacotron2_synthetic.pt | cut -c1-8)
if [ -n "$voice" ]; then voice_flag=(--checkpoint "$voice"); teacher_eval="$out/eval_test_teacher"; fi
[ -f "$teacher_eval/summary.json" ] || $TTS evaluate "${voice_flag[@]+"${voice_flag[@]}"}" --data data/synthetic \
  --split test --limit 100 --vocoder hifigan-ljspeech --out "$teacher_eval"
[ -f "$out/eval_test/summary.json" ] || $TTS evaluate "${voice_flag[@]+"${voice_flag[@]}"}" --data data/synthetic \
  --split test --limit 100 --vocoder "$out/student.pt" --out "$out/eval_test"
$PY egs/synthetic/paired.py "$teacher_eval" "$out/eval_test" | tee "$out/paired.json"

log "real-time factor on 2 threads, beside Griffin-Lim and the HiFi-GAN configs (machine to itself)"
$TTS bench vocoder --threads 2 | tee "$out/bench_vocoder.json"
