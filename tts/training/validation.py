"""Teacher-forced validation figures over a split: the loss terms, attention quality and how
much the decoder reads the text.

Shared by the trainer (every ``train.validate_every`` steps, into metrics.jsonl) and
``tts validate`` (any saved checkpoint, later), so both report the same numbers.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Callable, ContextManager, Iterable

import torch

from tts.analysis.metrics import attention_report
from tts.data import Batch
from tts.models.outputs import ModelOutput
from tts.training.losses import TTSLoss, masked_mel_loss


@torch.no_grad()
def teacher_forced_metrics(model: torch.nn.Module, criterion: TTSLoss, batches: Iterable[Batch], step: int,
                           device: torch.device | str = "cpu",
                           autocast: Callable[[], ContextManager] = contextlib.nullcontext,
                           n_examples: int = 0) -> tuple[dict[str, float], list[tuple[Batch, ModelOutput]]]:
    """Utterance-weighted means over ``batches`` of every loss term, ``attention_focus`` and
    ``attention_diagonal`` (see :func:`attention_report`), and ``text_reliance``: the mel loss with
    each item given its batch neighbour's text over the loss with its own (batches of one are left
    out of it). Near 1 the decoder predicts from its previous frames alone and babbles when
    free-running, however diagonal its attention looks.

    Returns the metrics and the first ``n_examples`` (batch, output) pairs for plots and audio.
    The caller puts ``model`` in eval mode.
    """
    totals: dict[str, float] = {}
    count = 0
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
                masked_mel_loss(wrong, batch.mels, batch.mel_lengths, criterion.config.mel_loss)) * n
        alignments = output.alignments.float().cpu().numpy()
        for i in range(n):
            steps = -(-int(batch.mel_lengths[i]) // r)
            report = attention_report(alignments[i, :steps, : int(batch.text_lengths[i])])
            totals["attention_focus"] = totals.get("attention_focus", 0.0) + report.focus_rate
            totals["attention_diagonal"] = totals.get("attention_diagonal", 0.0) + report.diagonal_correlation
        count += n
        if len(examples) < n_examples:
            examples.append((batch, output))
    metrics = {k: v / max(count, 1) for k, v in totals.items()}
    if "mel_wrong_text" in metrics:
        metrics["text_reliance"] = metrics.pop("mel_wrong_text") / max(metrics.pop("mel_own_text"), 1e-12)
    return metrics, examples
