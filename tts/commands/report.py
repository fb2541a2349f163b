"""``tts report <exp dir>``: one static HTML page (openable from disk) with the loss curves,
the alignment of each validation utterance across checkpoints, and the evaluation table with
an audio player and alignment image per utterance."""

from __future__ import annotations

import argparse


def declare(p: argparse.ArgumentParser) -> None:
    p.add_argument("exp")
    p.add_argument("--eval", help="evaluation folder (default: <exp>/eval)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from tts.evaluation.report import build_report

    print(f"wrote {build_report(args.exp, args.eval)}")
