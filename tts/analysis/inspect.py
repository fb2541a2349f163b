"""``tts plot-alignment``: the alignment of a checkpoint on a validation utterance
(teacher-forced) or on free text (inference), for one or several checkpoints side by side."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch

from tts.analysis.metrics import attention_report
from tts.analysis.plots import alignment_figure
from tts.data import Collate, FeatureDataset, feature_dir
from tts.errors import TTSError
from tts.synthesis import Synthesizer


def teacher_forced(synthesizer: Synthesizer, data_root: str | Path, utterance: str, split: str = "val") -> dict:
    """Alignment, predicted/target mel and stop curve of a corpus utterance under teacher forcing."""
    config = synthesizer.config
    dataset = FeatureDataset(feature_dir(data_root, config.audio, config.text), data_root, split)
    index = {e["id"]: i for i, e in enumerate(dataset.entries)}
    if utterance not in index:
        raise TTSError(f"utterance {utterance} is not in the '{split}' split with features "
                       f"(first ones: {', '.join(list(index)[:3])})")
    r = synthesizer.model.reduction_factor
    batch = Collate(r)([dataset[index[utterance]]]).to(synthesizer.device)
    with torch.no_grad():
        output = synthesizer.model(batch)
    n_frames, n_text = int(batch.mel_lengths[0]), int(batch.text_lengths[0])
    steps = -(-n_frames // r)
    alignment = output.alignments[0, :steps, :n_text].float().cpu().numpy()
    tokens = synthesizer.tokenizer.ids_to_symbols(batch.ids[0, :n_text].tolist())
    heads = (output.attention_heads[0, :, :, :steps, :n_text].float().cpu().numpy()
             if output.attention_heads is not None else None)
    return {"alignment": alignment, "heads": heads, "mel": output.mel_after[0, :, :n_frames].float().cpu().numpy(),
            "target_mel": batch.mels[0, :, :n_frames].cpu().numpy(),
            "stop_probs": torch.sigmoid(output.stop_logits[0, :steps]).float().cpu().numpy(),
            "tokens": tokens, "report": attention_report(alignment, symbols=tokens),
            "title": f"{utterance} (teacher-forced)"}


def free_running(synthesizer: Synthesizer, text: str, **options) -> dict:
    """Alignment, mel and stop curve of synthesized text (all its sentences, joined with pauses)."""
    result = synthesizer([text], **options)[0]
    return {"alignment": result.alignment, "heads": result.attention_heads, "mel": result.mel, "target_mel": None,
            "stop_probs": result.stop_probs, "tokens": result.tokens, "report": result.segments[0].report,
            "title": text[:100]}


def plot_alignments(checkpoints: list[str], out: str | Path, text: str | None = None, data_root: str | None = None,
                    utterance: str | None = None, device: str = "cpu", int8: bool = False,
                    head: tuple[int, int] | None = None, all_heads: bool = False, **options) -> Path:
    """One checkpoint: the full figure. Several: their alignments side by side, in the order given.

    Multi-head models (Transformer-TTS): ``head=(layer, head)`` plots that head instead of the
    default (teacher forcing: the guided heads' mean; inference: the most diagonal head);
    ``all_heads`` plots a layers × heads grid of the first checkpoint.
    """
    if (text is None) == (utterance is None):
        raise TTSError("give either --text or --utterance (with --data)")
    if utterance is not None and data_root is None:
        raise TTSError("--utterance needs --data (the corpus root with features)")
    panels = []
    for path in checkpoints:
        synthesizer = Synthesizer.from_checkpoint(path, device=device, int8=int8)
        panel = (teacher_forced(synthesizer, data_root, utterance) if utterance
                 else free_running(synthesizer, text, **options))
        panel.update(step=synthesizer.step, r=synthesizer.model.reduction_factor)
        if (head is not None or all_heads) and panel["heads"] is None:
            raise TTSError(f"{path} is a single-attention model: --head / --all-heads need Transformer-TTS")
        if head is not None:
            layers, n_heads = panel["heads"].shape[:2]
            if not (-layers <= head[0] < layers and 0 <= head[1] < n_heads):
                raise TTSError(f"--head {head[0]},{head[1]} outside {layers} layers x {n_heads} heads")
            panel["alignment"] = panel["heads"][head[0], head[1]]
            panel["report"] = attention_report(panel["alignment"], symbols=panel["tokens"])
            panel["title"] += f" · layer {head[0]} head {head[1]}"
        panels.append(panel)
    if all_heads:
        fig = head_grid(panels[0])
    elif len(panels) == 1:
        p = panels[0]
        fig = alignment_figure(p["alignment"], mel=p["mel"], target_mel=p["target_mel"], stop_probs=p["stop_probs"],
                               tokens=p["tokens"], reduction_factor=p["r"],
                               title=f"{p['title']} · step {p['step']}\n{p['report'].summary()}")
    else:
        fig = alignment_grid(panels)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def alignment_grid(panels: list[dict]) -> plt.Figure:
    """Alignments of several checkpoints in one row (how alignment formed during training)."""
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.2), squeeze=False)
    for ax, p in zip(axes[0], panels):
        ax.imshow(np.asarray(p["alignment"]).T, origin="lower", aspect="auto", interpolation="none", cmap="viridis")
        ax.set_title(f"step {p['step']}\n{p['report'].summary()}", fontsize=7)
        ax.set_xlabel("decoder step")
    axes[0, 0].set_ylabel("input token")
    fig.suptitle(panels[0]["title"], fontsize=9)
    fig.tight_layout()
    return fig


def head_grid(panel: dict) -> plt.Figure:
    """Every encoder-decoder attention head of one model, layers as rows, heads as columns."""
    heads = panel["heads"]
    layers, n_heads = heads.shape[:2]
    fig, axes = plt.subplots(layers, n_heads, figsize=(2.6 * n_heads, 2.3 * layers), squeeze=False)
    for l in range(layers):
        for h in range(n_heads):
            report = attention_report(heads[l, h], symbols=panel["tokens"])
            ax = axes[l, h]
            ax.imshow(heads[l, h].T, origin="lower", aspect="auto", interpolation="none", cmap="viridis")
            ax.set_title(f"layer {l} head {h}\nfocus {report.focus_rate:.2f} diag {report.diagonal_correlation:.2f}",
                         fontsize=7)
            ax.tick_params(labelsize=6)
    fig.suptitle(f"{panel['title']} · step {panel['step']}", fontsize=9)
    fig.tight_layout()
    return fig
