"""``tts export``: a training checkpoint stripped for release, with the inference settings it ships with."""

from __future__ import annotations

import argparse

from tts import checkpoint
from tts.commands.options import inference_settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="strip a checkpoint for release (no optimizer, float16 weights)")
    p.add_argument("checkpoint")
    p.add_argument("--out", required=True, help="the release file (.pt)")
    p.add_argument("--fp32", action="store_true", help="keep float32 weights")
    p.add_argument("settings", nargs="*", metavar="inference.KEY=VALUE",
                   help="inference settings the release is stored with, e.g. inference.attention_window=[1,2]")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    out = checkpoint.export(args.checkpoint, args.out, half=not args.fp32, inference=inference_settings(args.settings))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")
