"""The attention study's pilots as one small JSON (docs/attention_study/pilots.json): per pilot (its
overrides are in egs/synthetic/pilots.sh, its whole config in exp/pilots/<name>/config.yaml) the CPU
that trained it, its validation curve (loss, attention against the truth,
diagonality, focus) with epochs and training minutes, seconds per update and utterances per
lane-hour, and, where `tts evaluate` has run on its best checkpoint, the test figures.

    .venv/bin/python egs/synthetic/pilot_report.py [--exp exp/pilots] [--out docs/attention_study/pilots.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

TRAIN_UTTERANCES = 2799
CURVE_KEYS = ("loss", "true_peak_accuracy", "true_tracking_accuracy", "true_peak_offset", "true_boundary_error_ms",
              "attention_diagonal", "attention_focus", "text_reliance")


def pilot(folder: Path) -> dict:
    records = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines() if line.strip()]
    sessions = [json.loads(line) for line in (folder / "sessions.jsonl").read_text().splitlines() if line.strip()]
    config = (folder / "config.yaml").read_text()
    frames = int(next(line.split(":")[1] for line in config.splitlines() if "max_frames_per_batch" in line))
    validation = [r for r in records if r.get("split") == "val"]
    train = [r for r in records if "frames_per_s" in r and r.get("step", 0) > 10]
    fps = sum(r["frames_per_s"] for r in train) / max(len(train), 1)
    steps_per_epoch = TRAIN_UTTERANCES * 307.2 / frames  # mean frames per utterance of the study's cache
    row: dict = {"name": folder.name, "trained_on": sorted({s.get("device", "") for s in sessions}),
                 "cpu_instructions": sorted({" ".join(s.get("cpu_instructions", ["(not recorded)"])) for s in sessions}),
                 "max_frames_per_batch": frames, "frames_per_second": round(fps, 1),
                 "utterances_per_lane_hour": round(fps * 3600 / 307.2),
                 "curve": [{"step": r["step"], "epoch": round(r["step"] / steps_per_epoch, 1),
                            "train_minutes": round(r.get("train_seconds", 0) / 60, 1),
                            **{k: round(r[k], 4) for k in CURVE_KEYS if k in r}} for r in validation]}
    summary = folder / "eval" / "summary.json"
    if summary.is_file():
        row["test"] = json.loads(summary.read_text())
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exp", default="exp/pilots")
    parser.add_argument("--out", default="docs/attention_study/pilots.json")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    pilots = [pilot(folder) for folder in sorted(Path(args.exp).iterdir()) if (folder / "metrics.jsonl").is_file()]
    Path(args.out).write_text(json.dumps({"commit": commit, "pilots": pilots}, indent=1) + "\n")
    for p in pilots:
        last = p["curve"][-1] if p["curve"] else {}
        print(p["name"], last)


if __name__ == "__main__":
    main()
