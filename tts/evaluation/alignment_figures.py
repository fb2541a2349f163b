"""Alignment figures of checkpoints: teacher-forced on a corpus utterance or free-running on a
text, one panel per checkpoint (or per head)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import matplotlib.pyplot as plt
import numpy as np
import torch

from tts import checkpoint
from tts.config import resolve_inference
from tts.data import FeatureDataset
from tts.data.token_timings import corpus_token_timings
from tts.errors import TTSError
from tts.fileio import writable_folder
from tts.metrics import AttentionReport, attention_report
from tts.metrics.true_alignment import TrueAlignmentScore, true_alignment_score, true_tokens_of_steps
from tts.models.layers import decoder_steps
from tts.plots import alignment_figure, alignment_grid, head_grid
from tts.synthesis import Synthesizer
from tts.text import Tokenizer


@dataclass
class Panel:
    """What one checkpoint's figure shows: alignment ``(T_steps, T_text)``, heads ``(L, H, T_steps,
    T_text)`` of multi-head models, mels ``(n_mels, T_mel)``, stop probabilities ``(T_steps,)``;
    teacher-forced on a corpus with phone timings, the token really being said at each step
    ``truth`` ``(T_steps,)`` (-1: none) and the alignment's score against it."""

    alignment: np.ndarray
    heads: np.ndarray | None
    mel: np.ndarray
    target_mel: np.ndarray | None
    stop_probs: np.ndarray
    tokens: list[str]
    report: AttentionReport
    title: str
    step: int = 0
    r: int = 1
    truth: np.ndarray | None = None
    true_score: TrueAlignmentScore | None = None


def teacher_forced(loaded: checkpoint.LoadedModel, data_root: str | Path, utterance: str,
                   split: str = "val") -> Panel:
    """Alignment, predicted/target mel and stop curve of a corpus utterance under teacher forcing,
    and where its timings map cleanly onto its tokens (as validation scores them), the truth."""
    config, model = loaded.config, loaded.model
    dataset = FeatureDataset.of(data_root, config, split)
    index = {e["id"]: i for i, e in enumerate(dataset.entries)}
    if utterance not in index:
        raise TTSError(f"utterance {utterance} is not in the '{split}' split with features "
                       f"(first ones: {', '.join(list(index)[:3])})")
    r = model.reduction_factor
    batch = dataset.collate(r, config.data.pad_mels_with)([dataset[index[utterance]]])
    with torch.no_grad():
        output = model(batch)
    n_frames, n_text = int(batch.mel_lengths[0]), int(batch.text_lengths[0])
    steps = decoder_steps(n_frames, r)
    alignment = output.alignments[0, :steps, :n_text].float().numpy()
    tokens = Tokenizer.for_config(config.text, loaded.inventory).ids_to_symbols(batch.ids[0, :n_text].tolist())
    heads = (output.attention_heads[0, :, :, :steps, :n_text].float().numpy()
             if output.attention_heads is not None else None)
    panel = Panel(alignment, heads, output.mel_after[0, :, :n_frames].float().numpy(),
                  batch.mels[0, :, :n_frames].numpy(), torch.sigmoid(output.stop_logits[0, :steps]).float().numpy(),
                  tokens, attention_report(alignment, symbols=tokens), f"{utterance} (teacher-forced)")
    timings = corpus_token_timings(data_root, utterance, tokens, config.audio)
    if timings is not None and timings.clean:
        frame_ms = 1000.0 * config.audio.hop_length / config.audio.sample_rate
        panel.truth = true_tokens_of_steps(timings.intervals, steps, r)
        panel.true_score = true_alignment_score(alignment, timings.intervals, n_frames, frame_ms, r)
    return panel


def truth_caption(score: TrueAlignmentScore) -> str:
    """The line under an alignment drawn over the truth."""
    return f"{score.summary()} (white: the token being said)"


def free_running(synthesizer: Synthesizer, text: str, speaker: str | None = None) -> Panel:
    """Alignment, mel and stop curve of synthesized text (all its sentences, joined with pauses),
    said as ``speaker`` by a multi-speaker model."""
    result = synthesizer([text], speaker=speaker)[0]
    return Panel(result.alignment, result.attention_heads, result.mel, None, result.stop_probs, result.tokens,
                 result.segments[0].report, text[:100])


def plot_alignments(checkpoints: list[str], out: str | Path, text: str | None = None, data_root: str | None = None,
                    utterance: str | None = None, device: str = "cpu", precision: str = "fp32",
                    head: tuple[int, int] | None = None, all_heads: bool = False,
                    changes: Mapping[str, Any] | None = None, speaker: str | None = None) -> Path:
    """One checkpoint: the full figure. Several: their alignments side by side, in the order given.
    ``changes``: inference settings that replace each checkpoint's own (:func:`resolve_inference`).

    Multi-head models (Transformer-TTS): ``head=(layer, head)`` plots that head instead of the
    default (teacher forcing: the guided heads' mean; inference: the most diagonal head);
    ``all_heads`` plots a layers × heads grid of the first checkpoint. A multi-speaker model says
    ``text`` as ``speaker``; teacher forcing uses the corpus's speaker of the utterance.
    """
    if (text is None) == (utterance is None):
        raise TTSError("give either --text or --utterance (with --data)")
    if utterance is not None and data_root is None:
        raise TTSError("--utterance needs --data (the corpus root with features)")
    out = Path(out)
    if out.suffix.lower() != ".png" or out.is_dir():
        raise TTSError(f"--out {out}: give a file name ending in .png")
    writable_folder(out.parent)
    panels: list[Panel] = []
    stop_threshold = 0.5
    for path in checkpoints:
        loaded = checkpoint.load(path)
        settings = resolve_inference(loaded.config.inference, changes)
        if not panels:
            stop_threshold = settings.stop_threshold  # the line the figure draws: the first checkpoint's, as resolved
        if utterance is not None and data_root is not None:
            panel = teacher_forced(loaded, data_root, utterance)
        else:
            assert text is not None
            panel = free_running(Synthesizer(loaded, device, precision, settings=settings), text, speaker)
        panel.step, panel.r = loaded.step, loaded.model.reduction_factor
        if (head is not None or all_heads) and panel.heads is None:
            raise TTSError(f"{path} is a single-attention model: --head / --all-heads need Transformer-TTS")
        if head is not None and panel.heads is not None:
            layers, n_heads = panel.heads.shape[:2]
            if not (-layers <= head[0] < layers and 0 <= head[1] < n_heads):
                raise TTSError(f"--head {head[0]},{head[1]} outside {layers} layers x {n_heads} heads")
            panel.alignment = panel.heads[head[0], head[1]]
            panel.report = attention_report(panel.alignment, symbols=panel.tokens)
            panel.title += f" · layer {head[0]} head {head[1]}"
            panel.true_score = None  # scored for the guided heads' mean, not this head
        panels.append(panel)
    first = panels[0]
    if all_heads and first.heads is not None:
        heads = first.heads
        captions = [[_head_caption(heads[layer, h], first.tokens, layer, h) for h in range(heads.shape[1])]
                    for layer in range(heads.shape[0])]
        fig = head_grid(heads, captions, f"{first.title} · step {first.step}")
    elif len(panels) == 1:
        fig = alignment_figure(first.alignment, mel=first.mel, target_mel=first.target_mel,
                               stop_probs=first.stop_probs, tokens=first.tokens, reduction_factor=first.r,
                               stop_threshold=stop_threshold, truth=first.truth,
                               title=f"{first.title} · step {first.step}\n{first.report.summary()}"
                                     + (f"\n{truth_caption(first.true_score)}" if first.true_score else ""))
    else:
        fig = alignment_grid([p.alignment for p in panels],
                             [f"step {p.step}\n{p.report.summary()}" + (f"\n{truth_caption(p.true_score)}"
                                                                         if p.true_score else "") for p in panels],
                             first.title, truth=[p.truth for p in panels])
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def _head_caption(alignment: np.ndarray, tokens: list[str], layer: int, head: int) -> str:
    report = attention_report(alignment, symbols=tokens)
    return f"layer {layer} head {head}\nfocus {report.focus_rate:.2f} diag {report.diagonal_correlation:.2f}"
