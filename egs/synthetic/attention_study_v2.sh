#!/usr/bin/env bash
# The attention study, second edition (docs/attention_study/second_edition.md): one lane (one CPU
# thread) training and measuring the given mechanisms at one seed, each for the budget of
# configs/attention_study_v2.yaml (10,720 updates of 3,200 frames, about 4.2 h), in order. Run two lanes side by
# side with different mechanisms; run it again to continue (a variant resumes from its last
# checkpoint; one whose result file is committed in docs/attention_study/v2_results/ is not trained
# again, on this machine or a new one). Spread a mechanism's seeds over days and machines.
#   nohup setsid bash egs/synthetic/attention_study_v2.sh --seed 1 forward hard ... > exp/logs/study_v2_a.log 2>&1 &
#   ... --seed 1 hard --seed 2 gmm forward          # several seeds in one lane, in that order
#   bash egs/synthetic/attention_study_v2.sh --report     # the report of what has finished
#   python egs/synthetic/study_status.py                 # which runs are finished, under way, left
#   python egs/synthetic/stop_study.py                   # stop every lane (checkpoints at the exact step)
# --transformer first: the Transformer-TTS arm instead (configs/attention_study_v2_transformer.yaml,
# exp/attention_study_v2_transformer), its variants alpha_learned and alpha_fixed:
#   nohup setsid bash egs/synthetic/attention_study_v2.sh --transformer --seed 1 alpha_learned alpha_fixed > ... &
# Each run: validation against Festival's true alignment every 536 updates; test CER curve points
# every 2,144 on 20 sentences; at the end its best-validation checkpoint on the 100 test sentences
# through HiFi-GAN and Whisper; seed 1 also the robustness suite and long-form passages.
# Mechanisms' own settings (the pilots': docs/attention_study/second_edition.md, "Fair settings"):
# stepwise monotonic's energy bias at He et al.'s 3.5, hard attention's temperature annealed over
# the whole run; the learning rate and guided attention are shared.
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}; PY=${PY:-.venv/bin/python}
DATA=${DATA:-data/synthetic}
arm=v2; config=configs/attention_study_v2.yaml
if [ "${1:-}" = "--transformer" ]; then
  arm=v2_transformer; config=configs/attention_study_v2_transformer.yaml; shift
fi
OUT=exp/attention_study_$arm
RESULTS=docs/attention_study/${arm}_results
STUDY=("$TTS" study --config "$config" --data "$DATA" --out "$OUT" --steps 10720
       --aligned-accuracy 0.9 --evaluate best --eval-limit 100 --curve-every 2144 --curve-limit 20 --no-mos)

mkdir -p "$OUT/results"
cp -n "$RESULTS"/* "$OUT/results/" 2>/dev/null || true
if [ "${1:-}" = "--report" ]; then
  exec "${STUDY[@]}" --report-only
fi
usage="usage: $0 --seed N KIND [KIND ...] [--seed M KIND ...] (or --report)"
[ "${1:-}" = "--seed" ] || { echo "error: $usage" >&2; exit 2; }
# every --seed a whole number followed by at least one kind, checked before anything trains
seed=""; kinds=0
for arg in "$@"; do
  if [ "$seed" = next ]; then
    [[ "$arg" =~ ^[0-9]+$ ]] || { echo "error: --seed takes a whole number, got '$arg'; $usage" >&2; exit 2; }
    seed=$arg
  elif [ "$arg" = --seed ]; then
    [ -z "$seed" ] || [ "$kinds" -gt 0 ] || { echo "error: --seed $seed names no kind to train; $usage" >&2; exit 2; }
    seed=next; kinds=0
  else
    kinds=$((kinds + 1))
  fi
done
[ "$seed" != next ] && [ "$kinds" -gt 0 ] || { echo "error: the last --seed names no kind to train; $usage" >&2; exit 2; }
# The protocol trains under bf16 autocast; a CPU without bfloat16 arithmetic (AVX2 only) emulates it,
# 5.5x slower than float32 (docs/reliability.md): a run would take days there. EMULATED_BF16=1 runs anyway.
if [ "${EMULATED_BF16:-0}" != 1 ] && ! "$PY" -c \
    "import sys, torch; from tts.devices import computes_bf16; sys.exit(0 if computes_bf16(torch.device('cpu')) else 1)"; then
  echo "error: this CPU has no bfloat16 arithmetic (AVX2 only), and the study trains in bf16 (emulated here, about 5x slower); run it on an AVX-512 or AMX machine, or set EMULATED_BF16=1" >&2
  exit 2
fi

variant() {
  local kind=$1 extra=""
  case "$kind" in
    stepwise_monotonic) extra=",model.tacotron2.attention.energy_bias=3.5";;
    hard) extra=",model.tacotron2.attention.anneal_steps=10720";;
    alpha_learned|alpha_fixed)
      [ "$arm" = v2_transformer ] || { echo "error: $kind is a variant of --transformer" >&2; exit 2; }
      [ "$kind" = alpha_learned ] && learned=true || learned=false
      echo "$kind:model.transformer_tts.positional_alpha_learned=$learned"; return;;
  esac
  echo "$kind:model.tacotron2.attention.kind=$kind$extra"
}
export OMP_NUM_THREADS=1
seed=""
for kind in "$@"; do
  if [ "$kind" = --seed ]; then seed=next; continue; fi
  if [ "$seed" = next ]; then seed=$kind; continue; fi
  extras=(--no-suite)
  [ "$seed" = 1 ] && extras=(--long-form)
  echo "[$(date +%H:%M:%S)] $kind, seed $seed"
  spec=$(variant "$kind")
  "${STUDY[@]}" --seeds "$seed" --variant "$spec" "${extras[@]}"
  mkdir -p "$RESULTS"
  cp -n "$OUT"/results/* "$RESULTS"/ 2>/dev/null || true  # small: commit them
done
