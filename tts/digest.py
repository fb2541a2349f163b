"""Content digests: what a module computes or a folder holds, as bytes fed to a hash, for keying
caches and journals (two equal digests: the same weights, bit for bit)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import torch


def update_with_state(digest: Any, state: Mapping[str, Any]) -> None:
    """Feed ``digest`` (a ``hashlib`` object) every tensor of a state dict: its name, dtype, shape
    and bytes, in name order; entries that are not tensors by name and type."""
    for name, value in sorted(state.items()):
        if not isinstance(value, torch.Tensor):
            digest.update(f"|{name}|{type(value).__qualname__}|".encode())
            continue
        digest.update(f"|{name}|{value.dtype}|{tuple(value.shape)}|".encode())
        digest.update(value.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())


def update_with_files(digest: Any, folder: Path) -> None:
    """Feed ``digest`` every file under ``folder``: its relative path and bytes, in path order."""
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(f"|{path.relative_to(folder).as_posix()}|".encode())
        digest.update(path.read_bytes())
