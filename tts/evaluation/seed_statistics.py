"""Comparing mechanisms trained with several seeds: per mechanism the mean test CER over its seeds
and the between-seed standard deviation, and each mechanism's difference to the best with a 95 %
interval that includes the seed's variance as well as the sentences'.

The interval is a two-level bootstrap: each replicate draws the test sentences with replacement
(the same draw for both mechanisms: the comparison stays paired) and, for each mechanism, its
seeds with replacement; a mechanism's CER in a replicate is the mean over its drawn seeds of the
pooled CER (character errors / characters) over the drawn sentences. A difference is called real
when its interval excludes zero and both mechanisms have at least :data:`MIN_SEEDS` seeds: with
one seed the bootstrap sees no seed variance, so such a difference is reported as beyond (or
within) the sentences' noise only, never as real. With three seeds, resampling seeds understates
their variance by a factor of about (n − 1)/n; the between-seed SD is shown beside it so that a
reader can judge.
The table names the CPU class that trained each seed (bf16 numbers depend on it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from tts.devices import cpu_class

SEEDED = re.compile(r"^(?P<mechanism>.+)-s(?P<seed>\d+)$")
MIN_SEEDS = 2  # the fewest seeds per mechanism whose variance a difference can include


@dataclass
class SeededRun:
    """One run's per-sentence character errors ``(N,)`` and reference characters ``(N,)``."""

    mechanism: str
    seed: int
    ids: list[str]
    char_errors: np.ndarray
    chars: np.ndarray
    cpu: str = "unknown"  # the CPU class(es) that trained it (:func:`~tts.devices.cpu_class`), "/"-joined

    @property
    def cer(self) -> float:
        return float(self.char_errors.sum() / max(self.chars.sum(), 1))


def seeded_runs(rows: list[dict]) -> dict[str, list[SeededRun]]:
    """The result rows of seeded variants (``<mechanism>-s<seed>`` with per-sentence character
    errors), grouped by mechanism, seeds in order."""
    grouped: dict[str, list[SeededRun]] = {}
    for row in rows:
        match = SEEDED.match(row.get("variant", ""))
        errors = row.get("test_utterances") or {}
        if match is None or "char_errors" not in errors:
            continue
        cpu = "/".join(dict.fromkeys(cpu_class(s.split()) for s in row.get("cpu_instructions", []))) or "unknown"
        run = SeededRun(match["mechanism"], int(match["seed"]), list(errors["ids"]),
                        np.asarray(errors["char_errors"], dtype=np.float64), np.asarray(errors["chars"], dtype=np.float64),
                        cpu)
        grouped.setdefault(run.mechanism, []).append(run)
    return {name: sorted(runs, key=lambda r: r.seed) for name, runs in sorted(grouped.items())}


def _on_shared_sentences(runs: list[SeededRun], ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Character errors ``(S, N)`` of ``S`` runs and the reference characters ``(N,)`` on ``ids``."""
    errors, chars = [], None
    for run in runs:
        position = {uid: i for i, uid in enumerate(run.ids)}
        index = [position[uid] for uid in ids]
        errors.append(run.char_errors[index])
        chars = run.chars[index]
    assert chars is not None
    return np.stack(errors), chars


@dataclass
class Difference:
    """``mechanism − reference`` in mean test CER, with its bootstrap interval; ``seeds``: the fewer
    of the two mechanisms' seed counts."""

    mean: float
    low: float
    high: float
    seeds: int

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    @property
    def real(self) -> bool:
        """Beyond the noise of both the sentences and the seeds (needs :data:`MIN_SEEDS` seeds each)."""
        return self.excludes_zero and self.seeds >= MIN_SEEDS

    @property
    def verdict(self) -> str:
        """What the table says of it: real, within the noise, or (too few seeds) sentences' noise only."""
        if self.seeds >= MIN_SEEDS:
            return "real" if self.excludes_zero else "within seed and sentence noise"
        noun = "one seed" if self.seeds == 1 else f"{self.seeds} seeds"
        return f"{'beyond' if self.excludes_zero else 'within'} sentence noise ({noun}: seed variance unknown)"


def bootstrap_difference(a: list[SeededRun], b: list[SeededRun], replicates: int = 2000,
                         seed: int = 0) -> Difference:
    """Mean CER of mechanism ``a``'s seeds minus ``b``'s over the sentences every run read, and its
    95 % interval from the two-level bootstrap (sentences shared, seeds drawn per mechanism)."""
    read = [set(run.ids) for run in [*a, *b]]
    ids = [uid for uid in a[0].ids if all(uid in ids_of_run for ids_of_run in read)]
    errors_a, chars = _on_shared_sentences(a, ids)
    errors_b, _ = _on_shared_sentences(b, ids)
    rng = np.random.default_rng(seed)
    sentences = rng.integers(0, len(ids), size=(replicates, len(ids)))
    seeds_a = rng.integers(0, len(a), size=(replicates, len(a)))
    seeds_b = rng.integers(0, len(b), size=(replicates, len(b)))
    drawn_chars = chars[sentences].sum(axis=1)                                        # (R,)
    cer_a = errors_a[:, sentences].sum(axis=2) / drawn_chars                           # (S_a, R)
    cer_b = errors_b[:, sentences].sum(axis=2) / drawn_chars
    rows = np.arange(replicates)
    differences = cer_a[seeds_a, rows[:, None]].mean(axis=1) - cer_b[seeds_b, rows[:, None]].mean(axis=1)
    observed = float((errors_a.sum(axis=1) / chars.sum()).mean() - (errors_b.sum(axis=1) / chars.sum()).mean())
    low, high = np.percentile(differences, [2.5, 97.5])
    return Difference(observed, float(low), float(high), min(len(a), len(b)))


@dataclass
class MechanismSummary:
    """A mechanism's seeds: their test CERs, mean, between-seed SD and its difference to the best."""

    mechanism: str
    seeds: list[int]
    cers: list[float]
    versus_best: Difference | None
    cpus: list[str] = field(default_factory=list)  # per seed, :attr:`SeededRun.cpu`

    @property
    def mean(self) -> float:
        return float(np.mean(self.cers))

    @property
    def between_seed_sd(self) -> float | None:
        return float(np.std(self.cers, ddof=1)) if len(self.cers) > 1 else None


def compare_mechanisms(rows: list[dict], replicates: int = 2000, seed: int = 0) -> list[MechanismSummary]:
    """Every seeded mechanism, lowest mean test CER first, each but the first with its bootstrap
    difference to the first."""
    grouped = seeded_runs(rows)
    order = sorted(grouped, key=lambda name: np.mean([run.cer for run in grouped[name]]))
    summaries = []
    for name in order:
        runs = grouped[name]
        versus = None if name == order[0] else bootstrap_difference(runs, grouped[order[0]], replicates, seed)
        summaries.append(MechanismSummary(name, [r.seed for r in runs], [r.cer for r in runs], versus,
                                          [r.cpu for r in runs]))
    return summaries


def mechanisms_table(summaries: list[MechanismSummary]) -> str:
    """A markdown table of :func:`compare_mechanisms` (empty without seeded runs)."""
    if not summaries:
        return ""
    lines = ["| mechanism | seeds | test CER, mean ± between-seed SD | per seed | vs best (95 % interval) | "
             "difference | CPU per seed |", "|" + "---|" * 7]
    for s in summaries:
        spread = f" ± {s.between_seed_sd:.3f}" if s.between_seed_sd is not None else ""
        versus, verdict = "–", "best"
        if s.versus_best is not None:
            d = s.versus_best
            versus = f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]"
            verdict = d.verdict
        lines.append(f"| {s.mechanism} | {len(s.seeds)} | {s.mean:.3f}{spread} | "
                     f"{', '.join(f'{c:.3f}' for c in s.cers)} | {versus} | {verdict} | {', '.join(s.cpus)} |")
    return "\n".join(lines) + "\n"
