"""``tts align``: per-token durations from a checkpoint's teacher-forced attention, the input a
duration model (FastSpeech-style) trains on, with their accuracy against the true phone timings
where the corpus has them (:mod:`tts.data.token_timings`).

Written to the output folder (all at once at the end; nothing when it fails):

* ``durations.txt``: ``<id> d_1 d_2 ... d_N``, mel frames per token of the feature cache's token
  sequence (they sum to the utterance's mel frames; each decoder step's ``r`` frames go to its
  attention peak);
* ``alignments.jsonl``: per utterance its tokens, durations, start frames and, with timings, the
  true start frames, ``peak_accuracy`` and ``boundary_error_ms``;
* ``summary.json``: counts, frame length, and the means (null, with the reason, without timings).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch

from tts.checkpoint import LoadedModel
from tts.data import FeatureDataset, batch_loader, require_corpus
from tts.data.timings import TIMINGS_DIR
from tts.data.token_timings import TrueIntervals
from tts.errors import TTSError
from tts.fileio import writable_folder
from tts.metrics.true_alignment import durations_from_alignment, true_alignment_score
from tts.text import Tokenizer


def check_out_folder(out: str | Path) -> Path:
    """An output folder that is new or empty: one that holds files (another run's) is refused."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise TTSError(f"--out {out} already holds files (another run's?): give a new or empty folder")
    writable_folder(out)
    return out


@torch.no_grad()
def align_corpus(loaded: LoadedModel, data_root: str | Path, out: str | Path, split: str = "train",
                 limit: int | None = None, device: str = "cpu", progress: bool = True) -> dict:
    """Durations (and their error against the truth) of ``split``'s utterances; returns the summary."""
    from tqdm import tqdm

    out = check_out_folder(out)
    root = require_corpus(data_root)
    config, model = loaded.config, loaded.model.to(device).eval()
    dataset = FeatureDataset.of(root, config, split, limit)
    data = dataclasses.replace(config.data, num_workers=0)
    r = model.reduction_factor
    loader = batch_loader(dataset, data, r, config.data.max_frames_per_batch, config.train.seed, shuffle=False)
    symbols = Tokenizer.for_config(config.text, loaded.inventory).ids_to_symbols
    truth = TrueIntervals(root, config.audio, symbols)
    records = []
    for batch in tqdm(loader, desc="align", unit="batch", disable=not progress):
        batch = batch.to(device)
        alignments = model(batch).alignments.float().cpu().numpy()
        for i, uid in enumerate(batch.utterance_ids):
            frames, n_text = int(batch.mel_lengths[i]), int(batch.text_lengths[i])
            steps = -(-frames // r)
            alignment = alignments[i, :steps, :n_text]
            if not np.isfinite(alignment).all():
                raise TTSError(f"{uid}: the checkpoint's attention is NaN or infinite (a broken checkpoint)")
            ids = batch.ids[i, :n_text].tolist()
            durations = durations_from_alignment(alignment, frames, r)
            record: dict = {"id": uid, "tokens": symbols(ids), "durations": durations.tolist(),
                            "starts": np.concatenate([[0], np.cumsum(durations)[:-1]]).tolist()}
            intervals = truth(uid, ids)
            if intervals is not None:
                score = true_alignment_score(alignment, intervals, frames, truth.frame_ms, r)
                record.update(true_starts=[None if np.isnan(s) else round(float(s), 2) for s in intervals[:, 0]],
                              peak_accuracy=round(score.peak_accuracy, 4), peak_offset=round(score.peak_offset, 3),
                              tracking_accuracy=round(score.tracking_accuracy, 4),
                              boundary_error_ms=round(score.boundary_error_ms, 2))
            records.append(record)
    if not records:
        raise TTSError(f"split '{split}' of {root} has no utterance in the feature cache")
    summary = _summary(records, loaded, root, split, truth)
    _write(out, records, summary)
    return summary


def _summary(records: list[dict], loaded: LoadedModel, root: Path, split: str, truth: TrueIntervals) -> dict:
    scored = [r for r in records if "boundary_error_ms" in r and np.isfinite(r["boundary_error_ms"])]
    summary: dict = {"checkpoint": str(loaded.path), "checkpoint_step": loaded.step, "corpus": str(root),
                     "split": split, "utterances": len(records), "frame_ms": round(truth.frame_ms, 3),
                     "reduction_factor": loaded.model.reduction_factor}
    if not truth.available:
        summary.update(boundary_error_ms=None, peak_accuracy=None,
                       truth=f"the corpus has no phone timings ({root / TIMINGS_DIR} is missing): durations only")
        return summary
    errors = np.array([r["boundary_error_ms"] for r in scored])
    summary.update(timed_utterances=len(scored), untimed_utterances=len(records) - len(scored),
                   boundary_error_ms=round(float(errors.mean()), 2) if len(errors) else None,
                   boundary_error_ms_median=round(float(np.median(errors)), 2) if len(errors) else None,
                   peak_accuracy=round(float(np.mean([r["peak_accuracy"] for r in scored])), 4) if scored else None,
                   peak_offset=round(float(np.mean([r["peak_offset"] for r in scored])), 3) if scored else None,
                   tracking_accuracy=round(float(np.mean([r["tracking_accuracy"] for r in scored])), 4)
                   if scored else None)
    return summary


def _write(out: Path, records: list[dict], summary: dict) -> None:
    """Everything into a temporary folder beside ``out``, then moved into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (staging / "durations.txt").write_text(
            "".join(f"{r['id']} {' '.join(map(str, r['durations']))}\n" for r in records))
        (staging / "alignments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        (staging / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        if out.exists():
            out.rmdir()  # empty (checked at the start)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
