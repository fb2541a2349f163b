#!/usr/bin/env bash
# The fast student (docs/vocoders.md, "The fast student"): a Vocos generator distilled from the
# pretrained HiFi-GAN V1 on the bundled voice's teacher-forced mels (stage 1: reconstruction losses;
# stage 2: adversarial, from stage 1's generator, into <out>_gan), then scored beside its teacher
# on the 100 test sentences (paired) and timed beside Griffin-Lim. Every stage resumes: run the
# same command again after a stop. Needs the synthetic corpus (bash egs/synthetic/run.sh --stop-stage 1).
#   bash egs/synthetic/vocos_student.sh [--out exp/vocos_student] [--gan-steps N] [-- key=value ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}; PY=${PY:-.venv/bin/python}
out=exp/vocos_student; gan_steps=2000; overrides=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2;;
    --gan-steps) gan_steps=$2; shift 2;;
    --) shift; overrides=("$@"); break;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
log() { echo "[$(date +%H:%M:%S)] $*"; }
mkdir -p "$out" exp/vocoders

log "the bundled voice's feature cache (its teacher-forced mels are the student's inputs)"
$PY -c "import sys; from tts.checkpoint import read_bundled; from tts.config import save_config; \
save_config(read_bundled().config, sys.argv[1])" "$out.bundled_config.yaml"
$TTS features --data data/synthetic --config "$out.bundled_config.yaml"

# train <folder> <key=value ...>: a resumable train-vocoder run of configs/vocos_student.yaml
train() {
  local folder=$1; shift
  if ls "$folder"/checkpoint_*.pt >/dev/null 2>&1; then
    $TTS train-vocoder --config "$folder/config.yaml" --data data/synthetic --out "$folder" --resume "$@"
  else
    $TTS train-vocoder --config configs/vocos_student.yaml --data data/synthetic --out "$folder" "$@"
  fi
}
log "stage 1: distil (the teacher vocodes 1,000 utterances once, then the student trains; resumable)"
train "$out" "${overrides[@]+"${overrides[@]}"}"
log "stage 2: $gan_steps adversarial updates from stage 1's best generator"
train "${out}_gan" train.warm_start="$out/best.pt" vocoder.adversarial_start=0 vocoder.waveform_weight=0 \
  train.max_steps="$gan_steps" "${overrides[@]+"${overrides[@]}"}"
[ -f "$out/student.pt" ] || $TTS export "${out}_gan/checkpoint_$(printf %08d "$gan_steps").pt" --out "$out/student.pt"

log "the bundled voice through the teacher and through the student: the 100 test sentences, paired"
[ -f exp/vocoders/test_hifigan-ljspeech/summary.json ] || $TTS evaluate --data data/synthetic --split test \
  --limit 100 --vocoder hifigan-ljspeech --out exp/vocoders/test_hifigan-ljspeech
[ -f "$out/eval_test/summary.json" ] || $TTS evaluate --data data/synthetic --split test --limit 100 \
  --vocoder "$out/student.pt" --out "$out/eval_test"
$PY egs/synthetic/paired.py exp/vocoders/test_hifigan-ljspeech "$out/eval_test" | tee "$out/paired.json"

log "real-time factor on 2 threads, beside Griffin-Lim and the HiFi-GAN configs (machine to itself)"
$TTS bench vocoder --threads 2 | tee "$out/bench_vocoder.json"
