"""Teacher-forced validation: the figures over a split (loss terms, attention quality and how
much the decoder reads the text), and what a validation leaves for people to look at.

:func:`teacher_forced_metrics` is shared by the trainer (every ``train.validate_every`` steps,
into metrics.jsonl) and ``tts validate`` (any saved checkpoint, later), so both report the same
numbers. :class:`ValidationRenderer` draws the alignment plots and renders free-running audio of
a few utterances for the experiment folder and TensorBoard.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from pathlib import Path
from typing import Callable, ContextManager, Iterable

import numpy as np
import torch

from tts.audio import save_wav
from tts.config import InferenceConfig
from tts.data import Batch
from tts.data.token_timings import TrueIntervals
from tts.metrics import attention_report, speech_steps
from tts.metrics.true_alignment import true_alignment_score
from tts.models.decoding import AutoregressiveTTS
from tts.models.layers import decoder_steps
from tts.models.outputs import ModelOutput
from tts.plots import alignment_figure, figure_to_array, save_figure
from tts.text import Tokenizer
from tts.training.losses import TTSLoss, masked_mel_loss
from tts.vocoders import Vocoder

log = logging.getLogger("tts.train")


@torch.no_grad()
def teacher_forced_metrics(model: AutoregressiveTTS, criterion: TTSLoss, batches: Iterable[Batch], step: int,
                           device: torch.device | str = "cpu",
                           autocast: Callable[[], ContextManager] = contextlib.nullcontext,
                           n_examples: int = 0, symbols: Callable[[list[int]], list[str]] | None = None,
                           truth: TrueIntervals | None = None,
                           ) -> tuple[dict[str, float], list[tuple[Batch, ModelOutput]]]:
    """Utterance-weighted means over ``batches`` of every loss term, ``attention_focus``,
    ``attention_diagonal``, ``first_token_skips`` (the share of utterances whose first spoken
    token the alignment skips; see :func:`attention_report`, which gets each utterance's
    ``symbols(ids)``), ``attention_start`` (the token the peak is on when speech begins; 0 is the
    first token), and ``text_reliance``: the mel loss with each item given its batch
    neighbour's text over the loss with its own (batches of one are left out of it). Near 1 the
    decoder predicts from its previous frames alone and babbles when free-running, however
    diagonal its attention looks. With ``truth`` (a corpus with phone timings):
    ``true_peak_accuracy``, ``true_boundary_error_ms``, ``true_peak_offset`` and ``true_tracking_accuracy``
    (:func:`~tts.metrics.true_alignment.true_alignment_score`), means over the utterances that
    have timings, and ``true_timed_utterances``, their number. A multi-head model (``attention_heads``
    ``(B, L, H, T_steps, T_text)``, Transformer-TTS) is scored on ``alignments`` (its guided heads'
    mean) and also head by head: ``true_best_head`` (``layer * H + head``) is the head of the highest
    mean tracking accuracy over the split, and ``true_best_head_tracking_accuracy``,
    ``true_best_head_peak_accuracy`` and ``true_best_head_boundary_error_ms`` its figures.

    Returns the metrics and the first ``n_examples`` (batch, output) pairs for plots and audio.
    The caller puts ``model`` in eval mode.
    """
    totals: dict[str, float] = {}
    heads_scored: list[np.ndarray] = []  # per timed utterance of a multi-head model: (L * H, 3) figures
    count = timed = 0
    examples: list[tuple[Batch, ModelOutput]] = []
    r = model.reduction_factor
    for batch in batches:
        batch = batch.to(device)
        with autocast():
            output = model(batch)
            terms = criterion(output, batch, step)
        n = len(batch.utterance_ids)
        for key, value in terms.items():
            totals[key] = totals.get(key, 0.0) + float(value) * n
        if n > 1:  # swapped texts: the batch's neighbours, similar in length
            swapped = dataclasses.replace(batch, ids=batch.ids.roll(1, 0), text_lengths=batch.text_lengths.roll(1, 0))
            with autocast():
                wrong = model(swapped).mel_before
            totals["mel_own_text"] = totals.get("mel_own_text", 0.0) + float(terms["mel"]) * n
            totals["mel_wrong_text"] = totals.get("mel_wrong_text", 0.0) + float(
                masked_mel_loss(wrong, batch.mels, batch.mel_lengths, criterion.config.mel_loss,
                                criterion.config.reduction)) * n
        alignments = output.alignments.float().cpu().numpy()
        heads = (output.attention_heads.float().cpu().numpy()
                 if output.attention_heads is not None and truth is not None else None)
        for i in range(n):
            steps, n_text = decoder_steps(int(batch.mel_lengths[i]), r), int(batch.text_lengths[i])
            target = batch.mels[i, :, : int(batch.mel_lengths[i])].float().cpu().numpy()
            report = attention_report(alignments[i, :steps, :n_text], speech=speech_steps(target, r),
                                      symbols=symbols(batch.ids[i, :n_text].tolist()) if symbols else None)
            for key, value in (("attention_focus", report.focus_rate),
                               ("attention_diagonal", report.diagonal_correlation),
                               ("first_token_skips", float(report.first_token_skipped)),
                               ("attention_start", float(report.start_token))):
                totals[key] = totals.get(key, 0.0) + value
            intervals = truth(batch.utterance_ids[i], batch.ids[i, :n_text].tolist()) if truth else None
            if truth is not None and intervals is not None:
                score = true_alignment_score(alignments[i, :steps, :n_text], intervals, int(batch.mel_lengths[i]),
                                             truth.frame_ms, r)
                if np.isfinite(score.peak_accuracy) and np.isfinite(score.boundary_error_ms):
                    totals["true_peak_accuracy"] = totals.get("true_peak_accuracy", 0.0) + score.peak_accuracy
                    totals["true_boundary_error_ms"] = totals.get("true_boundary_error_ms", 0.0) + score.boundary_error_ms
                    totals["true_peak_offset"] = totals.get("true_peak_offset", 0.0) + score.peak_offset
                    totals["true_tracking_accuracy"] = totals.get("true_tracking_accuracy", 0.0) + score.tracking_accuracy
                    timed += 1
                    if heads is not None:
                        heads_scored.append(_score_heads(heads[i, :, :, :steps, :n_text], intervals,
                                                         int(batch.mel_lengths[i]), truth.frame_ms, r))
        count += n
        if len(examples) < n_examples:
            examples.append((batch, output))
    metrics = {k: v / max(timed if k.startswith("true_") else count, 1) for k, v in totals.items()}
    if truth is not None:
        metrics["true_timed_utterances"] = timed
    if heads_scored:
        per_head = np.mean(heads_scored, axis=0)                                     # (L * H, 3)
        best = int(np.argmax(per_head[:, 0]))
        metrics.update(true_best_head=float(best), true_best_head_tracking_accuracy=float(per_head[best, 0]),
                       true_best_head_peak_accuracy=float(per_head[best, 1]),
                       true_best_head_boundary_error_ms=float(per_head[best, 2]))
    if "mel_wrong_text" in metrics:
        metrics["text_reliance"] = metrics.pop("mel_wrong_text") / max(metrics.pop("mel_own_text"), 1e-12)
    return metrics, examples


def _score_heads(heads: np.ndarray, intervals: np.ndarray, n_frames: int, frame_ms: float, r: int) -> np.ndarray:
    """Every head of one utterance ``(L, H, T_steps, T_text)`` against its true ``intervals``: per head
    (``layer * H + head``) its tracking accuracy, peak accuracy and boundary error ``(L * H, 3)``. The
    caller scores only utterances whose steps and tokens the truth times, so every figure is finite."""
    scores = [true_alignment_score(alignment, intervals, n_frames, frame_ms, r)
              for alignment in heads.reshape(-1, *heads.shape[2:])]
    return np.asarray([(s.tracking_accuracy, s.peak_accuracy, s.boundary_error_ms) for s in scores], dtype=np.float64)


class ValidationRenderer:
    """For the first item of each example batch: the teacher-forced alignment figure (with
    predicted and target mel and the stop curve) and the free-running audio, written to
    ``plots/step<N>_<id>.png`` and ``audio/step<N>_<id>.wav`` and logged to TensorBoard."""

    def __init__(self, exp_dir: Path, tokenizer: Tokenizer, vocoder: Vocoder, writer):
        self.exp_dir, self.tokenizer, self.vocoder, self.writer = exp_dir, tokenizer, vocoder, writer

    @torch.no_grad()
    def __call__(self, model: AutoregressiveTTS, examples: list[tuple[Batch, ModelOutput]], step: int,
                 val_loss: float) -> None:
        r = model.reduction_factor
        sample_rate = self.vocoder.audio.sample_rate
        for batch, output in examples:
            uid = batch.utterance_ids[0]
            n_text, n_frames = int(batch.text_lengths[0]), int(batch.mel_lengths[0])
            n_steps = decoder_steps(n_frames, r)
            fig = alignment_figure(
                output.alignments[0, :n_steps, :n_text].float().cpu().numpy(),
                mel=output.mel_after[0, :, :n_frames].float().cpu().numpy(),
                target_mel=batch.mels[0, :, :n_frames].cpu().numpy(),
                stop_probs=torch.sigmoid(output.stop_logits[0, :n_steps].float()).cpu().numpy(),
                tokens=self.tokenizer.ids_to_symbols(batch.ids[0, :n_text].tolist()), reduction_factor=r,
                title=f"{uid} (teacher-forced), step {step}, val loss {val_loss:.3f}")
            self.writer.add_image(f"alignment/{uid}", figure_to_array(fig), step, dataformats="HWC")
            save_figure(fig, self.exp_dir / "plots" / f"step{step:08d}_{uid}.png")
            inference = model.inference(batch.ids[:1, :n_text], batch.text_lengths[:1],
                                        InferenceConfig(max_decoder_steps=2 * n_steps + 10),
                                        speakers=None if batch.speakers is None else batch.speakers[:1])
            if not bool(torch.isfinite(inference.mel).all()):
                log.warning("step %d: free-running synthesis of %s is not finite; no audio written", step, uid)
                continue
            wav, wav_lengths = self.vocoder(inference.mel.float(), inference.lengths)
            wav = wav[0, : int(wav_lengths[0])].cpu()
            save_wav(self.exp_dir / "audio" / f"step{step:08d}_{uid}.wav", wav.numpy(), sample_rate)
            self.writer.add_audio(f"audio/{uid}", wav, step, sample_rate=sample_rate)
