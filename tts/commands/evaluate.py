"""``tts evaluate``: synthesize held-out sentences and measure what users hear.

Per utterance: attention metrics and failures, MCD (DTW) against the reference recording,
and, with the recognizer, WER/CER of our speech and of the reference recording sent through
the same mel → vocoder path (the ceiling this vocoder allows). Writes ``summary.json``,
``utterances.{json,csv,md}`` and the wavs / alignment plots under ``out``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tts.audio import MelSpectrogram, edge_silence, load_wav, save_wav
from tts.data.corpus import read_metadata, read_split
from tts.errors import TTSError
from tts.metrics import ErrorCounts, Failure, Recognizer, error_counts, mel_cepstral_distortion
from tts.plots import save_figure
from tts.synthesis import Synthesizer

_FAILURE_COLUMNS = {Failure.SKIP: "skips", Failure.REPEAT: "repeats", Failure.EARLY_STOP: "early_stops",
                    Failure.STEP_LIMIT: "step_limit_hits"}


def evaluate(synthesizer: Synthesizer, data_root: str | Path, out: str | Path, split: str = "test",
             limit: int | None = None, use_asr: bool = True, progress: bool = True, **overrides: Any) -> dict:
    """Evaluate ``split`` (its first ``limit`` utterances); ``overrides`` change the synthesizer's
    inference settings. Returns the summary written to ``out/summary.json``."""
    from tqdm import tqdm

    out = Path(out)
    wanted = read_split(data_root, split)[:limit]
    metadata = {u.id: u for u in read_metadata(data_root)}
    utterances = [metadata[i] for i in wanted if i in metadata]
    if not utterances:
        raise TTSError(f"split '{split}' of {data_root} has no utterances in metadata.csv")
    (out / "wavs").mkdir(parents=True, exist_ok=True)
    audio_cfg = synthesizer.config.audio
    mel_fn = MelSpectrogram(audio_cfg)
    recognizer = Recognizer() if use_asr else None
    batch_size = overrides.get("batch_size", synthesizer.settings.batch_size)
    rows: list[dict] = []
    counts: list[tuple[ErrorCounts, ErrorCounts]] = []  # ours, the reference's, per utterance
    for start in tqdm(range(0, len(utterances), batch_size), desc="evaluate", unit="batch", disable=not progress):
        chunk = utterances[start:start + batch_size]
        results = synthesizer([u.normalized for u in chunk], **overrides)
        for utt, result in zip(chunk, results):
            reference = edge_silence(load_wav(utt.wav_path(data_root), audio_cfg.sample_rate)[0], audio_cfg)
            ref_mel = mel_fn(torch.from_numpy(reference)).numpy()
            save_wav(out / "wavs" / f"{utt.id}.wav", result.waveform, result.sample_rate)
            save_figure(result.figure(synthesizer.step), out / "wavs" / f"{utt.id}.png")
            reports = [seg.report for seg in result.segments]
            row = {
                "id": utt.id, "text": utt.normalized, "seconds": round(result.duration, 3),
                "reference_seconds": round(len(reference) / audio_cfg.sample_rate, 3), "rtf": round(result.rtf, 4),
                "mcd_db": round(mel_cepstral_distortion(result.mel, ref_mel), 3),
                "focus_rate": round(float(np.mean([r.focus_rate for r in reports])), 3),
                "monotonicity": round(float(np.mean([r.monotonicity for r in reports])), 3),
                "diagonal_correlation": round(float(np.mean([r.diagonal_correlation for r in reports])), 3),
                **{column: sum(kind in r.failures for r in reports) for kind, column in _FAILURE_COLUMNS.items()},
                "first_token_skips": sum(r.first_token_skipped for r in reports),
            }
            if recognizer is not None:
                hypothesis = recognizer(result.waveform, result.sample_rate)
                ceiling = recognizer(synthesizer.vocode(ref_mel), audio_cfg.sample_rate)
                ours, theirs = error_counts(utt.normalized, hypothesis), error_counts(utt.normalized, ceiling)
                row.update(transcript=hypothesis, wer=round(ours.wer, 4), cer=round(ours.cer, 4),
                           reference_transcript=ceiling, reference_wer=round(theirs.wer, 4),
                           reference_cer=round(theirs.cer, 4))
                counts.append((ours, theirs))
            rows.append(row)
    summary = _summarize(rows, counts, synthesizer.step, split)
    _write_tables(rows, summary, out)
    return summary


def _summarize(rows: list[dict], counts: list[tuple[ErrorCounts, ErrorCounts]], step: int, split: str) -> dict:
    columns = list(_FAILURE_COLUMNS.values())
    summary = {
        "checkpoint_step": step, "split": split, "utterances": len(rows),
        "mcd_db": round(float(np.mean([r["mcd_db"] for r in rows])), 3),
        "rtf": round(float(np.mean([r["rtf"] for r in rows])), 4),
        "focus_rate": round(float(np.mean([r["focus_rate"] for r in rows])), 3),
        "attention_failures": {k: sum(r[k] > 0 for r in rows) for k in columns + ["first_token_skips"]},
        "utterances_with_failures": sum(any(r[k] for k in columns) for r in rows),
    }
    if counts:
        ours, theirs = sum((c[0] for c in counts), ErrorCounts()), sum((c[1] for c in counts), ErrorCounts())
        summary.update(wer=round(ours.wer, 4), cer=round(ours.cer, 4), reference_wer=round(theirs.wer, 4),
                       reference_cer=round(theirs.cer, 4))
        summary["wer_ratio_to_reference"] = round(summary["wer"] / max(summary["reference_wer"], 1e-9), 2)
    return summary


def _write_tables(rows: list[dict], summary: dict, out: Path) -> None:
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    (out / "utterances.json").write_text(json.dumps(rows, indent=1))
    columns = list(rows[0])
    with open(out / "utterances.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    show = [c for c in ("id", "seconds", "mcd_db", "wer", "reference_wer", "focus_rate", "skips", "repeats",
                        "early_stops", "step_limit_hits", "text") if c in columns]
    lines = ["| " + " | ".join(show) + " |", "|" + "---|" * len(show)]
    lines += ["| " + " | ".join(str(r[c]).replace("|", "/") for c in show) + " |" for r in rows]
    (out / "utterances.md").write_text("\n".join(lines) + "\n")
