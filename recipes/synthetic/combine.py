#!/usr/bin/env python3
"""Join corpora of this recipe into one, keeping the first one's held-out splits.

    python recipes/synthetic/combine.py --base data/synthetic --add data/broad data/short --out data/everyday

The result trains on the base corpus's training split plus every utterance of each ``--add`` and is
validated and tested on the base corpus's own val and test splits, so its figures compare with
models trained on the base corpus alone. An added utterance whose text is a base val or test text
(compared without case and punctuation) is left out, as is one whose id is already in use. Wavs are
symbolic links to the two corpora's files; ``tts features --data OUT`` then builds
the cache.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from prepare import comparable  # noqa: E402

from tts.data.corpus import read_metadata, read_split, require_corpus, write_metadata, write_splits  # noqa: E402
from tts.errors import TTSError, report_to_user  # noqa: E402


def combine(base: Path, additions: list[Path], out: Path) -> dict[str, int]:
    """Write the joined corpus to ``out``; how many utterances came from the base corpus, how many
    were added and how many were left out."""
    for root in (base, *additions):
        require_corpus(root)
    if out.exists() and any(out.iterdir()):
        raise TTSError(f"--out {out} is not empty: give a new folder")
    base_items = read_metadata(base)
    splits = {name: read_split(base, name) for name in ("train", "val", "test")}
    by_id = {u.id: u for u in base_items}
    held_out = {comparable(by_id[i].text) for name in ("val", "test") for i in splits[name]}
    sources = [(base, base_items)]
    seen, left_out = set(by_id), 0
    for root in additions:
        added = read_metadata(root)
        kept = [u for u in added if u.id not in seen and comparable(u.text) not in held_out]
        seen |= {u.id for u in kept}
        left_out += len(added) - len(kept)
        sources.append((root, kept))
    (out / "wavs").mkdir(parents=True)
    for root, items in sources:
        for u in items:
            (out / "wavs" / f"{u.id}.wav").symlink_to((root / "wavs" / f"{u.id}.wav").resolve())
    added_ids = [u.id for _, items in sources[1:] for u in items]
    write_metadata(out, [u for _, items in sources for u in items])
    write_splits(out, {"train": sorted(splits["train"] + added_ids), "val": splits["val"], "test": splits["test"]})
    return {"base": len(base_items), "added": len(added_ids), "left_out": left_out}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the corpus whose val and test splits are kept")
    parser.add_argument("--add", required=True, nargs="+", help="the corpora whose utterances join the training split")
    parser.add_argument("--out", required=True, help="the joined corpus (a new folder)")
    args = parser.parse_args(argv)
    try:
        counts = combine(Path(args.base), [Path(a) for a in args.add], Path(args.out))
    except TTSError as exc:
        return report_to_user(exc)
    print(f"corpus ready at {args.out}: {counts['base']} from {args.base}, {counts['added']} from {' '.join(args.add)} "
          f"({counts['left_out']} left out: a held-out text or an id in use)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
