"""The report of a study (``tts study``): from the result files of the finished variants, a table
with each variant's difference to the best one and its standard error (paired over the same test
sentences), learning curves and length generalization. A variant that repeats another with another
``train.seed`` (a *repeat*) is left out of the table and the figures and compared with the run it
repeats in a second table: what the seed alone changes, against which differences between variants
are read."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tts.evaluation.robustness import LONG_MULTIPLES
from tts.evaluation.seed_statistics import MIN_SEEDS, SEEDED, compare_mechanisms, mechanisms_table
from tts.metrics.true_alignment import score_line
from tts.plots import alignment_grid, figure_of_lines, save_figure, scatter_figure


def read_results(out: Path) -> list[dict]:
    """The finished variants' rows (``out/results/*.json``), in the order they finished."""
    paths = sorted((out / "results").glob("*.json"), key=lambda p: p.stat().st_mtime)
    return [json.loads(p.read_text()) for p in paths]


def paired_wer_difference(row: dict, best: dict) -> tuple[float, float] | None:
    """Mean per-sentence WER of ``row`` minus ``best``'s over the sentences both read, and its
    standard error (None without per-sentence errors)."""
    a, b = row.get("test_utterances") or {}, best.get("test_utterances") or {}
    if not a or not b:
        return None
    theirs = dict(zip(b["ids"], zip(b["word_errors"], b["words"])))
    diffs = [errors / max(words, 1) - theirs[uid][0] / max(theirs[uid][1], 1)
             for uid, errors, words in zip(a["ids"], a["word_errors"], a["words"]) if uid in theirs]
    if len(diffs) < 2:
        return None
    values = np.array(diffs)
    return float(values.mean()), float(values.std(ddof=1) / np.sqrt(len(values)))


def _without_seed(overrides: list[str]) -> list[str]:
    return [o for o in overrides if not o.startswith("train.seed=")]


def split_repeats(rows: list[dict]) -> tuple[list[dict], list[tuple[dict, dict]]]:
    """The rows of first runs, and a ``(repeat, first run)`` pair for every finished repeat: a
    variant whose overrides are another finished variant's plus ``train.seed=...``."""
    by_overrides = {tuple(row.get("overrides", [])): row for row in rows
                    if _without_seed(row.get("overrides", [])) == row.get("overrides", [])}
    firsts, repeats = [], []
    for row in rows:
        overrides = row.get("overrides", [])
        first = by_overrides.get(tuple(_without_seed(overrides)))
        if overrides != _without_seed(overrides) and first is not None:
            repeats.append((row, first))
        else:
            firsts.append(row)
    return firsts, repeats


def _reading_rank(row: dict) -> tuple[float, float]:
    return row["test"].get("wer", float("inf")), row["test"].get("cer", float("inf"))


def by_reading(rows: list[dict]) -> list[dict]:
    """``rows`` best reader first: lowest test WER, lower CER breaking ties (the study's ranking:
    the table, the figures and which mechanisms get a second seed)."""
    return sorted(rows, key=_reading_rank)


def seeds_table(repeats: list[tuple[dict, dict]]) -> str:
    """A markdown table of every repeat beside the run it repeats: test WER, its paired difference,
    CER and the update at which each aligned (empty without repeats)."""
    if not repeats:
        return ""
    lines = ["| repeat (of) | seed | test WER (repeat / first) | repeat − first (± SE) | CER (repeat / first) | "
             "aligned at update (repeat / first) |", "|" + "---|" * 6]
    for repeat, first in sorted(repeats, key=lambda pair: _reading_rank(pair[1])):
        seed = ", ".join(o.partition("=")[2] for o in repeat["overrides"] if o.startswith("train.seed="))
        paired = paired_wer_difference(repeat, first)
        versus = f"{paired[0]:+.3f} ± {paired[1]:.3f}" if paired else "–"
        steps = [str(r["aligned_at"]["step"] or "not aligned") for r in (repeat, first)]
        lines.append(f"| {repeat['variant']} ({first['variant']}) | {seed} | {repeat['test'].get('wer', '–')} / "
                     f"{first['test'].get('wer', '–')} | {versus} | {repeat['test'].get('cer', '–')} / "
                     f"{first['test'].get('cer', '–')} | {steps[0]} / {steps[1]} |")
    return "\n".join(lines) + "\n"


def study_table(result: dict) -> str:
    """A markdown table of the study's first runs, best test WER first, then :func:`seeds_table`."""
    firsts, repeats = split_repeats(result["rows"])
    rows = by_reading(firsts)
    best = rows[0] if rows else {}
    lines = [f"Study of `{result['config']}` on `{result['data']}`, {result['steps']} updates per variant "
             f"({len(rows)} finished{f', {len(repeats)} repeated with another seed' if repeats else ''}).", "",
             "| variant | aligned at update (min) | test WER | vs best (± SE) | CER | utterances with skips / repeats / "
             "early stops / step-limit hits | first-token skips | long CER 1x / 2x / 3x | s per update (its run) | "
             "update cost (bench, x cheapest) | ms per decoder step (bench) |", "|" + "---|" * 11]
    for row in rows:
        test, fails = row["test"], row["test"]["attention_failures"]
        aligned = row["aligned_at"]
        aligned_text = f"{aligned['step']} ({aligned['minutes']})" if aligned["step"] else "not aligned"
        long = row.get("suite", {}).get("long_cer")
        long_text = " / ".join(str(long[f"{m}x"]) for m in LONG_MULTIPLES) if long else "–"
        paired = paired_wer_difference(row, best) if row is not best else None
        versus = f"{paired[0]:+.3f} ± {paired[1]:.3f}" if paired else "–"
        lines.append(f"| {row['variant']} | {aligned_text} | {test.get('wer', '–')} | {versus} | {test.get('cer', '–')} | "
                     f"{fails['skips']} / {fails['repeats']} / {fails['early_stops']} / {fails['step_limit_hits']} | "
                     f"{fails['first_token_skips']} | {long_text} | {row.get('seconds_per_update', '–')} | "
                     f"{row.get('bench_update_relative', '–')} | {row.get('bench_decoder_step_ms', '–')} |")
    seeds = seeds_table(repeats)
    mechanisms = mechanisms_table(compare_mechanisms(result["rows"]))
    truth = truth_and_long_form_table(rows)
    return ("\n".join(lines) + "\n" + (f"\nThe same variants with another seed:\n\n{seeds}" if seeds else "")
            + (f"\nBy mechanism, seeds pooled (differences include seed variance where both mechanisms have "
               f"{MIN_SEEDS} seeds or more: tts.evaluation.seed_statistics):\n\n{mechanisms}" if mechanisms else "")
            + (f"\nAlignment against the true phone timings and long passages said in one go, by mechanism "
               f"(means over its runs):\n\n{truth}" if truth else ""))


def mechanism_of(row: dict) -> str:
    """The mechanism a run measures: ``<mechanism>`` of a seeded run ``<mechanism>-s<seed>``, else
    the variant's own name."""
    match = SEEDED.match(row["variant"])
    return match["mechanism"] if match else row["variant"]


def by_mechanism(rows: list[dict]) -> dict[str, list[dict]]:
    """The runs of each mechanism (:func:`mechanism_of`), lowest seed first, mechanisms in the
    order of their best-reading run (:func:`by_reading`)."""
    grouped: dict[str, list[dict]] = {}
    for row in by_reading(rows):
        grouped.setdefault(mechanism_of(row), []).append(row)
    return {name: sorted(runs, key=lambda r: r.get("seed") or 0) for name, runs in grouped.items()}


def mechanism_curves(rows: list[dict], key: str) -> tuple[list[int], dict[str, list[float]]]:
    """The curve points' ``key`` per mechanism (the mean over its seeds, :func:`by_mechanism`) over
    the update counts the runs share (runs with other points or a missing value are left out)."""
    curves = [r for r in rows if r.get("curve")]
    if not curves:
        return [], {}
    steps = [point["step"] for point in max((r["curve"] for r in curves), key=len)]
    lines = {}
    for name, runs in by_mechanism(curves).items():
        complete = [[point[key] for point in run["curve"]] for run in runs
                    if [point["step"] for point in run["curve"]] == steps
                    and all(point.get(key) is not None for point in run["curve"])]
        if complete:
            lines[name] = np.mean(complete, axis=0).tolist()
    return steps, lines


def _seeds_note(rows: list[dict]) -> str:
    return " (mean over seeds)" if any(SEEDED.match(r["variant"]) for r in rows) else ""


def curves_figure(rows: list[dict], path: Path, key: str = "wer") -> None:
    """Free-running WER (or CER, ``key="cer"``, which keeps moving while WER sits at 1) of the curve
    sentences against updates, one line per mechanism (seeds averaged)."""
    steps, lines = mechanism_curves(rows, key)
    if lines:
        save_figure(figure_of_lines(steps, lines, "updates", f"{key.upper()} (free-running, first test sentences)",
                                    f"Learning to read{_seeds_note(rows)}"), path)


def diagonal_curves_figure(rows: list[dict], path: Path) -> None:
    """Teacher-forced validation diagonal correlation against updates, one line per mechanism."""
    steps, lines = mechanism_curves(rows, "val_diagonal")
    if lines:
        save_figure(figure_of_lines(steps, lines, "updates", "attention diagonal correlation (validation)",
                                    f"Learning to align (aligned: 0.9 with focus 0.5){_seeds_note(rows)}"), path)


def true_alignment_curves_figure(rows: list[dict], path: Path) -> None:
    """Teacher-forced validation tracking accuracy against the true phone timings (the study's
    "aligned": 0.9) against updates, one line per mechanism (a corpus with timings)."""
    steps, lines = mechanism_curves(rows, "val_true_tracking_accuracy")
    if lines:
        save_figure(figure_of_lines(steps, lines, "updates", "attention tracking the true phone (validation)",
                                    f"Learning to align, against Festival's phone timings{_seeds_note(rows)}"), path)


def boundary_error_curves_figure(rows: list[dict], path: Path) -> None:
    """Teacher-forced validation token-boundary error (ms, durations from the attention against
    the true phone timings) against updates, one line per mechanism (a corpus with timings)."""
    steps, lines = mechanism_curves(rows, "val_true_boundary_error_ms")
    if lines:
        save_figure(figure_of_lines(steps, lines, "updates", "token boundary error, ms (validation)",
                                    f"Token boundaries from the attention against Festival's{_seeds_note(rows)}",
                                    log_y=True), path)


def long_form_figure(rows: list[dict], path: Path) -> None:
    """Long-form CER against passage length (x the longest training utterance), one line per
    mechanism: the mean over its seeds (``<mechanism>-s<seed>``), or the variant's own."""
    grouped = {name: [run["long_form"]["multiples"] for run in runs if "long_form" in run]
               for name, runs in by_mechanism(rows).items()}
    grouped = {name: runs for name, runs in grouped.items() if runs}
    if not grouped:
        return
    multiples = sorted({int(m[:-1]) for runs in grouped.values() for run in runs for m in run})
    lines = {name: [float(np.mean([run[f"{m}x"]["cer"] for run in runs if run.get(f"{m}x", {}).get("cer") is not None]
                                  or [np.nan])) for m in multiples] for name, runs in grouped.items()}
    save_figure(figure_of_lines(multiples, lines, "passage length (x the longest training utterance)", "CER",
                                "Long passages said in one go"), path)


def with_bench_cost(rows: list[dict], out: Path) -> list[dict]:
    """The rows with ``bench_update_relative`` and ``bench_decoder_step_ms`` from ``out/cost.json``
    (the JSON of ``tts bench attention-cost``: every mechanism timed side by side, which a study
    run's own clock, shared with whatever else ran, is not), when that file names the variant."""
    path = out / "cost.json"
    cost = json.loads(path.read_text())["results"] if path.is_file() else {}
    return [{**row, "bench_update_relative": cost[row["variant"]]["update_relative"],
             "bench_decoder_step_ms": cost[row["variant"]]["ms_per_decoder_step"]} if row["variant"] in cost else row
            for row in rows]


def cost_figure(rows: list[dict], path: Path) -> None:
    """Test WER against milliseconds per decoder step (the benchmark's where there is one), one point per variant."""
    points = {r["variant"]: (r.get("bench_decoder_step_ms", r["decoder_step_ms"]), r["test"]["wer"]) for r in rows
              if r.get("decoder_step_ms") is not None and r["test"].get("wer") is not None}
    if points:
        save_figure(scatter_figure(points, "ms per decoder step (batch 1, fp32)", "test WER",
                                   "What reading well costs"), path)


def length_figure(rows: list[dict], path: Path) -> None:
    """CER of the long unsplit sentences against their length, one line per variant."""
    lines = {row["variant"]: [row["suite"]["long_cer"][f"{m}x"] for m in LONG_MULTIPLES] for row in rows
             if "long_cer" in row.get("suite", {})}
    if lines:
        save_figure(figure_of_lines(list(LONG_MULTIPLES), lines, "length (x the longest training utterance)", "CER",
                                    "Reading long unsplit sentences"), path)


def alignment_file(out: Path, name: str) -> Path:
    """Where variant ``name``'s free-running alignment of the study's sentence is kept, beside its result file."""
    return out / "results" / f"{name}.alignment.npz"


def alignment_text(file: Path) -> str | None:
    """The sentence an alignment file was recorded for (None: no file, or one without its text)."""
    if not file.is_file():
        return None
    with np.load(file) as saved:
        return str(saved["text"]) if "text" in saved else None


def alignments_figure(rows: list[dict], out: Path, path: Path, sentence: str) -> None:
    """``sentence``'s free-running alignment for every variant with an alignment file of it
    (``out/results/<variant>.alignment.npz``; files of another sentence are left out), best test
    WER first, four to a row."""
    panels = []
    for row in by_reading(rows):
        file = alignment_file(out, row["variant"])
        if alignment_text(file) == sentence:
            with np.load(file) as saved:
                caption = f"{row['variant']} (test WER {row['test'].get('wer', '–')})\n{saved['summary']}"
                panels.append((saved["alignment"].astype(np.float32), caption))
    if panels:
        save_figure(alignment_grid([a for a, _ in panels], [c for _, c in panels], f"free-running: {sentence}",
                                   columns=4), path)


def true_alignment_file(out: Path, name: str) -> Path:
    """Where variant ``name``'s teacher-forced alignment of the validation utterance with the true
    phone timings is kept, beside its result file."""
    return out / "results" / f"{name}.true_alignment.npz"


def true_alignments_figure(rows: list[dict], out: Path, path: Path) -> None:
    """One validation utterance's teacher-forced attention per mechanism, over the token really
    being said (``out/results/<variant>.true_alignment.npz``; of each mechanism its lowest seed
    with a file, mechanisms by their best-reading run), four to a row. Files of another utterance
    than most of them (a study's runs all record the same one) are left out."""
    chosen = []
    for runs in by_mechanism(rows).values():
        files = [true_alignment_file(out, run["variant"]) for run in runs]
        present = [(run, file) for run, file in zip(runs, files) if file.is_file()]
        if present:
            chosen.append(present[0])
    if not chosen:
        return
    saved = []
    for run, file in chosen:
        with np.load(file) as record:
            saved.append((run, {key: record[key] for key in record.files}))
    utterances = [str(record["utterance"]) for _, record in saved]
    utterance = max(set(utterances), key=utterances.count)
    panels = [(run, record) for run, record in saved if str(record["utterance"]) == utterance]
    captions = [f"{run['variant']} (test CER {run['test'].get('cer', '–')}, update {int(record['step'])})\n"
                + score_line(float(record["peak_accuracy"]), float(record["boundary_error_ms"]))
                for run, record in panels]
    save_figure(alignment_grid([record["alignment"].astype(np.float32) for _, record in panels], captions,
                               f"teacher-forced, validation utterance {utterance}: attention, and in white the "
                               f"token being said (Festival's phone timings)", columns=4,
                               truth=[record["truth"].astype(np.int64) for _, record in panels]), path)


def _mean(values: Sequence[float | None], digits: int) -> str:
    known = [v for v in values if v is not None]
    return f"{np.mean(known):.{digits}f}" if known else "–"


def _lost(runs: list[dict], multiple: str) -> str:
    """"N of M": the passages of length ``multiple`` that lost the alignment, summed over the runs
    that counted them."""
    counted = [run[multiple] for run in runs if run.get(multiple, {}).get("lost") is not None]
    return f"{sum(m['lost'] for m in counted)} of {sum(m['utterances'] for m in counted)}" if counted else "–"


def truth_and_long_form_table(rows: list[dict]) -> str:
    """A markdown table, one line per mechanism (:func:`by_mechanism`; means over its seeds): how
    many seeds aligned (the study's definition) and the mean update, the last validation's tracking
    accuracy and boundary error against the true phone timings, and the long passages' CER and
    passages lost (summed over seeds) at each length. Empty when no run has either measure."""
    lines = []
    multiples: list[str] = sorted({m for r in rows for m in r.get("long_form", {}).get("multiples", {})},
                                  key=lambda m: int(m[:-1]))
    for name, runs in by_mechanism(rows).items():
        last = [run["curve"][-1] for run in runs if run.get("curve")]
        aligned = [run["aligned_at"]["step"] for run in runs if run.get("aligned_at", {}).get("step")]
        long = [run["long_form"]["multiples"] for run in runs if "long_form" in run]
        if not long and not any(p.get("val_true_tracking_accuracy") is not None for p in last):
            continue
        cer = " / ".join(_mean([run.get(m, {}).get("cer") for run in long], 3) for m in multiples) or "–"
        lost = " / ".join(_lost(long, m) for m in multiples) or "–"
        lines.append(f"| {name} | {len(runs)} | {len(aligned)} ({_mean(aligned, 0)}) | "
                     f"{_mean([p.get('val_true_tracking_accuracy') for p in last], 3)} | "
                     f"{_mean([p.get('val_true_boundary_error_ms') for p in last], 1)} | {cer} | {lost} |")
    if not lines:
        return ""
    lengths = " / ".join(multiples) or "–"
    return "\n".join([f"| mechanism | runs | aligned (mean update) | tracking accuracy, last validation | boundary "
                      f"error, last validation (ms) | long-form CER {lengths} | passages lost {lengths} |",
                      "|" + "---|" * 7, *lines]) + "\n"


def write_report(out: Path, config: str, data: str, steps: int, sentence: str) -> dict:
    """``study.json``, ``study.md`` and the figures ``wer_curves.png``, ``cer_curves.png``,
    ``diagonal_curves.png``, ``true_alignment_curves.png``, ``boundary_error_curves.png`` (one line
    per mechanism, seeds averaged), ``cost.png``, ``length.png``, ``long_form.png`` (every run,
    seeds averaged), ``alignments.png`` (the alignment files' ``sentence``, :func:`alignments_figure`)
    and ``true_alignments.png`` (:func:`true_alignments_figure`) under ``out`` from its result files
    (and ``cost.json``, :func:`with_bench_cost`); the figures show first runs only
    (:func:`split_repeats`)."""
    every_row = with_bench_cost(read_results(out), out)
    result = {"config": config, "data": data, "steps": steps, "rows": every_row}
    rows, _ = split_repeats(every_row)
    out.mkdir(parents=True, exist_ok=True)
    (out / "study.json").write_text(json.dumps(result, indent=1))
    (out / "study.md").write_text(study_table(result))
    curves_figure(rows, out / "wer_curves.png")
    curves_figure(rows, out / "cer_curves.png", "cer")
    diagonal_curves_figure(rows, out / "diagonal_curves.png")
    cost_figure(rows, out / "cost.png")
    length_figure(rows, out / "length.png")
    true_alignment_curves_figure(rows, out / "true_alignment_curves.png")
    boundary_error_curves_figure(rows, out / "boundary_error_curves.png")
    long_form_figure(every_row, out / "long_form.png")
    alignments_figure(rows, out, out / "alignments.png", sentence)
    true_alignments_figure(rows, out, out / "true_alignments.png")
    return result
