"""Figures people can read: the alignment with the mel above it on the same time axis and the
stop-token curve below, input tokens labelled on the attention's y axis; alignments of several
checkpoints side by side; every head of a multi-head model. They take arrays and captions."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from tts.fileio import atomic_path  # noqa: E402


def _draw_truth(ax: plt.Axes, truth: np.ndarray) -> None:
    """The token really being said at each decoder step ``(T_steps,)`` (-1: none) as a thin white
    line over an attention panel, broken where no token is timed."""
    said = np.where(truth >= 0, truth, np.nan).astype(float)
    ax.step(np.arange(len(said)), said, where="mid", color="white", lw=0.7, alpha=0.9)


def alignment_figure(alignment: np.ndarray, mel: np.ndarray | None = None, stop_probs: np.ndarray | None = None,
                     tokens: list[str] | None = None, target_mel: np.ndarray | None = None, title: str = "",
                     stop_threshold: float = 0.5, reduction_factor: int = 1,
                     truth: np.ndarray | None = None) -> plt.Figure:
    """Build the figure.

    alignment ``(T_steps, T_text)``; mel / target_mel ``(n_mels, T_mel)`` with ``T_mel = T_steps · r``;
    stop_probs ``(T_steps,)``; tokens: one label per text position; truth ``(T_steps,)``: the token
    really being said at each step (-1: none), drawn over the attention. Every panel shares the
    decoder-step x axis (mels are drawn in decoder steps: frame / r).
    """
    steps, n_text = alignment.shape
    panels = [(name, m) for name, m in (("target mel", target_mel), ("mel", mel)) if m is not None]
    attention_inches = min(max(2.5, 0.11 * n_text), 14.0)  # room for one readable label per token
    heights = [1.6] * len(panels) + [attention_inches] + ([1.0] if stop_probs is not None else [])
    width = min(max(8.0, steps / 25), 24.0)
    fig, axes = plt.subplots(len(heights), 1, figsize=(width, sum(heights) + 1.0), sharex=True,
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    axes = axes[:, 0]
    extent_x = (-0.5, steps - 0.5)
    for ax, (name, m) in zip(axes, panels):
        ax.imshow(m, origin="lower", aspect="auto", interpolation="none", cmap="magma",
                  extent=(extent_x[0], m.shape[1] / reduction_factor - 0.5, -0.5, m.shape[0] - 0.5))
        ax.set_ylabel(f"{name}\n(mel bin)")
    ax = axes[len(panels)]
    ax.imshow(alignment.T, origin="lower", aspect="auto", interpolation="none", cmap="viridis", vmin=0,
              vmax=max(float(alignment.max()), 1e-6))
    if truth is not None:
        _draw_truth(ax, truth)
    ax.set_ylabel("input token")
    if tokens is not None:
        ax.set_yticks(range(len(tokens)))
        fontsize = min(8.0, max(3.5, 0.8 * 72 * attention_inches / max(len(tokens), 1)))
        ax.set_yticklabels([t if t != " " else "␣" for t in tokens], fontsize=fontsize)
    if stop_probs is not None:
        sax = axes[-1]
        sax.plot(np.arange(len(stop_probs)), stop_probs, color="tab:red", lw=1.2, label="stop probability")
        sax.axhline(stop_threshold, color="gray", ls="--", lw=0.8, label=f"threshold {stop_threshold}")
        sax.set_ylim(-0.05, 1.05)
        sax.set_ylabel("stop")
        sax.legend(loc="upper left", fontsize=7)
    axes[-1].set_xlim(*extent_x)
    axes[-1].set_xlabel(f"decoder step ({reduction_factor} frame{'s' if reduction_factor > 1 else ''} each)")
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def alignment_grid(alignments: list[np.ndarray], captions: list[str], title: str, columns: int | None = None,
                   truth: Sequence[np.ndarray | None] | None = None) -> plt.Figure:
    """Alignments ``(T_steps, T_text)`` of several checkpoints side by side, ``columns`` to a row
    (default: all in one row), e.g. how alignment formed in training or one sentence per mechanism.
    ``truth``: per panel the token really being said at each step ``(T_steps,)`` (-1: none; None: no
    truth for that panel), drawn over the attention as a thin white line."""
    columns = min(columns or len(alignments), len(alignments))
    rows = -(-len(alignments) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 4.2 * rows), squeeze=False, layout="constrained")
    for ax in axes.flat[len(alignments):]:
        ax.axis("off")
    for i, (ax, alignment, caption) in enumerate(zip(axes.flat, alignments, captions)):
        ax.imshow(np.asarray(alignment).T, origin="lower", aspect="auto", interpolation="none", cmap="viridis")
        panel_truth = truth[i] if truth is not None else None
        if panel_truth is not None:
            _draw_truth(ax, panel_truth)
        ax.set_title(caption, fontsize=7)
        ax.set_xlabel("decoder step")
    for row in axes:
        row[0].set_ylabel("input token")
    fig.suptitle(title, fontsize=9)  # the constrained layout keeps it clear of the top row's captions
    return fig


def head_grid(heads: np.ndarray, captions: list[list[str]], title: str) -> plt.Figure:
    """Every encoder-decoder attention head ``(L, H, T_steps, T_text)``: layers as rows, heads as columns."""
    layers, n_heads = heads.shape[:2]
    fig, axes = plt.subplots(layers, n_heads, figsize=(2.6 * n_heads, 2.3 * layers), squeeze=False,
                             layout="constrained")
    for layer in range(layers):
        for head in range(n_heads):
            ax = axes[layer, head]
            ax.imshow(heads[layer, head].T, origin="lower", aspect="auto", interpolation="none", cmap="viridis")
            ax.set_title(captions[layer][head], fontsize=7)
            ax.tick_params(labelsize=6)
    fig.suptitle(title, fontsize=9)
    return fig


def _line_styles(n: int) -> list[dict]:
    """Distinguishable styles for ``n`` lines: 20 colours, then a second line style."""
    palette = plt.get_cmap("tab20" if n > 10 else "tab10")
    colours = [palette(i) for i in range(palette.N)]
    return [{"color": colours[i % len(colours)], "linestyle": "-" if i < len(colours) else "--",
             "marker": "os^Dv"[i % 5]} for i in range(n)]


def figure_of_lines(x: Sequence[float], lines: dict[str, list[float]], xlabel: str, ylabel: str, title: str,
                    log_y: bool = False) -> plt.Figure:
    """One line with markers per name over the same x values (e.g. CER against length per mechanism);
    with many names the legend goes beside the axes; ``log_y`` for values spanning decades."""
    many = len(lines) > 6
    fig, ax = plt.subplots(figsize=(8.4 if many else 6.4, 4.2))
    for (name, values), style in zip(lines.items(), _line_styles(len(lines))):
        ax.plot(x, values, label=name, lw=1.2, ms=4, **style)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_xticks(x)
    if log_y:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.grid(alpha=0.3, which="both", axis="y")
    ax.set_title(title, fontsize=10)
    if many:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def scatter_figure(points: dict[str, tuple[float, float]], xlabel: str, ylabel: str, title: str) -> plt.Figure:
    """One labelled point per name (e.g. test WER against milliseconds per decoder step)."""
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    for (name, (x, y)), style in zip(points.items(), _line_styles(len(points))):
        ax.plot([x], [y], ms=6, color=style["color"], marker=style["marker"], linestyle="")
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(4, 3), fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def save_figure(fig: plt.Figure, path: str | Path, dpi: int = 100) -> Path:
    """Write ``fig`` as a PNG at ``path`` (whole, or not at all) and close it."""
    path = Path(path)
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=dpi, format="png")
    finally:
        plt.close(fig)
    return path


def figure_to_png(fig: plt.Figure, dpi: int = 100) -> bytes:
    """The figure as PNG bytes (closed afterwards)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    return buffer.getvalue()


def figure_to_array(fig: plt.Figure) -> np.ndarray:
    """RGB ``(H, W, 3)`` uint8 (for TensorBoard)."""
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()  # type: ignore[attr-defined]
