"""``tts evaluate``: synthesize held-out sentences and measure what users hear.

Per utterance: attention metrics and failures, MCD (DTW) against the reference recording,
and, with the recognizer, WER/CER of our speech and of the reference recording sent through
the same mel → Griffin-Lim path (the ceiling this vocoder allows). Writes ``summary.json``,
``utterances.csv``, ``utterances.md`` and the wavs / alignment plots under ``out``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import torch

from tts.analysis.plots import save_figure
from tts.analysis.quality import Recognizer, error_rates, mel_cepstral_distortion
from tts.audio import MelSpectrogram, load_wav, save_wav, trim_silence
from tts.data.corpus import read_metadata, read_split
from tts.errors import TTSError
from tts.synthesis import Synthesizer


def evaluate(synthesizer: Synthesizer, data_root: str | Path, out: str | Path, split: str = "test",
             limit: int | None = None, use_asr: bool = True, batch_size: int = 8, progress: bool = True,
             **synthesis_options) -> dict:
    from tqdm import tqdm

    out = Path(out)
    (out / "wavs").mkdir(parents=True, exist_ok=True)
    wanted = read_split(data_root, split)[:limit]
    metadata = {u.id: u for u in read_metadata(data_root)}
    utterances = [metadata[i] for i in wanted if i in metadata]
    if not utterances:
        raise TTSError(f"split '{split}' of {data_root} has no utterances in metadata.csv")
    audio_cfg = synthesizer.config.audio
    mel_fn = MelSpectrogram(audio_cfg)
    recognizer = Recognizer() if use_asr else None
    rows = []
    for start in tqdm(range(0, len(utterances), batch_size), desc="evaluate", unit="batch", disable=not progress):
        chunk = utterances[start:start + batch_size]
        results = synthesizer([u.normalized for u in chunk], batch_size=batch_size, **synthesis_options)
        for utt, result in zip(chunk, results):
            reference, _ = load_wav(utt.wav_path(data_root), audio_cfg.sample_rate)
            if audio_cfg.trim_silence:
                reference = trim_silence(reference, audio_cfg.trim_top_db, audio_cfg.win_length, audio_cfg.hop_length)
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
                "skips": sum(bool(r.skipped_tokens) for r in reports), "repeats": sum(r.repeats > 0 for r in reports),
                "early_stops": sum(r.early_stop for r in reports),
                "step_limit_hits": sum(r.step_limit_hit for r in reports),
            }
            if recognizer is not None:
                hypothesis = recognizer(result.waveform, result.sample_rate)
                ceiling_wav = synthesizer.vocoder(torch.from_numpy(ref_mel)).numpy()
                ceiling = recognizer(ceiling_wav, audio_cfg.sample_rate)
                wer, cer, we, wn, ce, cn = error_rates(utt.normalized, hypothesis)
                rwer, rcer, rwe, _, rce, _ = error_rates(utt.normalized, ceiling)
                row.update(transcript=hypothesis, wer=round(wer, 4), cer=round(cer, 4), reference_transcript=ceiling,
                           reference_wer=round(rwer, 4), reference_cer=round(rcer, 4),
                           _counts=(we, wn, ce, cn, rwe, rce))
            rows.append(row)
    summary = _summarize(rows, synthesizer.step, split)
    for row in rows:
        row.pop("_counts", None)
    _write_tables(rows, summary, out)
    return summary


def _summarize(rows: list[dict], step: int, split: str) -> dict:
    summary = {
        "checkpoint_step": step, "split": split, "utterances": len(rows),
        "mcd_db": round(float(np.mean([r["mcd_db"] for r in rows])), 3),
        "rtf": round(float(np.mean([r["rtf"] for r in rows])), 4),
        "focus_rate": round(float(np.mean([r["focus_rate"] for r in rows])), 3),
        "attention_failures": {k: sum(r[k] > 0 for r in rows) for k in ("skips", "repeats", "early_stops",
                                                                          "step_limit_hits")},
        "utterances_with_failures": sum(any(r[k] for k in ("skips", "repeats", "early_stops", "step_limit_hits"))
                                        for r in rows),
    }
    if rows and "_counts" in rows[0]:
        totals = np.sum([r["_counts"] for r in rows], axis=0)
        we, wn, ce, cn, rwe, rce = (int(v) for v in totals)
        summary.update(wer=round(we / max(wn, 1), 4), cer=round(ce / max(cn, 1), 4),
                       reference_wer=round(rwe / max(wn, 1), 4), reference_cer=round(rce / max(cn, 1), 4))
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
