"""Where the attention study's runs stand (docs/attention_study/second_edition.md): for every
distinct mechanism and the Transformer-TTS arm's two variants, and every seed, whether the run is
finished (its committed result file, with its test CER), under way on this machine (its newest
checkpoint and the last validation's tracking accuracy) or not started; then the training
lane-hours left at the finished runs' median seconds per update.

    python egs/synthetic/study_status.py [--seeds 1 2 3] [--steps 10720]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from tts.config.attention import ATTENTION_KINDS
from tts.evaluation.report import read_metrics
from tts.training.experiment import ExperimentFolder, checkpoint_step

ROOT = Path(__file__).resolve().parents[2]
#: the study's budget in updates (attention_study_v2.sh's --steps)
BUDGET = 10720
#: registry names that compute another mechanism's function bit for bit (second_edition.md, "Two rows
#: are one function"): kept in the registry, not trained in the study
IDENTICAL = {"luong_dot": "luong_general", "luong_concat": "content"}
#: the study's arms: name → (the variants it trains, its result files, its run folders)
ARMS = {"v2": ([kind for kind in ATTENTION_KINDS if kind not in IDENTICAL],
               "docs/attention_study/v2_results", "exp/attention_study_v2"),
        "v2_transformer": (["alpha_learned", "alpha_fixed"],
                           "docs/attention_study/v2_transformer_results", "exp/attention_study_v2_transformer")}


@dataclass
class RunState:
    """One seed of one variant: ``finished`` (its result file), else the step of its newest checkpoint
    on this machine (0: not started) and its last validation's tracking accuracy (None: none yet)."""

    variant: str
    seed: int
    result: dict | None
    step: int
    tracking: float | None

    @property
    def finished(self) -> bool:
        return self.result is not None

    def cell(self, steps: int) -> str:
        """The run in a few words, for the table."""
        if self.result is not None:
            return f"CER {self.result['test']['cer']:.3f}"
        if self.step == 0:
            return "–"
        tracking = "" if self.tracking is None else f", tracking {self.tracking:.2f}"
        return ("trained, evaluating" if self.step >= steps else f"at {self.step:,}") + tracking


def run_state(variant: str, seed: int, results: Path, runs: Path) -> RunState:
    """A run's state from its result file in ``results`` and its folder in ``runs``."""
    name = f"{variant}-s{seed}"
    result_file = results / f"{name}.json"
    if result_file.is_file():
        return RunState(variant, seed, json.loads(result_file.read_text()), 0, None)
    folder = runs / name
    latest = ExperimentFolder(folder).latest()
    validations = [m for m in read_metrics(folder / "metrics.jsonl") if m.get("split") == "val"] \
        if (folder / "metrics.jsonl").is_file() else []
    tracking = validations[-1].get("true_tracking_accuracy") if validations else None
    return RunState(variant, seed, None, 0 if latest is None else checkpoint_step(latest), tracking)


def status(root: Path, seeds: list[int]) -> dict[str, list[RunState]]:
    """Every arm's runs, variant by variant and seed by seed."""
    return {arm: [run_state(variant, seed, root / results, root / runs) for variant in variants for seed in seeds]
            for arm, (variants, results, runs) in ARMS.items()}


def lane_hours_left(states: list[RunState], steps: int) -> tuple[float, float]:
    """(training lane-hours left, the median seconds per update of the finished runs they assume)."""
    per_update = statistics.median([s.result["seconds_per_update"] for s in states if s.result is not None] or [1.0])
    left = sum(max(steps - s.step, 0) for s in states if not s.finished)
    return left * per_update / 3600, per_update


def render(arms: dict[str, list[RunState]], seeds: list[int], steps: int) -> str:
    """Markdown: a table per arm (a row per variant, a column per seed) and the totals."""
    lines = []
    for arm, states in arms.items():
        lines += [f"{arm} ({ARMS[arm][1]}):", "", "| variant | " + " | ".join(f"seed {s}" for s in seeds) + " |",
                  "|---|" + "---|" * len(seeds)]
        for variant in ARMS[arm][0]:
            cells = [s.cell(steps) for s in states if s.variant == variant]
            lines.append(f"| {variant} | " + " | ".join(cells) + " |")
        lines.append("")
    everything = [s for states in arms.values() for s in states]
    hours, per_update = lane_hours_left(everything, steps)
    finished = sum(s.finished for s in everything)
    under_way = sum(not s.finished and s.step > 0 for s in everything)
    lines.append(f"{finished} of {len(everything)} runs finished, {under_way} under way on this machine; "
                 f"training left: {hours:.0f} lane-hours at {per_update:.2f} s per update (the finished runs' median), "
                 "plus an evaluation per unfinished run")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--steps", type=int, default=BUDGET, help="the budget (attention_study_v2.sh's --steps)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (its docs/ and exp/)")
    args = parser.parse_args(argv)
    print(render(status(args.root, args.seeds), args.seeds, args.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
