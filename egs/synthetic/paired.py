"""Two evaluations of the same sentences (``tts evaluate ... --out A`` and ``--out B``), compared
utterance by utterance: the mean difference B − A of each meter with its standard error, so a
difference can be told from the noise of the sentences. ``recognized`` is 1 for a text heard
without a word error (what the one-word categories count), else 0.

    python egs/synthetic/paired.py exp/vocoders/test_griffin-lim exp/vocoders/test_hifigan-ljspeech

``--with A2 B2`` (repeatable) pools another pair of evaluations, of other texts, into the same
comparison: the 100 ``one_word_choice`` words and the 200 ``one_word_choice_more`` ones read in two
folders per voice are compared as 300 (ids are unique across categories).

``--by-reference`` adds the same figures for two groups of texts: those whose reference recording
(the voice's teacher, as A heard it) the meter hears exactly, and those it mishears. A voice that
imitates its teacher more closely loses, under this meter, the words the teacher is misheard on.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

METERS = ("dnsmos_p808", "dnsmos_sig", "dnsmos_bak", "dnsmos_ovrl", "wer", "cer", "recognized", "mcd_db")


def rows(*folders: Path) -> dict[str, dict]:
    """Each utterance's row by id over the ``folders``' evaluations, with ``recognized`` where it was
    heard (``wer`` given); an id in two folders is refused."""
    by_id: dict[str, dict] = {}
    for folder in folders:
        for row in json.loads((folder / "utterances.json").read_text()):
            if row["id"] in by_id:
                raise ValueError(f"utterance {row['id']} is in two of {', '.join(map(str, folders))}; "
                                 "pool evaluations of different texts")
            by_id[row["id"]] = {**row, **({"recognized": float(row["wer"] == 0)} if row.get("wer") is not None else {})}
    return by_id


def compare(a: dict[str, dict], b: dict[str, dict], ids: list[str]) -> dict[str, object]:
    """The utterance count and, for each meter both evaluations hold, A's and B's means and the mean
    paired difference B − A with its standard error over ``ids`` (none below two utterances)."""
    result: dict[str, object] = {"utterances": len(ids)}
    for meter in METERS:
        if ids and meter in a[ids[0]] and meter in b[ids[0]]:
            diff = np.array([b[i][meter] - a[i][meter] for i in ids], dtype=float)
            result[meter] = {"a": round(float(np.mean([a[i][meter] for i in ids])), 4),
                             "b": round(float(np.mean([b[i][meter] for i in ids])), 4),
                             "b_minus_a": round(float(diff.mean()), 4),
                             "standard_error": round(float(diff.std(ddof=1) / np.sqrt(len(diff))), 4)
                             if len(diff) > 1 else None}
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--with", dest="more", nargs=2, type=Path, action="append", default=[], metavar=("A2", "B2"),
                        help="another pair of evaluations (of other texts) to pool with A and B")
    parser.add_argument("--by-reference", action="store_true",
                        help="also compare the texts whose reference recording is heard exactly and those it is not")
    args = parser.parse_args(argv)
    folders_a, folders_b = [args.a, *(pair[0] for pair in args.more)], [args.b, *(pair[1] for pair in args.more)]
    try:
        a, b = rows(*folders_a), rows(*folders_b)
    except ValueError as error:
        parser.error(str(error))
    shared = sorted(set(a) & set(b))
    result: dict[str, object] = {"a": ", ".join(map(str, folders_a)), "b": ", ".join(map(str, folders_b)),
                                 **compare(a, b, shared)}
    if args.by_reference:
        if any(a[i].get("reference_wer") is None for i in shared):
            parser.error(f"{args.a} holds no reference transcripts: evaluate with the reference voice heard")
        result["reference_heard"] = compare(a, b, [i for i in shared if a[i]["reference_wer"] == 0])
        result["reference_misheard"] = compare(a, b, [i for i in shared if a[i]["reference_wer"] > 0])
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
