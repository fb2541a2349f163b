"""User-facing errors: anything a user can cause is raised as a :class:`TTSError`.

The command line catches these and prints one line (``error: <message>``) instead
of a traceback. Library callers can catch them like any other exception.
"""

import sys


class TTSError(Exception):
    """An error caused by user input (bad text, missing file, wrong checkpoint...)."""


class ConfigError(TTSError):
    """A configuration file or override is malformed, has unknown keys or wrong types. One about a
    key (:meth:`for_key`) keeps the key apart, so a section's loader can put its own path in front."""

    def __init__(self, message: str, key: str = "", problem: str = ""):
        super().__init__(message)
        self.key, self.problem = key, problem

    @classmethod
    def for_key(cls, key: str, problem: str) -> "ConfigError":
        """``config key 'KEY' PROBLEM``, e.g. ``for_key("temperature", "must be 2 values")``."""
        return cls(f"config key '{key}' {problem}", key, problem)

    def under(self, prefix: str) -> "ConfigError":
        """The same error about ``PREFIX.KEY`` (unchanged without a prefix or a key)."""
        return ConfigError.for_key(f"{prefix}.{self.key}", self.problem) if prefix and self.key else self


class Cancelled(Exception):
    """Work stopped between two decoder steps because nobody waits for it any more (a request
    that timed out, a client that left)."""


class Stopped(Exception):
    """A command stopped on SIGINT / SIGTERM with nothing to save (what it finished stays
    consistent); the command exits with 128 + signum."""

    def __init__(self, signum: int, what: str):
        super().__init__(f"{what} stopped by signal {signum}")
        self.signum, self.what = signum, what


class Interrupted(Exception):
    """Training stopped on a signal after saving a checkpoint; the command exits with 128 + signum."""

    def __init__(self, signum: int, checkpoint: str):
        super().__init__(f"interrupted by signal {signum}: saved {checkpoint}")
        self.signum, self.checkpoint = signum, checkpoint


def brief(exc: BaseException, limit: int = 120) -> str:
    """What a library's exception says, for one error line: its first line, cut after a whole word
    within ``limit`` characters (``...`` where cut); the exception's type when it says nothing."""
    lines = str(exc).strip().splitlines()
    text = lines[0].strip() if lines else ""
    if not text:
        return type(exc).__name__
    if len(text) <= limit:
        return text
    return (text[:limit].rsplit(" ", 1)[0] or text[:limit]) + "..."


def report_to_user(exc: TTSError | Stopped) -> int:
    """Print the one line a command shows for ``exc`` on stderr; the exit code: 2 for a user's
    error, 128 + signum for a stop."""
    if isinstance(exc, Stopped):
        print(f"stopped: {exc.what} was interrupted (signal {exc.signum}); what it finished is kept, run it "
              f"again to continue", file=sys.stderr)
        return 128 + exc.signum
    print(f"error: {exc}", file=sys.stderr)
    return 2
