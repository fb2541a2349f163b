"""A static HTML report of an experiment folder: loss curves, alignments across checkpoints, evaluation with audio."""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import matplotlib.pyplot as plt

from tts.errors import TTSError
from tts.plots import save_figure

_PLOT_RE = re.compile(r"step(\d+)_(.+)\.png$")


_STYLE = """body{font-family:sans-serif;margin:2em;max-width:1400px}img{max-width:100%}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}
.row{display:flex;gap:8px;overflow-x:auto}.row figure{margin:0;min-width:320px}figcaption{font-size:12px}
.bad{color:#b00;font-weight:bold}"""


def read_metrics(path: Path) -> list[dict]:
    """The records of a ``metrics.jsonl``; a line cut short by a killed run is passed over."""
    records = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and "step" in record:
            records.append(record)
    return records


def _loss_figures(exp: Path, folder: Path) -> list[Path]:
    records = read_metrics(exp / "metrics.jsonl")
    train = [r for r in records if "split" not in r]
    val = [r for r in records if r.get("split") == "val"]
    figures = []
    for name, keys in (("losses", ("loss", "mel", "mel_postnet", "stop", "guided_attention")),
                       ("attention", ("attention_focus", "attention_diagonal")),
                       ("training", ("grad_norm", "lr", "frames_per_s"))):
        if not any(key in r for r in records for key in keys):
            continue  # e.g. a run from before validation measured attention
        fig, axes = plt.subplots(1, len(keys), figsize=(3.6 * len(keys), 3), squeeze=False)
        for ax, key in zip(axes[0], keys):
            ax.plot([r["step"] for r in train if key in r], [r[key] for r in train if key in r], label="train", lw=1)
            shown = [r for r in val if key in r]
            if shown:
                ax.plot([r["step"] for r in shown], [r[key] for r in shown], "o-", label="val", lw=1, ms=3)
            ax.set_title(key, fontsize=9)
            ax.set_xlabel("step", fontsize=8)
            if key in ("loss", "mel", "mel_postnet", "stop"):
                ax.set_yscale("log")
            ax.legend(fontsize=7)
        fig.tight_layout()
        figures.append(save_figure(fig, folder / f"{name}.png"))
    return figures


def build_report(exp_dir: str | Path, eval_dir: str | Path | None = None) -> Path:
    exp = Path(exp_dir)
    if not (exp / "metrics.jsonl").is_file():
        raise TTSError(f"{exp} is not an experiment folder (no metrics.jsonl): train with 'tts train --out {exp}'")
    folder = exp / "report"
    folder.mkdir(exist_ok=True)
    rel = lambda p: html.escape(os.path.relpath(p, exp))  # noqa: E731
    parts = [f"<h1>Experiment {html.escape(exp.name)}</h1>"]
    config = exp / "config.yaml"
    if config.is_file():
        parts.append(f"<details><summary>config.yaml</summary><pre>{html.escape(config.read_text())}</pre></details>")
    parts.append("<h2>Training curves</h2>")
    parts += [f'<img src="{rel(p)}">' for p in _loss_figures(exp, folder)]

    by_utt: dict[str, list[tuple[int, Path]]] = {}
    for png in (exp / "plots").glob("step*.png"):
        match = _PLOT_RE.search(png.name)
        if match:
            by_utt.setdefault(match.group(2), []).append((int(match.group(1)), png))
    if by_utt:
        parts.append("<h2>Alignment across checkpoints (teacher-forced validation utterances)</h2>")
        for utt, items in sorted(by_utt.items()):
            figures = "".join(f'<figure><img src="{rel(p)}"><figcaption>step {s}</figcaption></figure>'
                              for s, p in sorted(items))
            audio = sorted((exp / "audio").glob(f"step*_{utt}.wav"))
            player = f'<p>latest free-running audio: <audio controls src="{rel(audio[-1])}"></audio></p>' if audio else ""
            parts.append(f"<h3>{html.escape(utt)}</h3>{player}<div class='row'>{figures}</div>")

    eval_dir = Path(eval_dir) if eval_dir else exp / "eval"
    if (eval_dir / "summary.json").is_file():
        summary = json.loads((eval_dir / "summary.json").read_text())
        rows = json.loads((eval_dir / "utterances.json").read_text())
        parts.append(f"<h2>Evaluation ({html.escape(str(summary.get('split')))} split, step "
                     f"{summary.get('checkpoint_step')})</h2><pre>{html.escape(json.dumps(summary, indent=1))}</pre>")
        head = ["id", "audio", "text", "transcript", "wer", "reference_wer", "mcd_db", "failures", "alignment"]
        body = []
        for r in rows:
            failures = [k for k in ("skips", "repeats", "early_stops", "step_limit_hits") if r.get(k)]
            wav, png = eval_dir / "wavs" / f"{r['id']}.wav", eval_dir / "wavs" / f"{r['id']}.png"
            body.append("<tr>" + "".join(f"<td>{c}</td>" for c in [
                html.escape(r["id"]), f'<audio controls src="{rel(wav)}"></audio>', html.escape(r["text"]),
                html.escape(r.get("transcript", "")), r.get("wer", ""), r.get("reference_wer", ""), r["mcd_db"],
                f"<span class='bad'>{', '.join(failures)}</span>" if failures else "none",
                f'<a href="{rel(png)}"><img src="{rel(png)}" width="360"></a>']) + "</tr>")
        parts.append("<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + "".join(body) + "</table>")
    page = exp / "report.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(exp.name)}</title>"
                    f"<style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>")
    return page
