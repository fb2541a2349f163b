"""A small, committable snapshot of a training run that is still under way (checkpoints stay out
of git, so a run lost with its machine leaves at least this): its sessions (CPU, commit), the
checkpoints saved, every validation and a sample of the training records, from the run folder's
``sessions.jsonl`` and ``metrics.jsonl``.

    python egs/synthetic/run_progress.py RUN --status "in progress: ..." --command "bash ..." --out F.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from tts.evaluation.report import read_metrics
from tts.training.experiment import ExperimentFolder


def snapshot(run: Path, every: int = 25) -> dict:
    """The run's sessions, saved checkpoints, validations and every ``every``-th training record
    (of a step logged twice, before a stop and again after the resume, the later; a line cut short by a
    killed run is passed over, as everywhere metrics are read)."""
    metrics = read_metrics(run / "metrics.jsonl")
    train = list({m["step"]: m for m in metrics if "split" not in m and "loss" in m}.values())
    return {"sessions": ExperimentFolder(run).read_sessions(),
            "last_logged_step": max((m["step"] for m in train), default=0),
            "checkpoints_saved": sorted(p.name for p in run.glob("checkpoint_*.pt")),
            "validations": [m for m in metrics if m.get("split") == "val"],
            "train_records": [m for m in train if m["step"] == 1 or m["step"] % every == 0]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="the training run's folder (its metrics.jsonl)")
    parser.add_argument("--status", required=True, help="what the run is and where it stands, in words")
    parser.add_argument("--command", required=True, help="the command that trains (and resumes) it")
    parser.add_argument("--out", type=Path, required=True, help="the JSON to write")
    args = parser.parse_args(argv)
    if not (args.run / "metrics.jsonl").is_file():
        print(f"error: {args.run} has no metrics.jsonl: give the folder a training run writes", file=sys.stderr)
        return 2
    result = {"status": args.status, "command": args.command, "date": time.strftime("%Y-%m-%d", time.gmtime()),
              **snapshot(args.run)}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
