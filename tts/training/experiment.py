"""An experiment folder's checkpoints and the random state a checkpoint carries for exact resume.

``checkpoint_<step>.pt`` files are kept for the last K saves, ``best.pt`` holds the best
validation loss; every file is written by :func:`tts.checkpoint.save`.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import torch

_STEP_RE = re.compile(r"checkpoint_(\d+)\.pt$")


def rng_state() -> dict[str, Any]:
    """Python, numpy and torch RNG states in a ``weights_only``-loadable form."""
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {"python": random.getstate(), "torch": torch.get_rng_state(),
             "numpy": [kind, torch.from_numpy(keys.astype(np.int64)), pos, has_gauss, cached]}
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


class CheckpointFolder:
    """Paths of an experiment's checkpoints; :meth:`prune` keeps the last ``keep_last``."""

    def __init__(self, folder: str | Path, keep_last: int = 3):
        self.folder = Path(folder)
        self.keep_last = keep_last

    def path(self, step: int) -> Path:
        return self.folder / f"checkpoint_{step:08d}.pt"

    @property
    def best(self) -> Path:
        return self.folder / "best.pt"

    def all(self) -> list[Path]:
        return sorted(self.folder.glob("checkpoint_*.pt"), key=lambda p: int(_STEP_RE.search(p.name).group(1)))

    def latest(self) -> Path | None:
        found = self.all()
        return found[-1] if found else None

    def prune(self) -> None:
        for old in self.all()[: -self.keep_last]:
            old.unlink(missing_ok=True)
