"""The ``tts`` command: builds the parser from the commands in :mod:`tts.commands` and dispatches.

User errors (:class:`~tts.errors.TTSError`) print one ``error: ...`` line and exit with 2; training
stopped by SIGINT / SIGTERM saves a checkpoint and exits with 130 / 143.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from tts.commands import (
    bench,
    evaluate,
    evaluate_vocoder,
    export,
    features,
    g2p,
    plot_alignment,
    report,
    serve,
    study,
    synthesize,
    train,
    validate,
    vocode,
)
from tts.errors import Interrupted, Stopped, TTSError, report_to_user

#: every command, in the order ``tts --help`` lists them; each module has ``register(subparsers)``
COMMANDS = (g2p, vocode, features, train, synthesize, evaluate, evaluate_vocoder, validate, plot_alignment, export,
            study, report, bench, serve)


class Parser(argparse.ArgumentParser):
    """Usage mistakes are one ``error:`` line (what is wrong and where the help is), exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"error: {message} (see '{self.prog} --help')", file=sys.stderr)
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="tts", description="Attention-based text-to-speech toolkit")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except (TTSError, Stopped) as exc:
        return report_to_user(exc)
    except Interrupted as exc:
        print(f"interrupted: saved {exc.checkpoint}; continue with --resume", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`, which stopped reading
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:  # the file system said no (a path the checks above did not foresee)
        print(f"error: {exc.strerror or exc}: {exc.filename or ''} (check the path and its permissions)",
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
