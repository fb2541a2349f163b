"""The ``tts`` command: builds the parser from the command table below and dispatches; a command's
module is imported only when it is chosen, so ``tts --help`` answers at once.

User errors (:class:`~tts.errors.TTSError`) print one ``error: ...`` line and exit with 2; training
stopped by SIGINT / SIGTERM saves a checkpoint and exits with 130 / 143.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from tts.commands.options import reclaim_settings
from tts.commands.table import Command, Group, add_commands
from tts.errors import Interrupted, Stopped, TTSError, report_to_user
from tts.threads import use_threads

#: every command, in the order ``tts --help`` lists them (see :mod:`tts.commands.table`)
COMMANDS = Group("command", {
    "g2p": Command("tts.commands.g2p:declare", "print normalized text, phonemes and ids"),
    "vocode": Command("tts.commands.vocode:declare_vocode",
                      "mel .npy (n_mels, T) → wav with Griffin-Lim or a neural vocoder"),
    "resynth": Command("tts.commands.vocode:declare_resynth", "wav → mel → vocoder → wav"),
    "features": Command("tts.commands.features:declare", "compute the mel / token-id cache of a corpus"),
    "train": Command("tts.commands.train:declare_acoustic", "train an acoustic model"),
    "train-vocoder": Command("tts.commands.train:declare_vocoder",
                             "train a neural vocoder (HiFi-GAN) on a corpus's mels and audio"),
    "synthesize": Command("tts.commands.synthesize:declare", "text → wav (+ mel .npy and alignment plot)"),
    "evaluate": Command("tts.commands.evaluate:declare", "attention failures, MCD and WER on held-out sentences"),
    "evaluate-vocoder": Command("tts.commands.evaluate_vocoder:declare",
                                "recordings resynthesized through vocoders, side by side: DNSMOS, PESQ, STOI, MCD, WER"),
    "validate": Command("tts.commands.validate:declare",
                        "teacher-forced losses, attention and text reliance of a checkpoint"),
    "align": Command("tts.commands.align:declare",
                     "per-token durations from a checkpoint's attention, scored against true phone timings"),
    "plot-alignment": Command("tts.commands.plot_alignment:declare", "alignment figure of one or several checkpoints"),
    "export": Command("tts.commands.export:declare",
                      "a checkpoint for release: stripped .pt (float16 weights) or ONNX graphs"),
    "study": Command("tts.commands.study:declare",
                     "train one model per variant (e.g. per attention mechanism) and compare them"),
    "report": Command("tts.commands.report:declare", "static HTML report of an experiment folder"),
    "bench": Command("tts.commands.bench:declare", "benchmarks that print JSON (speed, memory, convergence)"),
    "serve": Command("tts.commands.serve:declare",
                     "an HTTP service with a page: POST /synthesize, GET /health, GET /"),
})


class Parser(argparse.ArgumentParser):
    """Usage mistakes are one ``error:`` line (what is wrong and where the help is), exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"error: {message} (see '{self.prog} --help')", file=sys.stderr)
        sys.exit(2)


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    """The parser for ``argv``: every command listed, only the chosen one's arguments declared."""
    parser = Parser(prog="tts", description="Attention-based text-to-speech toolkit")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    add_commands(parser, COMMANDS, argv)
    return parser


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line as the command will read it (``inference.KEY=VALUE`` items that a list
    option took are given back to the settings: :func:`~tts.commands.options.reclaim_settings`)."""
    return reclaim_settings(build_parser(argv).parse_args(argv))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    if hasattr(args, "threads"):  # a command that computes: before torch starts its threads
        use_threads(args.threads)
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
