"""``tts evaluate --long-form``: robustness to long inputs as Battenberg et al. (2020) test it:
passages of several sentences said in one go (never split), at multiples of the longest training
utterance, several passages at each length.

The passages are the corpus's held-out test transcripts, drawn at random (seeded) without
repetition within a passage and joined until the passage has at least ``multiple × longest``
tokens, where ``longest`` is the longest training utterance in the model's tokens. Each is scored
as :mod:`tts.evaluation.scoring` scores any item (CER/WER through Whisper against the reference
voice through the same vocoder, attention failures) plus where in the text the alignment was lost
(:attr:`tts.metrics.attention.AttentionReport.lost_at`).
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tts.audio import edge_silence
from tts.config.inference import MAX_DECODER_STEPS
from tts.data.corpus import read_metadata, read_split
from tts.data.engines import ENGINE_VOICES, check_engine, speak
from tts.errors import TTSError
from tts.evaluation.robustness import longest_training_utterance
from tts.evaluation.scoring import FAILURE_COLUMNS, Item, Meters, Scored, score, summarize, write_tables
from tts.synthesis import Synthesizer

MULTIPLES = (1, 2, 4, 8)
PASSAGES_PER_MULTIPLE = 10


@dataclasses.dataclass(frozen=True)
class Passage:
    """One long input: ``multiple`` of the longest training utterance, ``tokens`` long."""

    id: str
    multiple: int
    text: str
    tokens: int


def make_passages(sentences: Sequence[str], count_tokens: Callable[[str], int], longest: int,
                  multiples: Sequence[int] = MULTIPLES, per_multiple: int = PASSAGES_PER_MULTIPLE,
                  seed: int = 0) -> list[Passage]:
    """``per_multiple`` passages at each multiple of ``longest`` tokens: sentences in a seeded random
    order, no sentence twice in a passage, joined with spaces until ``count_tokens`` reaches
    ``multiple × longest``. Refuses a pool too small to make the longest passage."""
    pool = [s.strip() for s in sentences if s.strip()]
    if not pool:
        raise TTSError("long-form passages need sentences: the corpus's test split has none")
    rng = random.Random(seed)
    passages = []
    for multiple in multiples:
        target = multiple * longest
        for k in range(1, per_multiple + 1):
            order = rng.sample(pool, len(pool))
            text, used = "", 0
            while used < len(order) and (not text or count_tokens(text) < target):
                text = f"{text} {order[used]}".strip()
                used += 1
            tokens = count_tokens(text)
            if tokens < target:
                raise TTSError(f"the test split's {len(pool)} sentences make {tokens} tokens, fewer than a "
                               f"{multiple}x passage needs ({target}): use smaller multiples or a larger split")
            passages.append(Passage(f"long-{multiple}x-{k:02d}", multiple, text, tokens))
    return passages


def run_long_form(synthesizer: Synthesizer, data_root: str | Path, out: str | Path,
                  multiples: Sequence[int] = MULTIPLES, per_multiple: int = PASSAGES_PER_MULTIPLE,
                  engine: str = "festival", use_asr: bool = True, use_mos: bool = False, progress: bool = True,
                  speaker: str | None = None, seed: int = 0) -> dict:
    """Say every passage in one go (``max_decoder_steps`` lifted so that only the per-token limit
    stops a passage), score it, and write ``summary.json``, ``long_form.md`` and the
    per-passage tables under ``out``. Returns the summary."""
    start = time.perf_counter()
    out = Path(out)
    check_engine(engine)
    synthesizer.speaker_index(speaker)
    if not multiples or min(multiples) < 1 or per_multiple < 1:
        raise TTSError("long-form needs multiples ≥ 1 and at least one passage per multiple")
    metadata = {u.id: u for u in read_metadata(data_root)}
    sentences = [metadata[i].normalized for i in read_split(data_root, "test") if i in metadata]
    longest = longest_training_utterance(synthesizer, data_root)
    passages = make_passages(sentences, lambda text: len(synthesizer.tokenizer.encode(text)), longest,
                             sorted(set(multiples)), per_multiple, seed)
    audio = synthesizer.config.audio
    items = [Item(p.id, p.text, edge_silence(speak(p.text, ENGINE_VOICES[engine], audio.sample_rate), audio),
                  category=f"{p.multiple}x", said_as=speaker) for p in passages]
    settings = dataclasses.replace(synthesizer.settings, split_sentences=False, max_decoder_steps=MAX_DECODER_STEPS)
    scored = score(synthesizer, items, out, Meters.create(use_asr, use_mos), progress, settings)
    for passage, entry in zip(passages, scored):
        entry.row["tokens"] = passage.tokens
    by_multiple: dict[str, list[Scored]] = {}
    for entry in scored:
        by_multiple.setdefault(entry.row["category"], []).append(entry)
    summary: dict[str, Any] = {
        "checkpoint_step": synthesizer.step, "precision": synthesizer.precision, "corpus": str(data_root),
        "reference_voice": f"{engine} slt",
        "longest_training_tokens": longest, "passages_per_multiple": per_multiple, "seed": seed,
        "multiples": {m: {**summarize(group), **lost_summary(group)} for m, group in by_multiple.items()},
        "seconds": round(time.perf_counter() - start, 1)}
    write_tables([s.row for s in scored], summary, out,
                 show=["id", "tokens", "seconds", "cer", "reference_cer", *FAILURE_COLUMNS.values(), "lost_at"])
    (out / "long_form.md").write_text(long_form_table(summary))
    return summary


def lost_summary(group: list[Scored]) -> dict[str, Any]:
    """How many passages lost their alignment and, over those, the median position (share of the
    text) where it happened."""
    lost = [s.row["lost_at"] for s in group if s.row.get("lost_at") is not None]
    return {"lost": len(lost), "lost_at_median": round(float(np.median(lost)), 3) if lost else None}


def long_form_table(summary: dict) -> str:
    """The per-multiple summary as a markdown table."""
    failures = list(FAILURE_COLUMNS.values())
    lines = [f"Passages said in one go; 1x = {summary['longest_training_tokens']} tokens (the longest training "
             f"utterance), {summary['passages_per_multiple']} passages each.", "",
             "| length | passages | CER | ref CER | " + " | ".join(failures) + " | lost | lost at (median) |",
             "|" + "---|" * (6 + len(failures))]
    for multiple, s in summary["multiples"].items():
        cells = [multiple, s["utterances"], s.get("cer", ""), s.get("reference_cer", ""),
                 *(s["attention_failures"][f] for f in failures), s["lost"],
                 "" if s["lost_at_median"] is None else f"{s['lost_at_median']:.0%} of the text"]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"
