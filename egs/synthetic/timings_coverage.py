"""How the synthetic corpus's Festival phone timings map onto the project's tokens
(docs/attention_study/second_edition.md): per split, the utterances whose phones map one to one
(identically, or with Festival's vowel reductions only) and those with an inserted or deleted
phone, and the most common substitutions. Writes docs/attention_study/timings_coverage.json.

    .venv/bin/python egs/synthetic/timings_coverage.py [--data data/synthetic] [--config configs/attention_study.yaml]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tts.config import load_config  # noqa: E402
from tts.data.corpus import read_metadata, read_split  # noqa: E402
from tts.data.timings import read_timings, timings_path  # noqa: E402
from tts.data.token_timings import FESTIVAL_TO_ARPABET, PAUSES, map_timings  # noqa: E402
from tts.text import Tokenizer  # noqa: E402
from tts.text.symbols import ARPABET_SET  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/synthetic")
    parser.add_argument("--config", default="configs/attention_study.yaml")
    parser.add_argument("--out", default="docs/attention_study/timings_coverage.json")
    args = parser.parse_args()
    config = load_config(args.config)
    tokenizer = Tokenizer.for_config(config.text)
    texts = {u.id: u.normalized for u in read_metadata(args.data)}
    result: dict = {"corpus": args.data, "config": args.config, "splits": {}}
    substitutions: collections.Counter[str] = collections.Counter()
    for split in ("train", "val", "test"):
        counts: collections.Counter[str] = collections.Counter()
        for uid in read_split(args.data, split):
            path = timings_path(args.data, uid)
            if uid not in texts or not path.is_file():
                counts["no timings"] += 1
                continue
            symbols = tokenizer.ids_to_symbols(tokenizer.encode_verbose(texts[uid]).ids)
            phones = read_timings(path)
            mapped = map_timings(symbols, phones, 0.0, 1.0)
            counts["identical" if mapped.substitutions == mapped.indels == 0 else
                   "vowel reductions only" if mapped.clean else "insertions or deletions"] += 1
            if mapped.clean and mapped.substitutions:
                ours = [s.rstrip("012") for s in symbols if s in ARPABET_SET]
                theirs = [FESTIVAL_TO_ARPABET.get(p.phone, p.phone.upper()) for p in phones if p.phone not in PAUSES]
                substitutions.update(f"{a}->{b}" for a, b in zip(ours, theirs) if a != b)
        total = sum(counts.values())
        clean = counts["identical"] + counts["vowel reductions only"]
        result["splits"][split] = {"utterances": total, **counts, "clean": clean,
                                   "clean_share": round(clean / max(total, 1), 4)}
    result["substitutions"] = dict(substitutions.most_common(12))
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
