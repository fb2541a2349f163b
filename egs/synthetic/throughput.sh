#!/usr/bin/env bash
# Training throughput of the study's model against batch size and threads, on real batches of the
# synthetic corpus (docs/attention_study.md, "The budget"): a short `tts train` per setting (no
# validation, no checkpoints), its frames/s over the logged window after a warm-up, turned into
# utterances per lane-hour. Run nothing else meanwhile: it is a timing.
#   bash egs/synthetic/throughput.sh [--config configs/attention_study.yaml] [--updates 30] [--out F.json]
#        [--settings "THREADS:FRAMES ..."]
set -euo pipefail
cd "$(dirname "$0")/../.."
config=configs/attention_study.yaml; updates=30; data=data/synthetic
out=docs/attention_study/throughput.json
settings="1:3200 1:6400 1:12800 1:25600 2:6400"
while [ $# -gt 0 ]; do
  case "$1" in
    --config) config=$2; shift 2;;
    --updates) updates=$2; shift 2;;
    --out) out=$2; shift 2;;
    --settings) settings=$2; shift 2;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
PY=${PY:-.venv/bin/python}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for setting in $settings; do
  threads=${setting%%:*}; frames=${setting##*:}
  run="$scratch/t${threads}_f${frames}"
  echo "[$(date +%T)] threads $threads, max_frames_per_batch $frames" >&2
  OMP_NUM_THREADS=$threads $PY -m tts.cli train --config "$config" --data "$data" --out "$run" --no-progress \
    train.max_steps="$updates" train.log_every=10 train.validate_every=100000 train.checkpoint_every=100000 \
    train.n_val_audio=0 data.max_frames_per_batch="$frames" data.max_batch_size=512 >"$run.log" 2>&1 \
    || { tail -5 "$run.log" >&2; exit 1; }
  echo "$threads $frames $run" >> "$scratch/runs"
done
$PY - "$scratch/runs" "$out" "$config" "$data" "$updates" <<'PYEOF'
import json, platform, subprocess, sys
from pathlib import Path
runs, out, config, data, updates = sys.argv[1:]
stats = json.loads((Path(data) / "features").glob("*/stats.json").__next__().read_text())
frames_per_utt = stats["frames_per_utterance"]["mean"]
rows = []
for line in Path(runs).read_text().splitlines():
    threads, frames, run = line.split()
    logged = [json.loads(l) for l in (Path(run) / "metrics.jsonl").read_text().splitlines()]
    train = [m for m in logged if "frames_per_s" in m and m.get("step", 0) > 10]
    fps = sum(m["frames_per_s"] for m in train) / len(train)
    rows.append({"threads": int(threads), "max_frames_per_batch": int(frames), "frames_per_second": round(fps, 1),
                 "utterances_per_update": round(int(frames) / frames_per_utt, 1),
                 "seconds_per_update": round(int(frames) / fps, 2),
                 "utterances_per_lane_hour": round(fps * 3600 / frames_per_utt / int(threads))})
cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
model = next((l.split(":", 1)[1].strip() for l in cpu.splitlines() if l.startswith("Model name")), platform.processor())
flags = [f for f in ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16") if f" {f}" in cpu]
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
result = {"config": config, "corpus": data, "updates": int(updates), "cpu": model, "cpu_flags": flags,
          "commit": commit, "mean_frames_per_utterance": frames_per_utt, "settings": rows}
Path(out).parent.mkdir(parents=True, exist_ok=True)
Path(out).write_text(json.dumps(result, indent=1) + "\n")
print(json.dumps(result, indent=1))
PYEOF
