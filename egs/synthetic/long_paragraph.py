"""Write one paragraph of about 20,000 characters made of the synthetic corpus's test transcripts
(repeated as needed), for ``tts bench long-text``.

    python egs/synthetic/long_paragraph.py [--data data/synthetic] [--chars 20000] > out/long_paragraph.txt
"""

from __future__ import annotations

import argparse

from tts.data.corpus import read_metadata, read_split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="data/synthetic")
    parser.add_argument("--chars", type=int, default=20000)
    args = parser.parse_args()
    texts = {u.id: u.normalized for u in read_metadata(args.data)}
    sentences = [texts[i] for i in read_split(args.data, "test") if i in texts]
    paragraph, k = "", 0
    while len(paragraph) < args.chars:
        paragraph += sentences[k % len(sentences)] + " "
        k += 1
    print(paragraph[: args.chars].rsplit(" ", 1)[0])


if __name__ == "__main__":
    main()
