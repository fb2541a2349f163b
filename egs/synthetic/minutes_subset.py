"""A corpus that trains on the first N minutes of another's training split: the same recordings,
features, timings, validation and test sentences (linked, not copied), a shorter ``splits/train.txt``.
For learning curves over the amount of data (docs/speakers.md, adaptation to a new voice).

    python egs/synthetic/minutes_subset.py --data data/kal --config configs/multispeaker_small.yaml \
        --minutes 10 --out data/kal_10min
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tts.config import load_config  # noqa: E402
from tts.data.corpus import SPLITS, read_split, write_splits  # noqa: E402
from tts.data.features import feature_dir, read_manifest  # noqa: E402
from tts.errors import TTSError, report_to_user  # noqa: E402


def subset(data: Path, config: Path, minutes: float, out: Path, seed: int) -> float:
    """Write the subset corpus at ``out``; returns the minutes its training split holds."""
    cfg = load_config(config)
    cache = feature_dir(data, cfg.audio, cfg.text)
    seconds = {entry["id"]: entry["seconds"] for entry in read_manifest(cache)}
    train = [uid for uid in read_split(data, "train") if uid in seconds]
    random.Random(seed).shuffle(train)
    chosen, total = [], 0.0
    for uid in train:
        if total >= minutes * 60:
            break
        chosen.append(uid)
        total += seconds[uid]
    if total < minutes * 60:
        raise TTSError(f"{data}'s training split holds {total / 60:.1f} minutes, fewer than the {minutes:g} asked for")
    if out.exists():
        raise TTSError(f"{out} exists: give a new folder")
    staging = out.with_name(out.name + ".part")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in ("wavs", "features", "timings"):
        if (data / name).exists():
            os.symlink(os.path.relpath(data / name, staging), staging / name)
    shutil.copy(data / "metadata.csv", staging / "metadata.csv")
    write_splits(staging, {"train": sorted(chosen), **{s: read_split(data, s) for s in SPLITS if s != "train"}})
    (staging / "subset.json").write_text(json.dumps({"from": str(data), "minutes": round(total / 60, 2),
                                                     "utterances": len(chosen), "seed": seed}, indent=1))
    staging.rename(out)
    return total / 60


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--config", type=Path, required=True, help="the config whose features the corpus has")
    parser.add_argument("--minutes", type=float, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    try:
        got = subset(args.data, args.config, args.minutes, args.out, args.seed)
    except TTSError as exc:
        return report_to_user(exc)
    print(f"{args.out}: {got:.1f} minutes of {args.data}'s training split")
    return 0


if __name__ == "__main__":
    sys.exit(main())
