"""``tts evaluate-vocoder``: recordings resynthesized through one or more vocoders, side by side,
against the recordings themselves (:mod:`tts.evaluation.resynthesis`)."""

from __future__ import annotations

import argparse
import json

from tts.commands.options import add_device, add_split, device


def declare(p: argparse.ArgumentParser) -> None:
    add_split(p, "test", "corpus root with recordings")
    p.add_argument("--vocoder", nargs="+", required=True, metavar="VOCODER",
                   help="griffin-lim and/or vocoder checkpoints (compared side by side)")
    p.add_argument("--config", help="audio settings for Griffin-Lim alone (default: built-in; a neural "
                                    "vocoder brings its own)")
    p.add_argument("--out", required=True, help="folder for summary.json, utterances.{csv,md} and the wavs")
    p.add_argument("--no-asr", action="store_true", help="skip the recognizer (no WER/CER)")
    p.add_argument("--no-mos", action="store_true", help="skip DNSMOS")
    add_device(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from tts.config import load_config
    from tts.evaluation.resynthesis import evaluate_vocoders
    from tts.fileio import writable_folder

    writable_folder(args.out)
    audio = load_config(args.config).audio if args.config else None
    summary = evaluate_vocoders(args.vocoder, args.data, args.out, split=args.split, limit=args.limit, audio=audio,
                                use_asr=not args.no_asr, use_mos=not args.no_mos, device=device(args))
    print(json.dumps(summary, indent=1))
    print(f"per-utterance table: {args.out}/utterances.md")
