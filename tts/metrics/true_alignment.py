"""Attention scored against the true alignment: where each token was really said (for a corpus
spoken by a speech engine, its phone timings; :mod:`tts.data.token_timings` maps them onto tokens).

The truth is per token an interval of mel frames (phones; the pause a space or punctuation token
stands for), or none (a token Festival did not say, the end-of-sentence token). A decoder step
covers ``r`` frames; its true token is the one whose interval holds the step's middle frame.
From the alignment ``(T_steps, T_text)`` come

* ``peak_accuracy``: the share of steps with a true token whose attention peak lies on it, give or
  take ``tolerance`` tokens;
* ``peak_offset``: the mean signed distance in tokens from the true token to the peak over the
  same steps (positive: the attention runs ahead of the speech, as a mechanism that reads ahead
  does; a steady offset lowers ``peak_accuracy`` without the alignment being lost);
* ``tracking_accuracy``: ``peak_accuracy`` after moving the peaks back by the utterance's median
  offset (rounded): attention that keeps a steady lead or lag still tracks the speech;
* ``boundary_error_ms``: the mean absolute distance between each timed token's true start and the
  start the alignment gives it (the frames before it: durations counted from the peaks, as a
  duration model is trained on them), in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TrueAlignmentScore:
    """One utterance's alignment against the truth (see the module's notes)."""

    peak_accuracy: float
    boundary_error_ms: float
    peak_offset: float
    tracking_accuracy: float
    scored_steps: int
    timed_tokens: int

    def summary(self) -> str:
        """One line for a figure (:func:`score_line`)."""
        return score_line(self.peak_accuracy, self.boundary_error_ms)


def score_line(peak_accuracy: float, boundary_error_ms: float) -> str:
    """How an alignment fares against the truth, in one line: its peak accuracy (±1 token) and
    boundary error."""
    return f"peak on the true token ±1: {peak_accuracy:.2f} · boundaries {boundary_error_ms:.0f} ms off"


def durations_from_alignment(alignment: np.ndarray, n_frames: int, reduction_factor: int = 1) -> np.ndarray:
    """Frames per token ``(T_text,)`` from an alignment ``(T_steps, T_text)``: each step's ``r``
    frames go to its peak token (the last step only the frames left), so they sum to ``n_frames``."""
    steps, n_tokens = alignment.shape
    frames = np.full(steps, reduction_factor, dtype=np.int64)
    frames[-1] = n_frames - reduction_factor * (steps - 1)
    if frames[-1] <= 0:
        raise ValueError(f"{steps} steps of {reduction_factor} frames do not cover {n_frames} frames")
    return np.bincount(alignment.argmax(axis=1), weights=frames, minlength=n_tokens).astype(np.int64)


def true_tokens_of_steps(intervals: np.ndarray, n_steps: int, reduction_factor: int = 1) -> np.ndarray:
    """Per decoder step, the token whose frame interval ``[start, end)`` (rows of ``intervals``
    ``(T_text, 2)``, NaN for an untimed token) holds the step's middle frame; -1 where none does."""
    middle = np.arange(n_steps) * reduction_factor + (reduction_factor - 1) / 2
    truth = np.full(n_steps, -1, dtype=np.int64)
    for token, (start, end) in enumerate(intervals):
        if np.isfinite(start) and end > start:
            truth[(middle >= start) & (middle < end)] = token
    return truth


def true_alignment_score(alignment: np.ndarray, intervals: np.ndarray, n_frames: int, frame_ms: float,
                         reduction_factor: int = 1, tolerance: int = 1) -> TrueAlignmentScore:
    """Score ``alignment`` ``(T_steps, T_text)`` against true token ``intervals`` ``(T_text, 2)``
    in frames (NaN rows: untimed tokens) of a mel of ``n_frames`` frames of ``frame_ms`` each."""
    if alignment.ndim != 2 or intervals.shape != (alignment.shape[1], 2):
        raise ValueError(f"alignment {alignment.shape} and intervals {intervals.shape} disagree on T_text")
    truth = true_tokens_of_steps(intervals, alignment.shape[0], reduction_factor)
    scored = truth >= 0
    peaks = alignment.argmax(axis=1)
    accuracy = float(np.mean(np.abs(peaks[scored] - truth[scored]) <= tolerance)) if scored.any() else float("nan")
    offset = float(np.mean(peaks[scored] - truth[scored])) if scored.any() else float("nan")
    lead = int(np.round(np.median(peaks[scored] - truth[scored]))) if scored.any() else 0
    tracking = (float(np.mean(np.abs(peaks[scored] - lead - truth[scored]) <= tolerance)) if scored.any()
                else float("nan"))
    durations = durations_from_alignment(alignment, n_frames, reduction_factor)
    starts = np.concatenate([[0], np.cumsum(durations)[:-1]])
    timed = np.isfinite(intervals[:, 0])
    error = float(np.mean(np.abs(starts[timed] - intervals[timed, 0])) * frame_ms) if timed.any() else float("nan")
    return TrueAlignmentScore(accuracy, error, offset, tracking, int(scored.sum()), int(timed.sum()))
