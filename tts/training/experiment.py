"""An experiment folder: its lock, checkpoints (last K + best), ``metrics.jsonl``,
``sessions.jsonl`` (where, with what and with which commit each start or resume of the run
trained, :func:`code_version`), and the random
state a checkpoint carries for exact resume.

One training process owns a folder at a time (an exclusive ``flock`` on ``.lock``, released by
the kernel when the process dies, so a crash leaves no stale lock). Checkpoints are written by
:func:`tts.checkpoint.save` (temp file + rename); temp files a killed process left behind are
removed when the next run takes the folder. ``metrics.jsonl`` is cut back to the resumed step,
so a run killed after its last checkpoint does not leave duplicated or half-written lines.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import re
import socket
import subprocess
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import torch

from tts.errors import TTSError

_STEP_RE = re.compile(r"checkpoint_(\d+)\.pt$")


def code_version() -> str:
    """The commit of the code that runs (with ``+changes`` when the checkout has uncommitted
    changes to tracked files); ``unknown`` outside a git checkout."""
    repo = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


def checkpoint_step(path: Path) -> int:
    """The step in a periodic checkpoint's name (``checkpoint_00001000.pt`` → 1000)."""
    match = _STEP_RE.search(path.name)
    if match is None:
        raise ValueError(f"{path.name} is not a periodic checkpoint's name")
    return int(match.group(1))


def rng_state() -> dict[str, Any]:
    """Python, numpy and torch RNG states in a ``weights_only``-loadable form."""
    kind, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
    state = {"python": random.getstate(), "torch": torch.get_rng_state(),
             "numpy": [kind, torch.from_numpy(np.asarray(keys).astype(np.int64)), pos, has_gauss, cached]}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(_to_tuple(state["python"]))
    torch.set_rng_state(state["torch"])
    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _to_tuple(value: Any) -> Any:
    return tuple(_to_tuple(v) for v in value) if isinstance(value, (list, tuple)) else value


class ExperimentFolder:
    """Paths and bookkeeping of ``folder``; :meth:`acquire` takes it for this process."""

    def __init__(self, folder: str | Path, keep_last: int = 3):
        self.folder = Path(folder)
        self.keep_last = keep_last
        self._lock_file: TextIO | None = None
        self._created = False

    # ------------------------------------------------------------------ ownership
    def acquire(self) -> None:
        """Create the folder, lock it for this process and remove stale temp files. Another live
        process holding it, or a folder that cannot be written, is one clear error."""
        try:
            self._created = not self.folder.exists()
            self.folder.mkdir(parents=True, exist_ok=True)
            lock = open(self.folder / ".lock", "a+")
        except OSError as exc:
            raise TTSError(f"cannot write to the experiment folder {self.folder} ({exc.strerror}): "
                           f"choose another --out") from None
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            owner = lock.read().strip() or "another process"
            lock.close()
            raise TTSError(f"{self.folder} is in use by a training run ({owner}): wait for it to finish, "
                           f"stop it, or train into another --out") from None
        lock.seek(0)
        lock.truncate()
        lock.write(f"pid {os.getpid()} on {socket.gethostname()}")
        lock.flush()
        self._lock_file = lock
        for stale in self.folder.glob(".*.pt.*.tmp"):
            stale.unlink(missing_ok=True)

    def release(self, discard: bool = False) -> None:
        """Unlock; with ``discard`` (a run that failed before it started) also remove the folder
        when this run created it and left nothing but its lock in it."""
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None
            if discard and self._created and [p.name for p in self.folder.iterdir()] == [".lock"]:
                (self.folder / ".lock").unlink()
                self.folder.rmdir()

    # ------------------------------------------------------------------ checkpoints
    def path(self, step: int) -> Path:
        return self.folder / f"checkpoint_{step:08d}.pt"

    @property
    def best(self) -> Path:
        return self.folder / "best.pt"

    def all(self) -> list[Path]:
        return sorted(self.folder.glob("checkpoint_*.pt"), key=checkpoint_step)

    def latest(self) -> Path | None:
        found = self.all()
        return found[-1] if found else None

    def prune(self) -> None:
        for old in self.all()[: -self.keep_last]:
            old.unlink(missing_ok=True)

    # ------------------------------------------------------------------ metrics.jsonl
    @property
    def metrics(self) -> Path:
        return self.folder / "metrics.jsonl"

    def log(self, record: dict) -> None:
        """Append one record as a line of ``metrics.jsonl``."""
        with open(self.metrics, "a") as fh:
            fh.write(json.dumps(record) + "\n")
            fh.flush()

    # ------------------------------------------------------------------ sessions.jsonl
    @property
    def sessions(self) -> Path:
        return self.folder / "sessions.jsonl"

    def read_sessions(self) -> list[dict]:
        """The records of the sessions that trained this run, in order (none before any)."""
        if not self.sessions.is_file():
            return []
        return [json.loads(line) for line in self.sessions.read_text().splitlines() if line.strip()]

    def log_session(self, record: dict) -> None:
        """Record a session starting at ``record["step"]``; sessions that started at or after it
        left no checkpoint this run continues from, and are dropped."""
        kept = [s for s in self.read_sessions() if s["step"] < record["step"]] + [record]
        tmp = self.sessions.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(json.dumps(s) + "\n" for s in kept))
        os.replace(tmp, self.sessions)

    def truncate_log(self, step: int) -> None:
        """Keep the records up to ``step`` (a resumed run writes the later ones again) and drop a
        line cut short by a killed process."""
        if not self.metrics.is_file():
            return
        kept = []
        for line in self.metrics.read_text(errors="replace").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and record.get("step", 0) <= step:
                kept.append(line)
        tmp = self.metrics.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(line + "\n" for line in kept))
        os.replace(tmp, self.metrics)
