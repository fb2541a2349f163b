"""Comparing mechanisms trained with several seeds: per mechanism the mean test CER over its seeds
and the between-seed standard deviation, and each mechanism's difference to the best with a 95 %
interval that includes the seed's variance as well as the sentences'.

The interval adds two variances of the difference in mean CER (the mean over a mechanism's seeds):

* the seeds': ``s_a² / n_a + s_b² / n_b``, each mechanism's between-seed variance of its test CER
  over its number of seeds (trainings differ by more than their sentences do, and by a different
  amount per mechanism, so nothing is pooled across mechanisms);
* the sentences': the variance of the difference over test sets redrawn with replacement (the same
  draw for both mechanisms: the comparison stays paired; a CER is character errors over
  characters of the drawn sentences). It holds part of the seeds' noise again, so the sum errs
  wide.

Its half-width is Student's t quantile times the root of the sum, with the Welch–Satterthwaite
degrees of freedom (``n − 1`` for each seed term, sentences ``− 1`` for the sentence term). With
two or three seeds a variance is itself a guess from one or two degrees of freedom, and the t
quantile widens the interval accordingly (12.7 at one degree of freedom, 4.3 at two), which
resampling the seeds cannot do: a bootstrap over three seeds sees ten distinct draws and
understates their variance by (n − 1)/n. A difference is called real when its interval excludes
zero and both mechanisms have at least :data:`MIN_SEEDS` seeds: with one seed the seed term is
unknown, so such an interval holds the sentences' noise only and the table says so, never "real".
The table names the CPU class that trained each seed (bf16 numbers depend on it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

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
    """``mechanism − reference`` in mean test CER, with its 95 % interval (the module's docstring) and
    that interval's degrees of freedom; ``seeds``: the fewer of the two mechanisms' seed counts."""

    mean: float
    low: float
    high: float
    seeds: int
    degrees_of_freedom: float

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


def sentence_variance(errors_a: np.ndarray, errors_b: np.ndarray, chars: np.ndarray, replicates: int,
                      seed: int) -> float:
    """The variance, over test sets redrawn with replacement (one draw for both), of the difference in
    seed-mean CER; ``errors_a`` ``(S_a, N)`` and ``errors_b`` ``(S_b, N)`` are per-seed character
    errors on the same ``N`` sentences of ``chars`` ``(N,)`` characters."""
    rng = np.random.default_rng(seed)
    sentences = rng.integers(0, len(chars), size=(replicates, len(chars)))               # (R, N)
    drawn_chars = chars[sentences].sum(axis=1)                                             # (R,)
    cer_a = errors_a[:, sentences].sum(axis=2) / drawn_chars                               # (S_a, R)
    cer_b = errors_b[:, sentences].sum(axis=2) / drawn_chars                               # (S_b, R)
    return float(np.var(cer_a.mean(axis=0) - cer_b.mean(axis=0), ddof=1))


def mechanism_difference(a: list[SeededRun], b: list[SeededRun], replicates: int = 2000,
                         seed: int = 0) -> Difference:
    """Mean CER of mechanism ``a``'s seeds minus ``b``'s over the sentences every run read, and its
    95 % Welch–Satterthwaite interval over the seeds' and the sentences' variance."""
    read = [set(run.ids) for run in [*a, *b]]
    ids = [uid for uid in a[0].ids if all(uid in ids_of_run for ids_of_run in read)]
    errors_a, chars = _on_shared_sentences(a, ids)
    errors_b, _ = _on_shared_sentences(b, ids)
    cers_a, cers_b = errors_a.sum(axis=1) / chars.sum(), errors_b.sum(axis=1) / chars.sum()   # (S_a,), (S_b,)
    observed = float(cers_a.mean() - cers_b.mean())
    seeds = min(len(a), len(b))
    terms = [(sentence_variance(errors_a, errors_b, chars, replicates, seed), len(ids) - 1)]  # (variance, dof)
    if seeds >= MIN_SEEDS:
        terms += [(float(np.var(cers, ddof=1)) / len(cers), len(cers) - 1) for cers in (cers_a, cers_b)]
    variance = sum(v for v, _ in terms)
    if variance == 0.0:
        return Difference(observed, observed, observed, seeds, float("inf"))
    dof = variance ** 2 / sum(v ** 2 / d for v, d in terms)
    half = float(stats.t.ppf(0.975, dof)) * variance ** 0.5
    return Difference(observed, observed - half, observed + half, seeds, float(dof))


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
    """Every seeded mechanism, lowest mean test CER first, each but the first with its difference to
    the first (:func:`mechanism_difference`)."""
    grouped = seeded_runs(rows)
    order = sorted(grouped, key=lambda name: np.mean([run.cer for run in grouped[name]]))
    summaries = []
    for name in order:
        runs = grouped[name]
        versus = None if name == order[0] else mechanism_difference(runs, grouped[order[0]], replicates, seed)
        summaries.append(MechanismSummary(name, [r.seed for r in runs], [r.cer for r in runs], versus,
                                          [r.cpu for r in runs]))
    return summaries


def mechanisms_table(summaries: list[MechanismSummary]) -> str:
    """A markdown table of :func:`compare_mechanisms` (empty without seeded runs)."""
    if not summaries:
        return ""
    lines = ["| mechanism | seeds | test CER, mean ± between-seed SD | per seed | vs best (95 % interval, its dof) | "
             "difference | CPU per seed |", "|" + "---|" * 7]
    for s in summaries:
        spread = f" ± {s.between_seed_sd:.3f}" if s.between_seed_sd is not None else ""
        versus, verdict = "–", "best"
        if s.versus_best is not None:
            d = s.versus_best
            versus = f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}], {d.degrees_of_freedom:.1f} dof"
            verdict = d.verdict
        lines.append(f"| {s.mechanism} | {len(s.seeds)} | {s.mean:.3f}{spread} | "
                     f"{', '.join(f'{c:.3f}' for c in s.cers)} | {versus} | {verdict} | {', '.join(s.cpus)} |")
    return "\n".join(lines) + "\n"
