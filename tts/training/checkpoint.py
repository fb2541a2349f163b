"""Checkpoints: one file with weights, the exact config, the symbol inventory and training state.

Written atomically (temp file in the same folder, fsync, rename), so a crash or a full disk
while saving leaves the previous checkpoint intact. Loaded with ``torch.load(weights_only=True)``.
"""

from __future__ import annotations

import os
import random
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tts.errors import TTSError

FORMAT = "tts-checkpoint"
VERSION = 1
_STEP_RE = re.compile(r"checkpoint_(\d+)\.pt$")


def save_checkpoint(payload: dict[str, Any], path: str | Path) -> Path:
    """Atomically write ``payload`` (plus format tags) to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"format": FORMAT, "version": VERSION, **payload}
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            torch.save(payload, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Load and validate a checkpoint; every failure is one clear :class:`TTSError`."""
    path = Path(path)
    if not path.is_file():
        raise TTSError(f"checkpoint {path} does not exist")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # noqa: BLE001 - pickle/zip errors of every kind mean "not a checkpoint"
        raise TTSError(f"{path} is not a readable checkpoint ({type(exc).__name__}: "
                       f"{str(exc).splitlines()[0][:120] if str(exc) else 'corrupt file'})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise TTSError(f"{path} is not a checkpoint of this toolkit (no '{FORMAT}' tag)")
    if payload.get("version") != VERSION:
        raise TTSError(f"{path} has checkpoint version {payload.get('version')}, this code reads version {VERSION}")
    for key in ("model", "config", "symbols"):
        if key not in payload:
            raise TTSError(f"{path} is incomplete: missing '{key}'")
    return payload


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


class CheckpointManager:
    """Keeps ``checkpoint_<step>.pt`` for the last K saves, plus ``best.pt`` by validation loss."""

    def __init__(self, folder: str | Path, keep_last: int = 3):
        self.folder = Path(folder)
        self.keep_last = keep_last

    def path(self, step: int) -> Path:
        return self.folder / f"checkpoint_{step:08d}.pt"

    def all(self) -> list[Path]:
        return sorted(self.folder.glob("checkpoint_*.pt"), key=lambda p: int(_STEP_RE.search(p.name).group(1)))

    def latest(self) -> Path | None:
        found = self.all()
        return found[-1] if found else None

    def save(self, payload: dict[str, Any], step: int) -> Path:
        path = save_checkpoint(payload, self.path(step))
        for old in self.all()[: -self.keep_last] if self.keep_last > 0 else []:
            old.unlink(missing_ok=True)
        return path

    def save_best(self, payload: dict[str, Any]) -> Path:
        return save_checkpoint(payload, self.folder / "best.pt")


def export_release(source: str | Path, destination: str | Path, half: bool = True) -> Path:
    """Strip a training checkpoint to what synthesis needs (weights, config, symbols, step),
    with float16 weights when ``half``; the result loads with ``Synthesizer.from_checkpoint``."""
    payload = load_checkpoint(source)
    weights = {k: v.half() if half and v.is_floating_point() else v for k, v in payload["model"].items()}
    release = {"model": weights, "config": payload["config"], "symbols": payload["symbols"],
               "model_name": payload.get("model_name"), "step": payload.get("step", 0)}
    return save_checkpoint(release, destination)
