"""``tts evaluate --suite robustness``: inputs a new user types, by category, scored against the
corpus's own voice reading the same text.

Categories (``suites/robustness.yaml``; ``everyday_heldout``, ``one_word_choice`` and
``one_word_choice_more`` are the sets that choose among checkpoints, the others report): one word,
short phrases, everyday sentences, numbers / dates / money / abbreviations, tongue twisters and
repeated words, and long unsplit sentences of 1×, 2× and 3× the longest training utterance (in
tokens; said in one go, so they measure length generalization as in Battenberg et al. 2020; ten at
each length, so that the 3× / 1× CER ratio does not rest on one sentence). The ceiling of each
text is the reference voice (Festival's ``slt``, the synthetic corpus's voice) reading it through
the same mel → vocoder path.
Per category: WER/CER with substitutions, deletions and insertions, attention failures, DNSMOS.

``suites/report.yaml`` (``--suite report``) runs the same way: 200 everyday sentences written to
report on, which no choice may read (kitchen, street, weather, numbers, names; no long category).
"""

from __future__ import annotations

import dataclasses
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tts.audio import edge_silence
from tts.data import FeatureDataset, require_corpus
from tts.data.engines import ENGINE_VOICES, check_engine, speak
from tts.errors import TTSError
from tts.evaluation.scoring import Item, Meters, Scored, score, summarize, write_tables
from tts.synthesis import Synthesizer
from tts.text import normalize_text

SUITES = Path(__file__).parent / "suites"
LONG_MULTIPLES = (1, 2, 3)
#: categories of one word each, scored by the share heard exactly (the ``one_word_choice`` ones choose checkpoints)
ONE_WORD_CATEGORIES = {"one_word", "one_word_choice", "one_word_choice_more"}
#: long sentences at each multiple: the clauses in the suite's order, then seeded shuffles of them
LONG_PASSAGES = 10
#: the long category's unit when no corpus is given: the synthetic corpus's longest training utterance
DEFAULT_LONGEST_TOKENS = 147


def load_suite(name: str) -> dict:
    path = SUITES / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in SUITES.glob("*.yaml")))
        raise TTSError(f"no suite '{name}' (suites: {known})")
    return yaml.safe_load(path.read_text())


def check_categories(definition: dict, suite: str, categories: list[str] | None) -> None:
    """Refuse categories the suite does not have, naming the ones it has."""
    unknown = sorted(set(categories or []) - set(suite_categories(definition)))
    if unknown:
        raise TTSError(f"suite '{suite}' has no category {', '.join(unknown)} "
                       f"(it has {', '.join(suite_categories(definition))})")


def longest_training_utterance(synthesizer: Synthesizer, data_root: str | Path | None) -> int:
    """Tokens in the longest training utterance of ``data_root``'s feature cache (for the model's
    text settings); :data:`DEFAULT_LONGEST_TOKENS` without a corpus."""
    if data_root is None:
        return DEFAULT_LONGEST_TOKENS
    root = require_corpus(data_root)
    config = synthesizer.config
    dataset = FeatureDataset.of(root, config, "train")
    return max(entry["n_tokens"] for entry in dataset.entries)


def long_sentence(clauses: list[str], tokens: int, synthesizer: Synthesizer) -> str:
    """One sentence of at least ``tokens`` tokens: the clauses in turn, joined with ", and "."""
    text, k = "", 0
    while not text or len(synthesizer.tokenizer.encode(text)) < tokens:
        clause = clauses[k % len(clauses)]
        text = clause[0].upper() + clause[1:] + "." if not text else f"{text[:-1]}, and {clause}."
        k += 1
    return text


def suite_categories(suite: dict) -> list[str]:
    """The suite's categories, the built ``long`` one last (a suite with ``long_clauses``)."""
    return [*suite["categories"], *(["long"] if "long_clauses" in suite else [])]


def long_clause_orders(clauses: list[str], passages: int) -> list[list[str]]:
    """The clause order of each long passage: the suite's own order, then ``passages − 1`` seeded
    shuffles (the same on every run)."""
    rng = random.Random(0)
    return [list(clauses)] + [rng.sample(clauses, len(clauses)) for _ in range(passages - 1)]


def suite_items(synthesizer: Synthesizer, suite: dict, longest: int, categories: list[str] | None = None,
                long_passages: int = LONG_PASSAGES) -> list[tuple[str, str, str]]:
    """``(category, id, text)`` for every input of the suite (of ``categories`` only, when given);
    the long ones are ``long-{multiple}x-{passage}``."""
    wanted = set(categories or suite_categories(suite))
    items = []
    for category, texts in suite["categories"].items():
        if category in wanted:
            items += [(category, f"{category}-{i:02d}", text) for i, text in enumerate(texts, 1)]
    if "long" in wanted and "long_clauses" in suite:
        orders = long_clause_orders(suite["long_clauses"], long_passages)
        for multiple in LONG_MULTIPLES:
            for k, order in enumerate(orders, 1):
                items.append(("long", f"long-{multiple}x-{k:02d}", long_sentence(order, multiple * longest, synthesizer)))
    return items


def recognized(scored: list[Scored]) -> dict:
    """The share of texts heard without a word error, ours and the reference voice's."""
    pairs = [(s.ours, s.ceiling) for s in scored if s.ours is not None and s.ceiling is not None]
    return {"recognized": round(sum(ours.word_errors == 0 for ours, _ in pairs) / len(pairs), 3),
            "reference_recognized": round(sum(ceiling.word_errors == 0 for _, ceiling in pairs) / len(pairs), 3)}


def long_cer(scored: list[Scored], resamples: int = 2000) -> dict:
    """CER of the long sentences at each multiple (character errors over characters, pooled over
    the passages), ours and the reference voice's, and ``long_cer_ratio``, ours at the longest
    multiple over ours at the shortest (3× / 1×), with its standard error over passages (a seeded
    bootstrap; None for one passage)."""
    counts = {s.row["id"]: (s.ours, s.ceiling) for s in scored if s.ours and s.ceiling}
    passages = sorted({uid.rsplit("-", 1)[1] for uid in counts})
    # (passages, ours | reference, errors | characters) at each multiple
    tallies = {m: np.array([[(c.char_errors, c.chars) for c in counts[f"long-{m}x-{p}"]] for p in passages])
               for m in LONG_MULTIPLES}
    errors = {m: t[..., 0] for m, t in tallies.items()}
    chars = {m: t[..., 1] for m, t in tallies.items()}
    first, last = LONG_MULTIPLES[0], LONG_MULTIPLES[-1]

    def ratio(rows: np.ndarray) -> float:
        return float(errors[last][rows, 0].sum() / chars[last][rows, 0].sum()
                     / max(errors[first][rows, 0].sum() / chars[first][rows, 0].sum(), 1e-9))

    rng = np.random.default_rng(0)
    spread = ([ratio(rng.integers(0, len(passages), len(passages))) for _ in range(resamples)]
              if len(passages) > 1 else [])
    return {"long_passages": len(passages),
            "long_cer": {f"{m}x": round(float(errors[m][:, 0].sum() / chars[m][:, 0].sum()), 4) for m in LONG_MULTIPLES},
            "long_reference_cer": {f"{m}x": round(float(errors[m][:, 1].sum() / chars[m][:, 1].sum()), 4)
                                   for m in LONG_MULTIPLES},
            "long_cer_ratio": round(ratio(np.arange(len(passages))), 3),
            "long_cer_ratio_standard_error": round(float(np.std(spread)), 3) if spread else None}


def run_suite(synthesizer: Synthesizer, out: str | Path, suite: str = "robustness", data_root: str | Path | None = None,
              engine: str = "festival", use_asr: bool = True, use_mos: bool = True, progress: bool = True,
              categories: list[str] | None = None, speaker: str | None = None,
              long_passages: int = LONG_PASSAGES) -> dict:
    """Run every category (or ``categories``) with the synthesizer's settings; write
    ``summary.json``, ``categories.md`` and the per-utterance tables under ``out``. The long
    category always says each text in one go, ``long_passages`` at each length. A voice of several
    speakers says it as ``speaker``."""
    start = time.perf_counter()
    out = Path(out)
    check_engine(engine)
    synthesizer.speaker_index(speaker)  # a voice of several speakers says the suite as one of them
    definition = load_suite(suite)
    check_categories(definition, suite, categories)
    longest = longest_training_utterance(synthesizer, data_root)
    audio = synthesizer.config.audio
    meters = Meters.create(use_asr, use_mos)
    by_category: dict[str, list[Item]] = {}
    for category, uid, text in suite_items(synthesizer, definition, longest, categories, long_passages):
        reference = edge_silence(speak(normalize_text(text), ENGINE_VOICES[engine], audio.sample_rate), audio)
        by_category.setdefault(category, []).append(Item(uid, text, reference, category, said_as=speaker))
    scored: dict[str, list[Scored]] = {}
    for category, items in by_category.items():
        settings = (dataclasses.replace(synthesizer.settings, split_sentences=False) if category == "long"
                    else synthesizer.settings)
        scored[category] = score(synthesizer, items, out, meters, progress, settings)
    summary: dict[str, Any] = {"checkpoint_step": synthesizer.step, "precision": synthesizer.precision,
                               "suite": suite, "reference_voice": f"{engine} slt",
                               "longest_training_tokens": longest,
                               "categories": {c: summarize(s) for c, s in scored.items()},
                               "overall": summarize([s for group in scored.values() for s in group])}
    for category in ONE_WORD_CATEGORIES & scored.keys() if use_asr else ():
        summary["categories"][category].update(recognized(scored[category]))
    if use_asr and "long" in scored:
        summary.update(long_cer(scored["long"]))
    summary["seconds"] = round(time.perf_counter() - start, 1)
    write_tables([s.row for group in scored.values() for s in group], summary, out)
    (out / "categories.md").write_text(category_table(summary))
    return summary


def _gap_cell(summary: dict) -> str:
    """``reference − ours`` DNSMOS ± its standard error (empty without DNSMOS)."""
    if "dnsmos_p808_gap" not in summary:
        return ""
    error = summary["dnsmos_p808_gap_standard_error"]
    return f"{summary['dnsmos_p808_gap']}" + (f" ± {error}" if error is not None else "")


def category_table(summary: dict) -> str:
    """The per-category summary as a markdown table."""
    columns = [("utterances", "n"), ("wer", "WER"), ("reference_wer", "ref WER"), ("cer", "CER"),
               ("deletions", "del"), ("insertions", "ins"), ("recognized", "recognized"),
               ("reference_recognized", "ref recognized"),
               ("dnsmos_p808", "DNSMOS"), ("reference_dnsmos_p808", "ref DNSMOS")]
    failures = ["skips", "repeats", "early_stops", "step_limit_hits"]
    lines = ["| category | " + " | ".join(name for _, name in columns) + " | DNSMOS gap | " + " | ".join(failures)
             + " |", "|" + "---|" * (2 + len(columns) + len(failures))]
    for category, s in [*summary["categories"].items(), ("overall", summary["overall"])]:
        cells = [str(s.get(key, "")) for key, _ in columns] + [_gap_cell(s)]
        cells += [str(s["attention_failures"][f]) for f in failures]
        lines.append(f"| {category} | " + " | ".join(cells) + " |")
    if "long_cer" in summary:
        ours = ", ".join(f"{k} {v}" for k, v in summary["long_cer"].items())
        reference = ", ".join(f"{k} {v}" for k, v in summary["long_reference_cer"].items())
        error = summary["long_cer_ratio_standard_error"]
        lines += ["", f"Long unsplit sentences ({summary['longest_training_tokens']} tokens = 1x, "
                      f"{summary['long_passages']} at each length), CER: {ours} (reference voice: {reference}); "
                      f"{LONG_MULTIPLES[-1]}x / {LONG_MULTIPLES[0]}x: {summary['long_cer_ratio']}"
                      + (f" ± {error}" if error is not None else "") + "."]
    return "\n".join(lines) + "\n"
