"""User-facing errors: anything a user can cause is raised as a :class:`TTSError`.

The command line catches these and prints one line (``error: <message>``) instead
of a traceback. Library callers can catch them like any other exception.
"""


class TTSError(Exception):
    """An error caused by user input (bad text, missing file, wrong checkpoint...)."""


class ConfigError(TTSError):
    """A configuration file or override is malformed, has unknown keys or wrong types."""


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
