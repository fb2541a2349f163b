#!/usr/bin/env bash
# Why does the attention skip an utterance's first phoneme? One small Tacotron2 per candidate cause,
# trained from scratch with the same data, seed and number of steps, each changing one thing:
#   baseline     trimmed clips that start on their first phoneme (audio.leading_silence=0)
#   lead_in      audio.leading_silence=0.15 (features keep 150 ms of silence before the speech)
#   bos          text.add_bos=true (a start symbol before the first phoneme)
#   start_first  model.tacotron2.attention.start_on_first_token=true (initial alignment on token 0, not zeros)
#   go_silence   model.go_frame=silence (the first decoder input is silence, not an all-zero "loud" frame)
#   dca          model.tacotron2.attention.kind=dynamic_convolution (a prior that starts on token 0, moves forward)
#   stepwise     model.tacotron2.attention.kind=stepwise_monotonic (starts on token 0, moves at most one token a step)
#   dca_lead_in  dca with audio.leading_silence=0.15 (differs from dca in the lead-in alone)
# Every other variant but lead_in sets audio.leading_silence=0, so each differs from the baseline in one thing.
# Then: teacher-forced first-token skips on val (metrics.jsonl) and free-running ones on 100 test
# sentences (tts evaluate --no-asr). Resumable: rerun the same command after an interruption.
#   bash egs/synthetic/first_token_ablation.sh [--steps 1500] [--variants "baseline bos"] [--data data/synthetic]
set -euo pipefail
cd "$(dirname "$0")/../.."
TTS=${TTS:-.venv/bin/tts}; PY=${PY:-.venv/bin/python}
steps=1500; variants="baseline lead_in bos start_first go_silence"; data=data/synthetic
config=configs/tacotron2_small.yaml; out=exp/first_token_ablation
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2;;
    --variants) variants=$2; shift 2;;
    --data) data=$2; shift 2;;
    --out) out=$2; shift 2;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
overrides_for() {
  case "$1" in
    baseline) echo "audio.leading_silence=0";;
    lead_in) echo "audio.leading_silence=0.15";;
    bos) echo "audio.leading_silence=0 text.add_bos=true";;
    start_first) echo "audio.leading_silence=0 model.tacotron2.attention.start_on_first_token=true";;
    go_silence) echo "audio.leading_silence=0 model.go_frame=silence";;
    dca) echo "audio.leading_silence=0 model.tacotron2.attention.kind=dynamic_convolution";;
    stepwise) echo "audio.leading_silence=0 model.tacotron2.attention.kind=stepwise_monotonic";;
    dca_lead_in) echo "audio.leading_silence=0.15 model.tacotron2.attention.kind=dynamic_convolution";;
    *) echo "unknown variant $1" >&2; exit 2;;
  esac
}
for variant in $variants; do
  read -r -a extra <<< "$(overrides_for "$variant")"
  exp=$out/$variant
  final=$exp/checkpoint_$(printf %08d "$steps").pt
  echo "[$(date +%H:%M:%S)] $variant: ${extra[*]:-no change}"
  $TTS features --data "$data" --config "$config" "${extra[@]+"${extra[@]}"}" > /dev/null
  if [ ! -f "$final" ]; then
    resume=(); ls "$exp"/checkpoint_*.pt > /dev/null 2>&1 && resume=(--resume)
    $TTS train --config "$config" --data "$data" --out "$exp" --no-progress "${resume[@]+"${resume[@]}"}" \
      train.max_steps="$steps" train.validate_every=250 train.checkpoint_every=250 train.keep_last=10 \
      "${extra[@]+"${extra[@]}"}"
  fi
  [ -f "$exp/eval_$steps/summary.json" ] || $TTS evaluate --checkpoint "$final" --data "$data" --split test \
    --limit 100 --no-asr --out "$exp/eval_$steps" > /dev/null
done
$PY - "$out" "$steps" $variants <<'PY'
import json, sys
from pathlib import Path

out, steps, variants = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
rows = ["| variant | val first-token skips (teacher-forced) | val diagonal | val loss | test first-token skips "
        "(free-running) | test skips (any token) | repeats | early stops | step-limit hits |", "|" + "---|" * 9]
result = {}
for variant in variants:
    val = next(record for line in (out / variant / "metrics.jsonl").read_text().splitlines()
               if '"val"' in line and (record := json.loads(line))["step"] == steps)
    test = json.loads((out / variant / f"eval_{steps}" / "summary.json").read_text())
    fails = test["attention_failures"]
    result[variant] = {"step": val["step"], "val": val, "test": test}
    rows.append(f"| {variant} | {val['first_token_skips']:.2f} | {val['attention_diagonal']:.3f} | {val['loss']:.3f} | "
                f"{fails['first_token_skips']} / {test['utterances']} | {fails['skips']} | {fails['repeats']} | "
                f"{fails['early_stops']} | {fails['step_limit_hits']} |")
(out / f"summary_{steps}.json").write_text(json.dumps(result, indent=1))
(out / f"summary_{steps}.md").write_text("\n".join(rows) + "\n")
print("\n".join(rows))
PY
