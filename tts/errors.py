"""User-facing errors: anything a user can cause is raised as a :class:`TTSError`.

The command line catches these and prints one line (``error: <message>``) instead
of a traceback. Library callers can catch them like any other exception.
"""


class TTSError(Exception):
    """An error caused by user input (bad text, missing file, wrong checkpoint...)."""


class ConfigError(TTSError):
    """A configuration file or override is malformed, has unknown keys or wrong types."""
