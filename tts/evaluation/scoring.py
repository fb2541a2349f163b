"""Scoring synthesized speech against recordings, shared by ``tts evaluate`` and the robustness suite.

Per utterance: attention metrics and failures, MCD (DTW) against the reference recording, and,
with the meters, WER/CER (substitutions, deletions, insertions) and DNSMOS of our speech and of
the reference recording sent through the same mel → vocoder path (the ceiling this vocoder
allows), with the PESQ and STOI of that resynthesis against the recording. Items of a
multi-speaker voice are said by their own speaker; with a speaker encoder each is scored for
speaker similarity (SECS against its recording) and for whether it sounds more like its own
speaker than like any other (cosine to each speaker's mean recording embedding), per speaker.
Writes ``summary.json``, ``utterances.{json,csv,md}`` and the wavs / alignment plots under ``out``.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tts.audio import MelSpectrogram, save_wav
from tts.config import InferenceConfig
from tts.evaluation.ceilings import ceiling_transcripts
from tts.evaluation.journal import JOURNAL, ScoringJournal, scoring_identity
from tts.metrics import ErrorCounts, Failure, Recognizer, error_counts, mel_cepstral_distortion
from tts.metrics.mos import MOSPredictor, MOSScores
from tts.metrics.quality import resynthesis_quality
from tts.metrics.speaker import SpeakerSimilarity
from tts.plots import save_figure
from tts.synthesis import Synthesizer

FAILURE_COLUMNS = {Failure.SKIP: "skips", Failure.REPEAT: "repeats", Failure.EARLY_STOP: "early_stops",
                   Failure.STEP_LIMIT: "step_limit_hits"}
COUNT_COLUMNS = [*FAILURE_COLUMNS.values(), "first_token_skips"]

log = logging.getLogger(__name__)


@dataclass
class Item:
    """One text to synthesize and the reference waveform ``(T_wav,)`` that reads it (edge silence
    as the features define it), at the synthesizer's sample rate."""

    id: str
    text: str
    reference: np.ndarray
    category: str = ""
    speaker: str = ""            # the recording's speaker, in a corpus of several
    said_as: str | None = None   # the speaker a multi-speaker model says it as


@dataclass
class Meters:
    """The optional meters: a recognizer for WER/CER, a MOS predictor and a speaker encoder."""

    recognizer: Recognizer | None = None
    mos: MOSPredictor | None = None
    speaker: SpeakerSimilarity | None = None

    @classmethod
    def create(cls, asr: bool, mos: bool, speaker: bool = False) -> "Meters":
        return cls(Recognizer() if asr else None, MOSPredictor() if mos else None,
                   SpeakerSimilarity() if speaker else None)

    def identities(self) -> list[str | None]:
        """Which meters score, and which recognizer hears (None for a meter not used)."""
        return [self.recognizer.identity if self.recognizer is not None else None,
                type(self.mos).__qualname__ if self.mos is not None else None,
                type(self.speaker).__qualname__ if self.speaker is not None else None]


@dataclass
class Scored:
    """One item's table row, and the error counts of ours and of the ceiling (with a recognizer)."""

    row: dict
    ours: ErrorCounts | None = None
    ceiling: ErrorCounts | None = None
    speaker: str = ""
    embedding: np.ndarray | None = None             # ours and the recording's, with a speaker encoder
    reference_embedding: np.ndarray | None = None

    def to_record(self) -> dict[str, Any]:
        """As a JSON-ready dict (:mod:`tts.evaluation.journal` keeps them)."""
        def vector(value: np.ndarray | None) -> list[float] | None:
            return None if value is None else [float(v) for v in value]

        return {"row": self.row, "speaker": self.speaker,
                "ours": None if self.ours is None else dataclasses.asdict(self.ours),
                "ceiling": None if self.ceiling is None else dataclasses.asdict(self.ceiling),
                "embedding": vector(self.embedding), "reference_embedding": vector(self.reference_embedding)}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "Scored":
        def vector(value: list[float] | None) -> np.ndarray | None:
            return None if value is None else np.asarray(value, dtype=np.float32)

        def counts(value: dict | None) -> ErrorCounts | None:
            return None if value is None else ErrorCounts(**value)

        return cls(record["row"], counts(record["ours"]), counts(record["ceiling"]), record["speaker"],
                   vector(record["embedding"]), vector(record["reference_embedding"]))


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
    synthesizer's own vocoder: the ceiling is vocoded exactly as our mels are. Each scored batch is
    kept in ``out`` (:mod:`tts.evaluation.journal`) until :func:`write_tables` writes the folder's
    tables, so a rerun after an interruption resumes at the first batch not scored."""
    from tqdm import tqdm

    (out / "wavs").mkdir(parents=True, exist_ok=True)
    audio = synthesizer.config.audio
    mel_fn = MelSpectrogram(audio)
    settings = settings or synthesizer.settings
    batch_size = settings.batch_size
    kept = ceiling_transcripts(synthesizer.vocoder, meters.recognizer) if meters.recognizer is not None else None
    journal = ScoringJournal(out, scoring_identity(synthesizer, settings, meters.identities()))
    scored: list[Scored] = []
    for chunk in tqdm(speaker_batches(items, batch_size), desc="evaluate", unit="batch", disable=not progress):
        key = journal.key(chunk)  # hashes the batch's recordings: once
        records = journal.get(key, len(chunk))
        if records is not None:
            scored += [Scored.from_record(r) for r in records]
            continue
        batch: list[Scored] = []
        for item, result in zip(chunk, synthesizer([i.text for i in chunk], settings, speaker=chunk[0].said_as)):
            ref_mel = mel_fn(torch.from_numpy(item.reference)).numpy()
            save_wav(out / "wavs" / f"{item.id}.wav", result.waveform, result.sample_rate)
            save_figure(result.figure(synthesizer.step, settings.stop_threshold), out / "wavs" / f"{item.id}.png")
            reports = [seg.report for seg in result.segments]
            row = {
                "id": item.id, **({"category": item.category} if item.category else {}),
                **({"speaker": item.speaker} if item.speaker else {}),
                **({"said_as": item.said_as} if item.said_as and item.said_as != item.speaker else {}), "text": item.text,
                "seconds": round(result.duration, 3), "reference_seconds": round(len(item.reference) / audio.sample_rate, 3),
                "rtf": round(result.rtf, 4), "mcd_db": round(mel_cepstral_distortion(result.mel, ref_mel), 3),
                "focus_rate": round(float(np.mean([r.focus_rate for r in reports])), 3),
                "monotonicity": round(float(np.mean([r.monotonicity for r in reports])), 3),
                "diagonal_correlation": round(float(np.mean([r.diagonal_correlation for r in reports])), 3),
                **{column: sum(kind in r.failures for r in reports) for kind, column in FAILURE_COLUMNS.items()},
                "first_token_skips": sum(r.first_token_skipped for r in reports),
                **({"lost_at": rounded(reports[0].lost_at, 3)} if len(reports) == 1 else {}),
            }
            entry = Scored(row, speaker=item.speaker)
            if meters.speaker is not None:
                entry.embedding = meters.speaker.embed(result.waveform, result.sample_rate)
                entry.reference_embedding = meters.speaker.embed(item.reference, audio.sample_rate)
                row["secs"] = round(meters.speaker.similarity(entry.embedding, entry.reference_embedding), 4)
            if meters.recognizer is not None or meters.mos is not None:
                ceiling = kept.get(ref_mel) if kept is not None else None
                # the recording through our vocoder: needed unless its transcript is kept and no MOS is asked
                ceiling_wav = synthesizer.vocode(ref_mel) if ceiling is None or meters.mos is not None else None
                if meters.recognizer is not None:
                    hypothesis = meters.recognizer(result.waveform, result.sample_rate)
                    if ceiling is None:
                        assert ceiling_wav is not None
                        ceiling = meters.recognizer(ceiling_wav, audio.sample_rate)
                        if kept is not None:
                            kept.put(ref_mel, ceiling)
                    ours, theirs = error_counts(item.text, hypothesis), error_counts(item.text, ceiling)
                    entry.ours, entry.ceiling = ours, theirs
                    row.update(transcript=hypothesis, wer=round(ours.wer, 4), cer=round(ours.cer, 4),
                               substitutions=ours.substitutions, deletions=ours.deletions, insertions=ours.insertions,
                               char_errors=ours.char_errors, chars=ours.chars, reference_transcript=ceiling,
                               reference_wer=round(theirs.wer, 4),
                               reference_cer=round(theirs.cer, 4))
                if meters.mos is not None:
                    assert ceiling_wav is not None
                    row.update(_mos_columns("", meters.mos(result.waveform, result.sample_rate)))
                    row.update(_mos_columns("reference_", meters.mos(ceiling_wav, audio.sample_rate)))
                    quality = resynthesis_quality(ceiling_wav, item.reference, audio.sample_rate)
                    row.update(reference_pesq=rounded(quality.pesq, 3), reference_stoi=rounded(quality.stoi, 4))
            batch.append(entry)
        journal.put(key, [entry.to_record() for entry in batch])
        scored += batch
    journal.report()
    if kept is not None and kept.hits:
        log.info("the ceiling: %d of %d transcripts kept from earlier evaluations (%s)", kept.hits,
                 kept.hits + kept.misses, kept.folder)
    return scored


def speaker_batches(items: list[Item], batch_size: int) -> list[list[Item]]:
    """The items in batches of at most ``batch_size``, each said as one speaker (in order of first appearance)."""
    by_speaker: dict[str | None, list[Item]] = {}
    for item in items:
        by_speaker.setdefault(item.said_as, []).append(item)
    return [group[start:start + batch_size] for group in by_speaker.values()
            for start in range(0, len(group), batch_size)]


def speaker_scores(scored: list[Scored]) -> dict[str, Any]:
    """Per speaker: utterances, WER/CER (and the recordings' through the same vocoder), mean SECS
    and the share of its utterances closest to its own speaker's mean recording embedding (among
    every speaker's); and that share over all utterances (``speaker_identified``)."""
    speakers = sorted({s.speaker for s in scored})
    embedded = [(s.speaker, s.embedding, s.reference_embedding) for s in scored
                if s.embedding is not None and s.reference_embedding is not None]
    with_embeddings = len(embedded) == len(scored)
    centroids: dict[str, np.ndarray] = {}
    if with_embeddings:
        for name in speakers:
            mean = np.mean([recording for speaker, _, recording in embedded if speaker == name], axis=0)
            centroids[name] = mean / max(float(np.linalg.norm(mean)), 1e-9)
    per: dict[str, dict[str, Any]] = {}
    identified = 0
    for name in speakers:
        own = [s for s in scored if s.speaker == name]
        entry: dict[str, Any] = {"utterances": len(own)}
        if own[0].ours is not None:
            ours = sum((s.ours for s in own if s.ours is not None), ErrorCounts())
            ceiling = sum((s.ceiling for s in own if s.ceiling is not None), ErrorCounts())
            entry.update(wer=round(ours.wer, 4), cer=round(ours.cer, 4), reference_wer=round(ceiling.wer, 4),
                         reference_cer=round(ceiling.cer, 4),
                         wer_ratio_to_reference=round(ours.wer / max(ceiling.wer, 1e-9), 2))
        if with_embeddings:
            closest = [max(centroids, key=lambda c: float(np.dot(ours_vector, centroids[c])))
                       for speaker, ours_vector, _ in embedded if speaker == name]
            hits = sum(c == name for c in closest)
            identified += hits
            entry.update(secs=mean_of([s.row for s in own], "secs", 4), identified=round(hits / len(own), 4))
        per[name] = entry
    result: dict[str, Any] = {"speakers": per}
    if with_embeddings:
        result["speaker_identified"] = round(identified / len(scored), 4)
        result["secs"] = mean_of([s.row for s in scored], "secs", 4)
    return result


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
    if any(s.speaker for s in scored) or any(s.embedding is not None for s in scored):
        summary.update(speaker_scores(scored))
    return summary


def write_tables(rows: list[dict], summary: dict, out: Path, show: list[str] | None = None) -> None:
    """``summary.json``, and the rows as ``utterances.json`` / ``.csv`` and as a Markdown table
    of the ``show`` columns (default: the evaluation's main ones). The folder's results are then
    complete: the scoring journal goes."""
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    (out / "utterances.json").write_text(json.dumps(rows, indent=1))
    columns = list(dict.fromkeys(k for r in rows for k in r))
    with open(out / "utterances.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    show = [c for c in show or ("id", "category", "speaker", "seconds", "mcd_db", "wer", "reference_wer", "secs",
                                "dnsmos_p808",
                                "focus_rate", "skips", "repeats", "early_stops", "step_limit_hits", "text")
            if c in columns]
    lines = ["| " + " | ".join(show) + " |", "|" + "---|" * len(show)]
    lines += ["| " + " | ".join(str(r.get(c, "")).replace("|", "/") for c in show) + " |" for r in rows]
    (out / "utterances.md").write_text("\n".join(lines) + "\n")
    (out / JOURNAL).unlink(missing_ok=True)
