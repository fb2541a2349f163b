"""Where a corpus's short utterances land in training (docs/results.md, "One word at a time"):
their lengths in mel frames beside the rest's, and for each batch setting the share of batches
that hold at least one of them, as the trainer's sampler cuts the training split.

    python egs/synthetic/batch_share.py --data data/everyday --config exp/everyday/bundled_config.yaml \\
        --prefix SHT --batches 12800:128 3200:32 [--epochs 5] [--out F.json]

A batch setting is ``max_frames_per_batch:max_batch_size``; the sampler is the config's
(``data.sampler``), seeded with ``train.seed`` and each epoch, over ``--epochs`` epochs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tts.config import ExperimentConfig, load_config  # noqa: E402
from tts.data import FeatureDataset, batch_loader  # noqa: E402
from tts.errors import TTSError, report_to_user  # noqa: E402


def batch_setting(text: str) -> tuple[int, int]:
    """``"12800:128"`` → (max_frames_per_batch, max_batch_size)."""
    frames, _, size = text.partition(":")
    if not (frames.isdigit() and size.isdigit()) or int(frames) < 1 or int(size) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not FRAMES:SIZE (e.g. 3200:32)")
    return int(frames), int(size)


def percentiles(values: list[int]) -> dict[str, float]:
    return {f"p{q}": float(np.percentile(values, q)) for q in (5, 50, 95)} | {"max": float(max(values))}


def share(dataset: FeatureDataset, config: ExperimentConfig, settings: list[tuple[int, int]], prefix: str,
          epochs: int) -> dict:
    """Lengths of the ``prefix`` utterances and of the rest, and per setting the share of batches
    holding one or more ``prefix`` utterances (pooled over ``epochs`` epochs)."""
    ids, lengths = [e["id"] for e in dataset.entries], dataset.frame_lengths
    marked = [uid.startswith(prefix) for uid in ids]
    if not any(marked):
        raise TTSError(f"no training utterance id starts with {prefix!r}: check --prefix")
    result: dict = {"utterances": len(ids), "marked": sum(marked),
                    "frames_marked": percentiles([n for n, m in zip(lengths, marked) if m]),
                    "frames_rest": percentiles([n for n, m in zip(lengths, marked) if not m]) if not all(marked) else None,
                    "batches": {}}
    r = config.model.active.reduction_factor
    for frames, size in settings:
        data = dataclasses.replace(config.data, max_frames_per_batch=frames, max_batch_size=size, num_workers=0)
        sampler = batch_loader(dataset, data, r, frames, config.train.seed, shuffle=True).batches
        holding, count = 0, 0
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            batches = list(sampler)
            count += len(batches)
            holding += sum(any(marked[i] for i in batch) for batch in batches)
        result["batches"][f"{frames}:{size}"] = {"per_epoch": count / epochs, "share_holding": round(holding / count, 4)}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="corpus root (its features are cached)")
    parser.add_argument("--config", type=Path, required=True, help="the training config")
    parser.add_argument("--prefix", default="SHT", help="id prefix of the utterances to follow")
    parser.add_argument("--batches", type=batch_setting, nargs="+", required=True, metavar="FRAMES:SIZE")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--out", type=Path, help="also write the figures here (JSON)")
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config)
        result = share(FeatureDataset.of(args.data, config, "train"), config, args.batches, args.prefix, args.epochs)
    except TTSError as exc:
        return report_to_user(exc)
    text = json.dumps({"data": str(args.data), "prefix": args.prefix, **result}, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
