"""Are a voice's misheard words the ones its training text lacks? (issue #61, item 2)

Reads the training texts of the voice's corpora (every utterance outside their val and test
splits) and one `tts evaluate` folder (its ``utterances.csv``: the text, what Whisper heard from
the voice and from the reference voice). Each word of the evaluated texts is aligned to what was
heard (jiwer, the scorer's own normalization); a word counts as **misheard by the model** when it
is substituted or deleted in the voice's transcript but heard right from the reference voice (so
Whisper's own misses of the reference speech are left out). The words are then grouped by how
often the training text says them, and by the rarest diphone around them:

    .venv/bin/python egs/synthetic/coverage_errors.py --train data/everyday \\
        --eval exp/everyday/heldout_hifigan [--also exp/everyday/heldout_griffin-lim] \\
        --out docs/everyday_voice/coverage_errors.json

``--also``: the same voice's evaluation through another vocoder; a word misheard through both is
in the mels, not the vocoder.

If the misheard share falls steeply with the training count, coverage limits the voice; if it is
flat, the model (capacity, training) or the vocoder does. Text-only: it times nothing.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "recipes" / "synthetic"))

from diphone_cover import diphones, phones  # noqa: E402

from tts.data.corpus import read_metadata, read_split  # noqa: E402
from tts.errors import TTSError  # noqa: E402
from tts.metrics.asr import normalize_for_scoring  # noqa: E402
from tts.text import Tokenizer  # noqa: E402

#: word training-count groups: (label, lowest count, highest count)
COUNT_GROUPS = (("0", 0, 0), ("1-4", 1, 4), ("5-19", 5, 19), ("20-99", 20, 99), ("100+", 100, 10**12))


def training_texts(corpus: Path) -> list[str]:
    """Normalized texts of every utterance of ``corpus`` outside its val and test splits (a corpus
    still being spoken: every text of its ``texts.tsv``, which the recipe writes first)."""
    if not (corpus / "metadata.csv").is_file() and (corpus / "texts.tsv").is_file():
        return [line.split("\t", 1)[1] for line in (corpus / "texts.tsv").read_text(encoding="utf-8").splitlines()
                if "\t" in line]
    held_out: set[str] = set()
    for split in ("val", "test"):
        if (corpus / "splits" / f"{split}.txt").is_file():
            held_out |= set(read_split(corpus, split))
    return [u.normalized for u in read_metadata(corpus) if u.id not in held_out]


def misheard(reference: str, hypothesis: str) -> list[bool]:
    """Per word of ``reference`` (scoring normalization): substituted or deleted in ``hypothesis``."""
    import jiwer

    ref, hyp = normalize_for_scoring(reference), normalize_for_scoring(hypothesis)
    wrong = [False] * len(ref.split())
    if not ref:
        return wrong
    for chunk in jiwer.process_words(ref, hyp or "<nothing>").alignments[0]:
        if chunk.type in ("substitute", "delete"):
            for i in range(chunk.ref_start_idx, chunk.ref_end_idx):
                wrong[i] = True
    return wrong


def word_diphone_floor(word: str, tokenizer: Tokenizer, counts: Counter) -> int | None:
    """The training count of the rarest diphone inside ``word`` (None for a one-phone word)."""
    try:
        pairs = diphones(phones(word, tokenizer))
    except TTSError:
        return None
    return min((counts[p] for p in pairs), default=None)


def read_rows(folder: str) -> list[dict]:
    with open(Path(folder) / "utterances.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def group(count: int) -> str:
    return next(label for label, low, high in COUNT_GROUPS if low <= count <= high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", nargs="+", required=True, help="the voice's training corpora")
    parser.add_argument("--eval", required=True, help="a tts evaluate folder with utterances.csv")
    parser.add_argument("--also", help="the same voice's evaluation through another vocoder")
    parser.add_argument("--out", help="JSON to write")
    args = parser.parse_args()

    tokenizer = Tokenizer()
    texts = [t for corpus in args.train for t in training_texts(Path(corpus))]
    word_counts = Counter(w for t in texts for w in normalize_for_scoring(t).split())
    diphone_counts: Counter = Counter()
    for t in texts:
        try:
            diphone_counts.update(diphones(phones(t, tokenizer)))
        except TTSError:
            continue

    rows = read_rows(args.eval)
    other = {row["id"]: row for row in read_rows(args.also)} if args.also else {}
    by_count: dict[str, Counter] = {label: Counter() for label, _, _ in COUNT_GROUPS}
    by_diphone: dict[str, Counter] = {label: Counter() for label, _, _ in COUNT_GROUPS}
    model_misheard: list[dict] = []
    for row in rows:
        words = normalize_for_scoring(row["text"]).split()
        ours, theirs = misheard(row["text"], row["transcript"]), misheard(row["text"], row["reference_transcript"])
        also = misheard(row["text"], other[row["id"]]["transcript"]) if row["id"] in other else None
        for i, (word, wrong, reference_wrong) in enumerate(zip(words, ours, theirs)):
            if reference_wrong:
                continue  # Whisper misses it from the reference voice too
            floor = word_diphone_floor(word, tokenizer, diphone_counts)
            diphone_group = group(floor) if floor is not None else None
            for table, key in ((by_count, group(word_counts[word])), (by_diphone, diphone_group)):
                if key is not None:
                    table[key]["words"] += 1
                    table[key]["misheard"] += wrong
            if wrong:
                model_misheard.append({"word": word, "training_count": word_counts[word], "rarest_diphone": floor,
                                       "sentence": row["id"], "heard": row["transcript"],
                                       **({"also_misheard": also[i]} if also is not None else {})})

    def shares(table: dict[str, Counter]) -> list[dict]:
        return [{"group": label, "words": c["words"], "misheard": c["misheard"],
                 "share": round(c["misheard"] / c["words"], 4) if c["words"] else None}
                for label, c in table.items()]

    report = {"train": args.train, "training_utterances": len(texts), "training_words": sum(word_counts.values()),
              "eval": args.eval, "sentences": len(rows),
              "by_word_training_count": shares(by_count), "by_rarest_diphone_in_word": shares(by_diphone),
              "misheard_by_model_only": sorted(model_misheard, key=lambda m: m["training_count"])}
    for title, table in (("word said in training", by_count), ("rarest diphone in the word", by_diphone)):
        print(f"{title}: " + "; ".join(f"{r['group']}x: {r['misheard']}/{r['words']}" for r in shares(table)))
    if other:
        both = sum(m.get("also_misheard", False) for m in model_misheard)
        report["also"] = args.also
        report["misheard_through_both"] = both
        print(f"misheard through both vocoders: {both} of {len(model_misheard)}")
    print("misheard (training count): " + ", ".join(f"{m['word']} ({m['training_count']})" for m in model_misheard))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
