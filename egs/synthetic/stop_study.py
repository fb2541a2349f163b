"""Stop the attention study's lanes on this machine: SIGTERM to each lane's process group (training
saves a checkpoint at the exact step, an evaluation keeps its journal; the lane command resumes
both), wait for them to exit, and write a committable snapshot of each run they left under way
(egs/synthetic/run_progress.py) to docs/attention_study/<arm>_progress/<run>_<date>T<HHMM>Z.json
(UTC; many sessions share a date, and no snapshot replaces an earlier one).

    python egs/synthetic/stop_study.py [--wait 300] [--no-snapshots]

A lane is a ``bash egs/synthetic/attention_study_v2.sh ...`` whose working folder is this
repository (the script moves there first), so lanes of another checkout are left alone.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_progress import snapshot  # noqa: E402  (a script beside this one)
from study_status import ARMS, BUDGET, run_state  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "attention_study_v2.sh"


def lane_runs(argv: list[str]) -> list[tuple[str, str, int]]:
    """(arm, variant, seed) of every run a lane's command line trains, in order: ``[..., SCRIPT,
    [--transformer,] --seed N KIND ... [--seed M KIND ...]]``."""
    args = argv[next(i for i, a in enumerate(argv) if a.endswith(SCRIPT)) + 1:]
    arm = "v2"
    if args[:1] == ["--transformer"]:
        arm, args = "v2_transformer", args[1:]
    runs, seed, expect_seed = [], 0, False
    for arg in args:
        if expect_seed:
            seed, expect_seed = int(arg), False
        elif arg == "--seed":
            expect_seed = True
        else:
            runs.append((arm, arg, seed))
    return runs


def find_lanes(root: Path) -> dict[int, list[str]]:
    """The lanes running from ``root``: process group → the lane's command line."""
    lanes = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
            if len(argv) < 2 or Path(argv[0]).name != "bash" or not any(a.endswith(SCRIPT) for a in argv[1:]) \
                    or "--report" in argv or Path(os.readlink(proc / "cwd")) != root:
                continue
            lanes[os.getpgid(int(proc.name))] = argv
        except (OSError, ValueError):  # a process that ended while it was read
            continue
    return lanes


def stop(groups: list[int], wait: float) -> list[int]:
    """SIGTERM every process group and wait up to ``wait`` s for them to exit; the groups still alive."""
    for group in groups:
        try:
            os.killpg(group, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + wait
    alive = list(groups)
    while alive and time.monotonic() < deadline:
        time.sleep(1)
        alive = [g for g in alive if _exists(g)]
    return alive


def _exists(group: int) -> bool:
    """Whether a process of ``group`` still runs (a zombie, ended but not yet reaped by its parent, does not)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _, pgrp = stat.read_text().rpartition(")")[2].split()[:3]
        except OSError:
            continue
        if int(pgrp) == group and state != "Z":
            return True
    return False


def write_snapshots(root: Path, runs: list[tuple[str, str, int]], date: str, time_utc: str) -> list[Path]:
    """A snapshot of each run that is under way (a checkpoint, no result file), stamped with the stop's
    ``date`` (YYYY-MM-DD) and ``time_utc`` (HH:MM); the files written."""
    written = []
    for arm, variant, seed in runs:
        _, results, folders = ARMS[arm]
        state = run_state(variant, seed, root / results, root / folders)
        if state.finished or state.step == 0:
            continue
        command = f"bash egs/synthetic/{SCRIPT} {'--transformer ' if arm != 'v2' else ''}--seed {seed} {variant}"
        record = {"status": f"stopped with SIGTERM on {date} {time_utc} UTC: {state.cell(BUDGET)}", "command": command,
                  "date": date, "time_utc": time_utc, **snapshot(root / folders / f"{variant}-s{seed}")}
        stamp = f"{date}T{time_utc.replace(':', '')}Z"
        out = root / "docs/attention_study" / f"{arm}_progress" / f"{variant}-s{seed}_{stamp}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(record, indent=1) + "\n")
        written.append(out)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wait", type=float, default=300.0, help="seconds to wait for the lanes to exit")
    parser.add_argument("--no-snapshots", action="store_true", help="stop the lanes only")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root = args.root.resolve()
    lanes = find_lanes(root)
    if not lanes:
        print(f"no lane of the study runs from {root}")
        return 0
    for group, command in lanes.items():
        print(f"stopping process group {group}: {' '.join(command[1:])}")
    alive = stop(list(lanes), args.wait)
    if alive:
        print(f"error: process groups {alive} still run after {args.wait:.0f} s; stop them with kill -KILL -- -GROUP "
              "(the newest checkpoint is kept)", file=sys.stderr)
        return 2
    if not args.no_snapshots:
        runs = [run for command in lanes.values() for run in lane_runs(command)]
        now = time.gmtime()
        for path in write_snapshots(root, runs, time.strftime("%Y-%m-%d", now), time.strftime("%H:%M", now)):
            print(f"snapshot: {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
