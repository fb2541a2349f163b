"""Writing output files: atomically, never over an input, and with one clear error when the disk,
the folder or the permissions are in the way.

:func:`atomic_path` gives a temporary name beside the target (``.<name>.<random>.tmp`` in the same
folder, so the rename is atomic); the target appears only when the block ends without error, and a
failure leaves no partial file. ``OSError`` (read-only file system, no space, no permission, a
parent that cannot be created) and the ``RuntimeError`` that ``torch.save`` raises on a full disk
become one :class:`WriteError` naming the path.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from tts.errors import TTSError, brief


class WriteError(TTSError):
    """An output that could not be written (``path``); the message says why."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"cannot write {path} ({reason})")
        self.path, self.reason = path, reason


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return brief(exc, 160)


@contextmanager
def atomic_path(path: str | Path, mode: int = 0o666) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` to write; it becomes ``path`` (permissions ``mode``
    less the umask) when the block succeeds and is removed when it fails."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
    except OSError as exc:
        raise WriteError(path, _reason(exc)) from None
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, mode & ~_umask())
        os.replace(tmp, path)
    except (OSError, RuntimeError) as exc:
        tmp.unlink(missing_ok=True)
        raise WriteError(path, _reason(exc)) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """``path`` holds ``text`` whole, or keeps what it held: an interrupted write leaves no half file."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def _umask() -> int:
    """The process's file-creation mask (reading it means setting it; it is put straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def refuse_overwriting(out: str | Path, inputs: Sequence[str | Path], option: str) -> None:
    """Refuse an output path that is one of the inputs (the same file, however it is spelled)."""
    out = Path(out)
    for source in inputs:
        source = Path(source)
        if out.exists() and source.exists() and os.path.samefile(out, source) or out.resolve() == source.resolve():
            raise TTSError(f"{option} {out} is the input {source}: write to another file, the input stays as it is")


def writable_folder(folder: str | Path, option: str = "--out") -> None:
    """Refuse a folder that cannot be created or written (tried, not guessed: a temporary folder is
    made and removed in its nearest existing ancestor), naming the part of the path in the way."""
    folder = Path(folder)
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise TTSError(f"{option} {folder}: {existing} exists and is not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".tts-write-check.", dir=existing))
    except OSError as exc:
        raise TTSError(f"{option} {folder}: cannot write in {existing} ({_reason(exc)})") from None
