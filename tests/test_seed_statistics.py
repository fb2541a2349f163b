"""Comparing mechanisms over seeds: mean and between-seed SD, and intervals that widen with the
seeds' disagreement and with how few seeds there are, not only with the sentences' noise."""

import numpy as np
import pytest

from tts.evaluation.seed_statistics import compare_mechanisms, mechanism_difference, mechanisms_table, seeded_runs

N = 60


def row(variant: str, cer: float, noise: float = 0.0, seed: int = 0) -> dict:
    """A result row whose sentences (40 characters each) have about ``cer`` errors per character."""
    rng = np.random.default_rng(seed)
    errors = np.clip(np.round(40 * (cer + noise * rng.standard_normal(N))), 0, None).astype(int)
    return {"variant": variant, "test_utterances": {"ids": [f"u{i}" for i in range(N)], "word_errors": [0] * N,
                                                    "words": [8] * N, "char_errors": errors.tolist(),
                                                    "chars": [40] * N}}


def test_runs_group_by_mechanism_and_skip_what_has_no_seed_or_no_character_errors():
    rows = [row("forward-s2", 0.1), row("forward-s1", 0.1), row("content-s1", 0.3), row("content", 0.3),
            {"variant": "gmm-s1", "test_utterances": {"ids": ["u0"], "word_errors": [1], "words": [3]}}]
    grouped = seeded_runs(rows)
    assert list(grouped) == ["content", "forward"] and [r.seed for r in grouped["forward"]] == [1, 2]
    assert grouped["content"][0].cer == pytest.approx(0.3, abs=0.01)


def test_a_clear_difference_is_real_and_seed_disagreement_widens_the_interval():
    good = [row(f"forward-s{s}", 0.10, 0.02, seed=s) for s in (1, 2, 3)]
    bad = [row(f"content-s{s}", 0.30, 0.02, seed=10 + s) for s in (1, 2, 3)]
    summaries = compare_mechanisms(good + bad, replicates=500)
    assert [s.mechanism for s in summaries] == ["forward", "content"]
    difference = summaries[1].versus_best
    assert difference is not None and difference.real and difference.mean == pytest.approx(0.2, abs=0.01)
    assert summaries[0].versus_best is None and summaries[0].between_seed_sd < 0.01
    # the same mean, but the seeds disagree: 0.05, 0.15 and 0.40
    spread = [row(f"hybrid-s{s}", c, 0.02, seed=20 + s) for s, c in ((1, 0.05), (2, 0.15), (3, 0.40))]
    steady = [row(f"dca-s{s}", 0.20, 0.02, seed=30 + s) for s in (1, 2, 3)]
    runs = seeded_runs(good + spread + steady)
    wide = mechanism_difference(runs["hybrid"], runs["forward"], replicates=500)
    narrow = mechanism_difference(runs["dca"], runs["forward"], replicates=500)
    assert wide.high - wide.low > 3 * (narrow.high - narrow.low)
    assert narrow.real and not wide.real  # a lucky seed is not a mechanism


def test_without_sentence_noise_the_interval_is_welchs_over_the_seeds():
    from scipy import stats

    # every sentence of a run has the same CER, so redrawn test sets change nothing: only seeds vary
    a = [row(f"ls-s{s}", c, seed=s) for s, c in ((1, 0.10), (2, 0.20), (3, 0.125))]
    b = [row(f"forward-s{s}", c, seed=s) for s, c in ((1, 0.05), (2, 0.075))]
    runs = seeded_runs(a + b)
    difference = mechanism_difference(runs["ls"], runs["forward"], replicates=200)
    cers_a, cers_b = [r.cer for r in runs["ls"]], [r.cer for r in runs["forward"]]
    welch = stats.ttest_ind(cers_a, cers_b, equal_var=False)
    low, high = welch.confidence_interval(0.95)
    assert (difference.low, difference.high) == pytest.approx((low, high), rel=1e-9)
    assert difference.degrees_of_freedom == pytest.approx(welch.df, rel=1e-9)
    assert difference.mean == pytest.approx(np.mean(cers_a) - np.mean(cers_b))


def test_two_seeds_that_disagree_are_not_enough_for_a_real_difference():
    # both of b's seeds read worse than both of a's; a bootstrap over two seeds would call it real
    a = [row(f"forward-s{s}", c, 0.02, seed=s) for s, c in ((1, 0.061), (2, 0.049))]
    b = [row(f"ls-s{s}", c, 0.02, seed=5 + s) for s, c in ((1, 0.136), (2, 0.087))]
    runs = seeded_runs(a + b)
    difference = mechanism_difference(runs["ls"], runs["forward"], replicates=500)
    assert difference.mean == pytest.approx(0.056, abs=0.005) and difference.degrees_of_freedom < 3
    assert difference.low < 0 < difference.high and not difference.real
    # the same mean gap with three seeds each that agree is real
    a.append(row("forward-s3", 0.055, 0.02, seed=3))
    steady = [row(f"ls-s{s}", c, 0.02, seed=5 + s) for s, c in ((1, 0.10), (2, 0.115), (3, 0.105))]
    runs = seeded_runs(a + steady)
    assert mechanism_difference(runs["ls"], runs["forward"], replicates=500).real


def test_the_table_names_the_cpu_class_that_trained_each_seed():
    from tts.devices import cpu_class

    zen3, zen4, xeon = "avx2", "avx2 avx512f avx512_bf16 avx512_vnni", "avx2 avx512f avx512_bf16 amx_bf16 amx_int8"
    assert [cpu_class(s.split()) for s in (zen3, zen4, xeon, "")] == ["AVX2", "AVX-512 BF16", "AMX", "unknown"]
    rows = [{**row("forward-s1", 0.1, seed=1), "cpu_instructions": [zen3]},
            {**row("forward-s2", 0.1, seed=2), "cpu_instructions": [zen4, xeon]}]  # resumed on another machine
    table = mechanisms_table(compare_mechanisms(rows, replicates=50))
    assert table.splitlines()[2].endswith("| AVX2, AVX-512 BF16/AMX |")


def test_the_table_says_which_differences_are_real():
    rows = [row(f"forward-s{s}", 0.10, 0.02, seed=s) for s in (1, 2)] + \
           [row(f"content-s{s}", 0.30, 0.02, seed=5 + s) for s in (1, 2)] + \
           [row(f"ls-s{s}", 0.11, 0.05, seed=9 + s) for s in (1, 2)]
    table = mechanisms_table(compare_mechanisms(rows, replicates=300))
    lines = table.splitlines()
    assert lines[2].startswith("| forward | 2 | 0.1") and lines[2].endswith("| – | best | unknown, unknown |")
    assert lines[3].startswith("| ls |") and lines[3].endswith("| within seed and sentence noise | unknown, unknown |")
    assert lines[4].startswith("| content |") and "| real |" in lines[4]
    assert mechanisms_table([]) == ""


def test_with_one_seed_a_difference_is_never_called_real():
    rows = [row("forward-s1", 0.10, 0.02, seed=1), row("content-s1", 0.30, 0.02, seed=2),
            row("ls-s1", 0.105, 0.05, seed=3)]
    summaries = compare_mechanisms(rows, replicates=300)
    content = summaries[-1].versus_best
    assert content is not None and content.excludes_zero and not content.real and content.seeds == 1
    lines = mechanisms_table(summaries).splitlines()
    assert lines[3].startswith("| ls |") and "| within sentence noise (one seed: seed variance unknown) |" in lines[3]
    assert lines[4].startswith("| content |") and "| beyond sentence noise (one seed: seed variance unknown) |" in lines[4]


def test_the_report_pools_seeds_by_mechanism_and_draws_long_form_and_true_alignment(tmp_path):
    import json

    from tts.evaluation.study_report import mechanism_curves, write_report

    def result(variant: str, cer: float, seed: int) -> dict:
        failures = {"skips": 0, "repeats": 0, "early_stops": 0, "step_limit_hits": 0, "first_token_skips": 0}
        return {**row(variant, cer, 0.02, seed), "overrides": [f"k={variant}"], "aligned_at": {"step": 500, "minutes": 9},
                "test": {"wer": 2 * cer, "cer": cer, "attention_failures": failures},
                "curve": [{"step": s, "wer": cer, "cer": cer, "val_diagonal": 0.9,
                           "val_true_tracking_accuracy": min(1.0, s / 1000 - cer)} for s in (500, 1000)],
                "long_form": {"longest_training_tokens": 147, "multiples": {
                    f"{m}x": {"utterances": 10, "cer": cer * m, "reference_cer": 0.03, "lost": m // 2}
                    for m in (1, 2, 4, 8)}}}

    (tmp_path / "results").mkdir()
    for variant, cer, seed in (("forward-s1", 0.1, 1), ("forward-s2", 0.12, 2), ("content-s1", 0.4, 3),
                               ("content-s2", 0.45, 4)):
        (tmp_path / "results" / f"{variant}.json").write_text(json.dumps(result(variant, cer, seed)))
    rows = write_report(tmp_path, "c.yaml", "d", 1000, "A sentence.")["rows"]
    report = (tmp_path / "study.md").read_text()
    assert "By mechanism, seeds pooled" in report
    assert "| forward | 2 | 0.11" in report and "| content | 2 | 0.42" in report
    # alignment against the truth (the last curve point) and long passages, means over the seeds
    assert "| forward | 2 | 2 (500) | 0.890 | – | 0.110 / 0.220 / 0.440 / 0.880 | 0 of 20 / 2 of 20 / 4 of 20 / " \
           "8 of 20 |" in report
    assert "| content | 2 | 2 (500) | 0.575 | – |" in report
    steps, lines = mechanism_curves(rows, "cer")
    assert steps == [500, 1000] and lines["forward"] == pytest.approx([0.11, 0.11])  # one line per mechanism
    for figure in ("long_form", "true_alignment_curves"):
        assert (tmp_path / f"{figure}.png").stat().st_size > 10_000, figure
