"""``tts g2p``: what the frontend makes of a text (normalized words, phonemes, ids)."""

from __future__ import annotations

import argparse

from tts.config import TextConfig, choices
from tts.config.text import TextMode
from tts.text import Tokenizer


def declare(p: argparse.ArgumentParser) -> None:
    p.add_argument("text")
    p.add_argument("--mode", default="phoneme", choices=choices(TextMode))
    p.add_argument("--lexicon", help="pronunciation lexicon (WORD PH ON EMES per line), before the dictionary")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    tokenizer = Tokenizer.for_config(TextConfig(mode=args.mode, lexicon=args.lexicon or ""))
    result = tokenizer.encode_verbose(args.text)
    print(f"normalized: {result.normalized}")
    print(f"symbols:    {tokenizer.decode(result.ids)}")
    print(f"ids:        {' '.join(map(str, result.ids))}")
