"""``tts features``: a corpus's mel and token-id cache, statistics and rejection report."""

from __future__ import annotations

import argparse
import json
import os

from tts.commands.options import positive_int


def declare(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, help="corpus root (metadata.csv, wavs/, splits/)")
    p.add_argument("--config", help="YAML config (audio and text settings)")
    p.add_argument("--jobs", type=positive_int, default=min(len(os.sched_getaffinity(0)), 8),
                   help="worker processes (default: the usable cores, at most 8; each takes ~0.5 GB)")
    p.add_argument("overrides", nargs="*", help="key.path=value overrides")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from tts.config import load_config
    from tts.data import compute_features

    config = load_config(args.config, args.overrides)
    out = compute_features(args.data, config, num_workers=args.jobs)
    stats = json.loads((out / "stats.json").read_text())
    print(f"features in {out}")
    print(json.dumps({k: v for k, v in stats.items() if not k.endswith("per_bin")}, indent=1))
