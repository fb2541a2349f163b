"""Attention metrics and failure detection for one alignment matrix.

An alignment is ``(T_steps, T_text)`` (decoder steps × input tokens) without padding.
Failure modes detected (:class:`Failure`): skipped tokens (never attended), repeats (attention
jumps back), early stop (the last tokens never reached) and step-limit hits (passed in by the
caller).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Sequence

import numpy as np
from scipy.ndimage import median_filter

from tts.text.symbols import SILENT_SYMBOLS


class Failure(str, Enum):
    """A way synthesis can go wrong, as seen in its alignment."""

    SKIP = "skip"
    REPEAT = "repeat"
    EARLY_STOP = "early stop"
    STEP_LIMIT = "step limit"


@dataclass
class AttentionReport:
    """Metrics of one utterance; ``failures`` counts what went wrong (empty when nothing did)."""

    focus_rate: float
    monotonicity: float
    diagonal_correlation: float
    coverage: float
    skipped_tokens: list[int] = field(default_factory=list)
    first_token_skipped: bool = False
    start_token: int = 0
    repeats: int = 0
    early_stop: bool = False
    step_limit_hit: bool = False
    lost_at: float | None = None

    @property
    def failures(self) -> dict[Failure, int]:
        """Each failure that occurred with its count (skipped tokens, repeats, 1 for the others)."""
        counts = {Failure.SKIP: len(self.skipped_tokens), Failure.REPEAT: self.repeats,
                  Failure.EARLY_STOP: int(self.early_stop), Failure.STEP_LIMIT: int(self.step_limit_hit)}
        return {kind: n for kind, n in counts.items() if n}

    @property
    def ok(self) -> bool:
        return not self.failures

    def describe_failures(self) -> list[str]:
        """``["skip (3 tokens)", "repeat (1x)", ...]`` for people."""
        units = {Failure.SKIP: " ({} tokens)", Failure.REPEAT: " ({}x)"}
        return [kind.value + units.get(kind, "").format(n) for kind, n in self.failures.items()]

    def to_dict(self) -> dict:
        return {**asdict(self), "failures": self.describe_failures()}

    def summary(self) -> str:
        status = "ok" if self.ok else ", ".join(self.describe_failures())
        return (f"focus {self.focus_rate:.2f} · monotonic {self.monotonicity:.2f} · "
                f"diag r {self.diagonal_correlation:.2f} · {status}")


def speech_steps(mel: np.ndarray, reduction_factor: int = 1, top_db: float = 40.0,
                 min_pause_frames: int = 10) -> np.ndarray:
    """Which decoder steps make speech: ``(T_steps,)`` bool for a natural-log mel ``(n_mels, T_mel)``,
    a step being speech when any of its ``reduction_factor`` frames is. A frame is speech when its
    mean log-mel lies within ``top_db`` (an amplitude ratio) of the loudest frame's, or when it
    lies in a quieter run of fewer than ``min_pause_frames`` frames between speech (10 frames,
    116 ms at 22050 Hz and hop 256): the closure of a stop consonant is silent ("collect the"
    dips 48 dB for 6 frames at its T) and is read, not a pause."""
    energy = np.asarray(mel, dtype=np.float64).mean(axis=0)
    loud = energy >= energy.max() - top_db / 20.0 * np.log(10.0)
    speech = loud.copy()
    loud_frames = np.flatnonzero(loud)
    for before, after in zip(loud_frames[:-1], loud_frames[1:]):
        if 1 < after - before <= min_pause_frames:
            speech[before + 1: after] = True
    steps = -(-len(speech) // reduction_factor)
    padded = np.zeros(steps * reduction_factor, dtype=bool)
    padded[: len(speech)] = speech
    return np.asarray(padded.reshape(steps, reduction_factor).any(axis=1))


def attention_report(alignment: np.ndarray, step_limit_hit: bool = False, symbols: Sequence[str] | None = None,
                     skip_mass: float = 0.25, repeat_jump: int = 2, flicker_steps: int = 1,
                     end_tolerance: int = 2, speech: np.ndarray | None = None,
                     neighbourhood: int = 2) -> AttentionReport:
    """Measure an alignment ``(T_steps, T_text)``; ``symbols`` (``T_text`` token strings), when
    given, exempt silent tokens (word boundaries, punctuation, EOS) from skip detection, since
    fluent speech gives them no frames. ``speech`` ``(T_steps,)`` bool (see :func:`speech_steps`),
    when given, restricts skip detection to the steps that make speech: attention parked on the
    first token during a lead-in silence, or a faint smear spread over the whole utterance, does
    not count as reading it.

    * focus rate: mean over steps of the largest weight (1 = perfectly sharp);
    * monotonicity: fraction of steps whose peak does not move backwards;
    * diagonal correlation: Pearson r between step index and peak position;
    * coverage: fraction of tokens that ever received the peak;
    * skipped tokens: sounding tokens never the peak that also got less than ``skip_mass`` total weight
      while within ``neighbourhood`` tokens of the peak (a short token read between two peaks gets
      weight there; a faint smear far from where the attention is does not count)
      (``first_token_skipped``: the first sounding token is one of them);
    * start token: the peak at the first step that makes speech, where reading begins (0 when it
      begins on the first token; a later token means the opening tokens were never read);
    * repeats: times the peak falls more than ``repeat_jump`` tokens behind the furthest peak so far,
      on the peak track with excursions of up to ``flicker_steps`` steps smoothed away (a median
      filter): a peak that flips to a side lobe for a step and returns (seen in Transformer-TTS heads
      of word-perfect utterances) is not a repeat; a real jump back lasts many steps;
    * early stop: the furthest peak is more than ``end_tolerance`` tokens before the last sounding
      token (the last token without ``symbols``): closing punctuation, quotes and EOS after the
      last phoneme take no frames in fluent speech;
    * lost at: where in the text reading first went wrong, as a share of it (0 = the first token,
      1 = the last; None when nothing did): the first skipped token, the furthest token before the
      first repeat, or the furthest token reached by an early stop or a run to the step limit.
    """
    alignment = np.asarray(alignment, dtype=np.float64)
    steps, n_text = alignment.shape
    peaks = alignment.argmax(axis=1)
    focus = float(alignment.max(axis=1).mean())
    monotonic = float(np.mean(np.diff(peaks) >= 0)) if steps > 1 else 1.0
    if steps > 1 and peaks.std() > 0:
        corr = float(np.corrcoef(np.arange(steps), peaks)[0, 1])
    else:
        corr = 0.0
    counted = np.ones(steps, dtype=bool) if speech is None else np.asarray(speech, dtype=bool)[:steps]
    if len(counted) != steps:
        raise ValueError(f"speech marks {len(counted)} steps of an alignment of {steps}")
    if not counted.any():
        counted = np.ones(steps, dtype=bool)
    attended = np.zeros(n_text, dtype=bool)
    attended[peaks[counted]] = True
    near_peak = np.abs(np.arange(n_text)[None, :] - peaks[:, None]) <= neighbourhood
    mass = (alignment * near_peak)[counted].sum(axis=0)
    furthest = np.maximum.accumulate(peaks)
    reached = int(furthest[-1])
    # tokens past the furthest peak are "not reached", not skipped
    sounding = (np.ones(n_text, dtype=bool) if symbols is None
                else np.array([s not in SILENT_SYMBOLS for s in symbols], dtype=bool))
    if len(sounding) != n_text:
        raise ValueError(f"{len(sounding)} symbols for an alignment over {n_text} tokens")
    skipped = [int(j) for j in np.flatnonzero(~attended & (mass < skip_mass) & sounding) if j < reached]
    first_sounding = int(np.argmax(sounding)) if sounding.any() else -1
    last_sounding = int(np.flatnonzero(sounding)[-1]) if sounding.any() else n_text - 1
    track = median_filter(peaks, size=2 * flicker_steps + 1, mode="nearest") if flicker_steps > 0 else peaks
    behind = track < np.maximum.accumulate(track) - repeat_jump
    repeats = int(np.sum(behind[1:] & ~behind[:-1]) + (behind[0] if steps else 0))
    early_stop = reached < last_sounding - end_tolerance
    lost = [*skipped[:1]]
    if repeats:
        lost.append(int(np.maximum.accumulate(track)[int(np.argmax(behind))]))
    if early_stop or step_limit_hit:
        lost.append(reached)
    return AttentionReport(
        focus_rate=focus, monotonicity=monotonic, diagonal_correlation=corr, coverage=float(attended.mean()),
        skipped_tokens=skipped, first_token_skipped=first_sounding in skipped,
        start_token=int(peaks[np.argmax(counted)]) if steps else 0, repeats=repeats,
        early_stop=early_stop, step_limit_hit=step_limit_hit,
        lost_at=min(lost) / max(n_text - 1, 1) if lost else None)


def most_diagonal_head(heads: np.ndarray) -> tuple[int, int]:
    """The (layer, head) whose attention is most diagonal: highest focus rate times the
    correlation between step and peak position. heads ``(L, H, T_steps, T_text)``, unpadded."""
    scores = np.zeros(heads.shape[:2])
    for layer in range(heads.shape[0]):
        for head in range(heads.shape[1]):
            report = attention_report(heads[layer, head])
            scores[layer, head] = report.focus_rate * max(report.diagonal_correlation, 0.0)
    best = np.unravel_index(int(scores.argmax()), scores.shape)
    return int(best[0]), int(best[1])
