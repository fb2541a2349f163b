"""``tts validate``: the trainer's teacher-forced validation figures for any saved checkpoint,
plus, with a recognizer, the word error rate of its teacher-forced speech.

Teacher-forced WER next to ``tts evaluate``'s free-running WER separates the two ways a model
can fail: bad frames (both high) from exposure bias, a decoder that only sounds right when fed
the real previous frames (teacher-forced low, free-running high; ``text_reliance`` near 1)."""

from __future__ import annotations

import argparse
import json

from tts.commands.options import add_checkpoint, add_device, add_split, device, non_negative_int


def declare(p: argparse.ArgumentParser) -> None:
    add_checkpoint(p)
    add_split(p, "val", "corpus root with computed features")
    p.add_argument("--asr", type=non_negative_int, default=0, metavar="N",
                   help="also the WER of N utterances' teacher-forced speech (needs the eval extra)")
    add_device(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from tts import checkpoint
    from tts.evaluation.validate import validate_checkpoint

    chosen = device(args)
    loaded = checkpoint.load(args.checkpoint, chosen)
    print(json.dumps(validate_checkpoint(loaded, args.data, args.split, args.limit, args.asr, device=chosen), indent=1))
