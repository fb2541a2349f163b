"""Scoring synthesized speech against recordings, shared by ``tts evaluate`` and the robustness suite.

Per utterance: attention metrics and failures, MCD (DTW) against the reference recording, and,
with the meters, WER/CER (substitutions, deletions, insertions) and DNSMOS of our speech and of
the reference recording sent through the same mel → vocoder path (the ceiling this vocoder
allows), with the PESQ and STOI of that resynthesis against the recording. Writes
``summary.json``, ``utterances.{json,csv,md}`` and the wavs / alignment plots under ``out``.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tts.audio import MelSpectrogram, save_wav
from tts.config import InferenceConfig
from tts.metrics import ErrorCounts, Failure, Recognizer, error_counts, mel_cepstral_distortion
from tts.metrics.mos import MOSPredictor, MOSScores
from tts.metrics.quality import resynthesis_quality
from tts.plots import save_figure
from tts.synthesis import Synthesizer

FAILURE_COLUMNS = {Failure.SKIP: "skips", Failure.REPEAT: "repeats", Failure.EARLY_STOP: "early_stops",
                   Failure.STEP_LIMIT: "step_limit_hits"}
COUNT_COLUMNS = [*FAILURE_COLUMNS.values(), "first_token_skips"]


@dataclass
class Item:
    """One text to synthesize and the reference waveform ``(T_wav,)`` that reads it (edge silence
    as the features define it), at the synthesizer's sample rate."""

    id: str
    text: str
    reference: np.ndarray
    category: str = ""


@dataclass
class Meters:
    """The optional meters: a recognizer for WER/CER and a MOS predictor."""

    recognizer: Recognizer | None = None
    mos: MOSPredictor | None = None

    @classmethod
    def create(cls, asr: bool, mos: bool) -> "Meters":
        return cls(Recognizer() if asr else None, MOSPredictor() if mos else None)


@dataclass
class Scored:
    """One item's table row, and the error counts of ours and of the ceiling (with a recognizer)."""

    row: dict
    ours: ErrorCounts | None = None
    ceiling: ErrorCounts | None = None


def rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def mean_of(rows: list[dict], key: str, digits: int) -> float | None:
    """The mean of a column over the rows where it is defined (None where it is nowhere)."""
    values = [r[key] for r in rows if r.get(key) is not None]
    return round(float(np.mean(values)), digits) if values else None


def paired_gap(rows: list[dict], ours: str, reference: str) -> dict[str, float | None]:
    """The mean per-utterance ``reference − ours`` of a column, and its standard error (the
    spread of the paired differences / √n; None for one utterance): how far a gap over these
    texts can be trusted."""
    differences = np.array([r[reference] - r[ours] for r in rows])
    error = float(differences.std(ddof=1) / np.sqrt(len(differences))) if len(differences) > 1 else None
    return {"gap": round(float(differences.mean()), 3), "gap_standard_error": rounded(error, 3)}


def _mos_columns(prefix: str, scores: MOSScores) -> dict:
    return {f"{prefix}dnsmos_{k}": round(v, 3) for k, v in vars(scores).items()}


def score(synthesizer: Synthesizer, items: list[Item], out: Path, meters: Meters, progress: bool = True,
          settings: InferenceConfig | None = None) -> list[Scored]:
    """Synthesize every item (batched; the synthesizer's settings, or ``settings``), write its wav
    and alignment plot to ``out/wavs/`` and score it. The recordings' mels go through the
    synthesizer's own vocoder: the ceiling is vocoded exactly as our mels are."""
    from tqdm import tqdm

    (out / "wavs").mkdir(parents=True, exist_ok=True)
    audio = synthesizer.config.audio
    mel_fn = MelSpectrogram(audio)
    settings = settings or synthesizer.settings
    batch_size = settings.batch_size
    scored = []
    for start in tqdm(range(0, len(items), batch_size), desc="evaluate", unit="batch", disable=not progress):
        chunk = items[start:start + batch_size]
        for item, result in zip(chunk, synthesizer([i.text for i in chunk], settings)):
            ref_mel = mel_fn(torch.from_numpy(item.reference)).numpy()
            save_wav(out / "wavs" / f"{item.id}.wav", result.waveform, result.sample_rate)
            save_figure(result.figure(synthesizer.step, settings.stop_threshold), out / "wavs" / f"{item.id}.png")
            reports = [seg.report for seg in result.segments]
            row = {
                "id": item.id, **({"category": item.category} if item.category else {}), "text": item.text,
                "seconds": round(result.duration, 3), "reference_seconds": round(len(item.reference) / audio.sample_rate, 3),
                "rtf": round(result.rtf, 4), "mcd_db": round(mel_cepstral_distortion(result.mel, ref_mel), 3),
                "focus_rate": round(float(np.mean([r.focus_rate for r in reports])), 3),
                "monotonicity": round(float(np.mean([r.monotonicity for r in reports])), 3),
                "diagonal_correlation": round(float(np.mean([r.diagonal_correlation for r in reports])), 3),
                **{column: sum(kind in r.failures for r in reports) for kind, column in FAILURE_COLUMNS.items()},
                "first_token_skips": sum(r.first_token_skipped for r in reports),
            }
            entry = Scored(row)
            if meters.recognizer is not None or meters.mos is not None:
                ceiling_wav = synthesizer.vocode(ref_mel)
                if meters.recognizer is not None:
                    hypothesis = meters.recognizer(result.waveform, result.sample_rate)
                    ceiling = meters.recognizer(ceiling_wav, audio.sample_rate)
                    ours, theirs = error_counts(item.text, hypothesis), error_counts(item.text, ceiling)
                    entry.ours, entry.ceiling = ours, theirs
                    row.update(transcript=hypothesis, wer=round(ours.wer, 4), cer=round(ours.cer, 4),
                               substitutions=ours.substitutions, deletions=ours.deletions, insertions=ours.insertions,
                               reference_transcript=ceiling, reference_wer=round(theirs.wer, 4),
                               reference_cer=round(theirs.cer, 4))
                if meters.mos is not None:
                    row.update(_mos_columns("", meters.mos(result.waveform, result.sample_rate)))
                    row.update(_mos_columns("reference_", meters.mos(ceiling_wav, audio.sample_rate)))
                    quality = resynthesis_quality(ceiling_wav, item.reference, audio.sample_rate)
                    row.update(reference_pesq=rounded(quality.pesq, 3), reference_stoi=rounded(quality.stoi, 4))
            scored.append(entry)
    return scored


def summarize(scored: list[Scored]) -> dict:
    """Means, failure counts (utterances with at least one), pooled WER/CER, mean DNSMOS and its
    paired gap to the ceiling (``dnsmos_p808_gap`` ± ``dnsmos_p808_gap_standard_error``)."""
    rows = [s.row for s in scored]
    summary: dict[str, Any] = {
        "utterances": len(rows),
        "mcd_db": round(float(np.mean([r["mcd_db"] for r in rows])), 3),
        "rtf": round(float(np.mean([r["rtf"] for r in rows])), 4),
        "focus_rate": round(float(np.mean([r["focus_rate"] for r in rows])), 3),
        "attention_failures": {k: sum(r[k] > 0 for r in rows) for k in COUNT_COLUMNS},
        "utterances_with_failures": sum(any(r[k] for k in FAILURE_COLUMNS.values()) for r in rows),
    }
    if scored and scored[0].ours is not None:
        ours = sum((s.ours for s in scored if s.ours is not None), ErrorCounts())
        ceiling = sum((s.ceiling for s in scored if s.ceiling is not None), ErrorCounts())
        summary.update(wer=round(ours.wer, 4), cer=round(ours.cer, 4), substitutions=ours.substitutions,
                       deletions=ours.deletions, insertions=ours.insertions, reference_wer=round(ceiling.wer, 4),
                       reference_cer=round(ceiling.cer, 4))
        summary["wer_ratio_to_reference"] = round(summary["wer"] / max(summary["reference_wer"], 1e-9), 2)
    for key in ("dnsmos_p808", "dnsmos_sig", "dnsmos_bak", "dnsmos_ovrl", "reference_dnsmos_p808", "reference_dnsmos_sig",
                "reference_dnsmos_bak", "reference_dnsmos_ovrl", "reference_pesq", "reference_stoi"):
        if rows and key in rows[0]:
            summary[key] = mean_of(rows, key, 3)
    if rows and "dnsmos_p808" in rows[0]:
        summary.update({f"dnsmos_p808_{k}": v for k, v in paired_gap(rows, "dnsmos_p808", "reference_dnsmos_p808").items()})
    return summary


def write_tables(rows: list[dict], summary: dict, out: Path, show: list[str] | None = None) -> None:
    """``summary.json``, and the rows as ``utterances.json`` / ``.csv`` and as a Markdown table
    of the ``show`` columns (default: the evaluation's main ones)."""
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    (out / "utterances.json").write_text(json.dumps(rows, indent=1))
    columns = list(dict.fromkeys(k for r in rows for k in r))
    with open(out / "utterances.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    show = [c for c in show or ("id", "category", "seconds", "mcd_db", "wer", "reference_wer", "dnsmos_p808",
                                "focus_rate", "skips", "repeats", "early_stops", "step_limit_hits", "text")
            if c in columns]
    lines = ["| " + " | ".join(show) + " |", "|" + "---|" * len(show)]
    lines += ["| " + " | ".join(str(r.get(c, "")).replace("|", "/") for c in show) + " |" for r in rows]
    (out / "utterances.md").write_text("\n".join(lines) + "\n")
