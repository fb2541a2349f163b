"""``tts bench frontend``: the text frontend's speed and what it could not read on a transcript list."""

from __future__ import annotations

import gzip
import logging
import time
from pathlib import Path

import numpy as np
import torch

from tts.text import Tokenizer
from tts.text.g2p import get_g2p

LJSPEECH_TRANSCRIPTS = Path(__file__).resolve().parents[2] / "recipes" / "ljspeech" / "nvidia_filelists.tsv.gz"


def bench_frontend(text_file: str | None = None, limit: int | None = None) -> dict:
    """Milliseconds per utterance on one thread, the words only the neural G2P could pronounce,
    the longest token sequence and every character the inventory dropped (default transcripts:
    LJSpeech's 13,100 normalized ones from NVIDIA's filelists)."""
    torch.set_num_threads(1)
    path = Path(text_file) if text_file else LJSPEECH_TRANSCRIPTS
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        texts = [line.rstrip("\n").split("\t")[-1] for line in fh if line.strip()][:limit]
    tokenizer = Tokenizer()
    g2p = get_g2p()
    tokenizer.encode(texts[0])  # load the tagger and the network outside the timing
    g2p.neural_words.clear()
    warnings: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warnings.append(record.getMessage())

    handler = Collect(logging.WARNING)
    logging.getLogger("tts.text").addHandler(handler)
    try:
        start = time.perf_counter()
        lengths = [len(tokenizer.encode(text)) for text in texts]
        seconds = time.perf_counter() - start
    finally:
        logging.getLogger("tts.text").removeHandler(handler)
    longest = int(np.argmax(lengths))
    return {"utterances": len(texts), "source": str(path.name), "ms_per_utterance": round(1000 * seconds / len(texts), 3),
            "neural_g2p_words": {"distinct": len(g2p.neural_words), "occurrences": sum(g2p.neural_words.values()),
                                 "most_common": g2p.neural_words.most_common(25)},
            "longest_token_sequence": {"tokens": lengths[longest], "text": texts[longest]},
            "warnings": sorted(set(warnings))}
