"""``tts evaluate``: synthesize held-out sentences (a corpus split, a shipped suite, or long passages
of the corpus's test sentences said in one go) and measure what users hear: attention failures,
MCD, WER/CER and DNSMOS against the reference voice sent through the same vocoder
(:mod:`tts.evaluation.scoring`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tts.commands.options import (
    add_checkpoint,
    add_engine,
    add_inference,
    add_split,
    add_vocoder,
    load_synthesizer,
    positive_int,
)
from tts.errors import TTSError


def declare(p: argparse.ArgumentParser) -> None:
    add_checkpoint(p)
    add_engine(p)
    add_split(p, "test", "corpus root with reference recordings (with --suite: the training corpus, whose "
                         "longest utterance sets the long category)", data_required=False)
    p.add_argument("--suite", help="a shipped suite instead of a corpus split: robustness, or report (200 everyday "
                                   "sentences kept for reporting, never for choosing)")
    p.add_argument("--categories", nargs="+", metavar="CATEGORY",
                   help="with --suite: only these categories (e.g. everyday_heldout, one_word, long)")
    p.add_argument("--long-form", nargs="*", type=positive_int, metavar="MULTIPLE",
                   help="passages of the --data corpus's test sentences said in one go, at these multiples of "
                        "its longest training utterance (default 1 2 4 8), Battenberg et al. 2020")
    p.add_argument("--passages", type=positive_int, default=10,
                   help="with --long-form: passages at each multiple (default 10)")
    p.add_argument("--out", required=True, help="folder for summary.json, utterances.{csv,md}, wavs and plots")
    p.add_argument("--no-asr", action="store_true", help="skip the recognizer (no WER/CER)")
    p.add_argument("--no-mos", action="store_true", help="skip the quality meters (no DNSMOS, PESQ, STOI)")
    p.add_argument("--speaker", help="a voice of several speakers says every sentence as this one (a corpus split: "
                                     "by default as the corpus's speaker of each; a suite: needed)")
    add_inference(p)
    add_vocoder(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from tts.evaluation.held_out import evaluate
    from tts.evaluation.long_form import MULTIPLES, run_long_form
    from tts.evaluation.robustness import check_categories, load_suite, run_suite
    from tts.fileio import writable_folder

    if args.suite is None and args.data is None:
        raise TTSError("give --data (a corpus to evaluate on) or --suite robustness")
    if args.long_form is not None and (args.suite is not None or args.data is None):
        raise TTSError("--long-form draws its passages from a corpus's test split: give --data and no --suite")
    if args.categories and args.suite is None:
        raise TTSError("--categories picks categories of a suite: give --suite robustness")
    if args.suite is not None:  # an unknown suite or category fails before the model loads
        check_categories(load_suite(args.suite), args.suite, args.categories)
    writable_folder(args.out)
    synthesizer = load_synthesizer(args)
    if args.long_form is not None:
        run_long_form(synthesizer, args.data, args.out, args.long_form or MULTIPLES, args.passages,
                      use_asr=not args.no_asr, use_mos=not args.no_mos, speaker=args.speaker)
        print(Path(args.out, "long_form.md").read_text())
    elif args.suite is not None:
        run_suite(synthesizer, args.out, args.suite, args.data, use_asr=not args.no_asr, use_mos=not args.no_mos,
                  categories=args.categories, speaker=args.speaker)
        print(Path(args.out, "categories.md").read_text())
    else:
        summary = evaluate(synthesizer, args.data, args.out, split=args.split, limit=args.limit,
                           use_asr=not args.no_asr, use_mos=not args.no_mos, speaker=args.speaker)
        print(json.dumps(summary, indent=1))
    print(f"per-utterance table: {args.out}/utterances.md")
