"""``tts align``: per-token durations from a checkpoint's teacher-forced attention, for training a
duration model, scored against the corpus's true phone timings when it has them
(:mod:`tts.evaluation.align`)."""

from __future__ import annotations

import argparse
import json

from tts.commands.options import add_checkpoint, add_device, add_split, device


def declare(p: argparse.ArgumentParser) -> None:
    add_checkpoint(p)
    add_split(p, "train", "corpus root with computed features (and timings/, for the error against the truth)")
    p.add_argument("--out", required=True, help="a new or empty folder for durations.txt, alignments.jsonl, summary.json")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_device(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from tts import checkpoint
    from tts.evaluation.align import align_corpus, check_out_folder

    check_out_folder(args.out)  # before anything loads
    chosen = device(args)
    loaded = checkpoint.load(args.checkpoint, chosen)
    summary = align_corpus(loaded, args.data, args.out, args.split, args.limit, chosen, progress=not args.no_progress)
    print(json.dumps(summary, indent=1))
    print(f"durations of {summary['utterances']} utterances in {args.out}/durations.txt")
