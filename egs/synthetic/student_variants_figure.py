#!/usr/bin/env python3
"""Every student variant tried since the multi-resolution discriminator, against its teacher on 40
validation sentences (docs/vocoders.md, "How it got there"): one row per variant and probed update,
DNSMOS P.808 and P.835 OVRL student − teacher (± SE, paired per sentence) beside the targets of
issue #61 (−0.03 and −0.05) and the bundled student's own gap. Reads the committed probe files of
``docs/vocos_student/``; the validation sentences are the voice's of the day (run 10 until
2026-12-07, run 11 since), so a row is read against the bundled student's line of its own colour.

    python egs/synthetic/student_variants_figure.py [--out docs/vocos_student/variants.png]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PROBES = Path(__file__).resolve().parents[2] / "docs" / "vocos_student"
#: (label, file, the keys of its ``validation_40_minus_teacher`` in update order (a key ends in the
#: update), the voice whose validation sentences it read)
VARIANTS = [
    ("continued, fresh discriminators", "release_2026-11-28.json", ["2000", "3000", "4000"], "run 10"),
    ("annealed from 4,015 (bundled at 2,100)", "release_2026-11-28_anneal.json",
     ["narrow 900", "narrow 1500", "narrow 2100"], "run 10"),
    ("MLPs 1,536 wide", "release_2026-11-28_anneal.json", ["wide 900", "wide 1500", "wide 2100"], "run 10"),
    ("paper width (dim 512)", "probe40_val_paper_width.json", ["900", "1500", "2100"], "run 10"),
    ("phase losses", "probe40_val_phase.json", ["900", "1500", "2100"], "run 10"),
    ("all 2,798 utterances", "probe40_val_all_utterances.json", ["900", "1500", "2100"], "run 11"),
    ("period discriminator 512 wide", "probe40_val_d512.json", ["900", "1500", "2100"], "run 11"),
]
METERS = (("dnsmos_p808", "DNSMOS P.808", -0.03), ("dnsmos_ovrl", "DNSMOS P.835 OVRL", -0.05))
#: per voice: the probe file that holds the bundled student's gap on its sentences, and its colour
BUNDLED = {"run 10": ("probe40_val_phase.json", "tab:blue"), "run 11": ("probe40_val_d512.json", "tab:red")}


def rows() -> list[tuple[str, str, dict[str, tuple[float, float]]]]:
    """``(label, voice, {meter: (student − teacher, SE)})`` per variant and probed update, top to bottom."""
    out = []
    for label, name, keys, voice in VARIANTS:
        probes = json.loads((PROBES / name).read_text())["validation_40_minus_teacher"]
        for key in keys:
            update = int(key.split()[-1])
            out.append((f"{label}, {update:,}", voice,
                        {m: (probes[key][m]["b_minus_a"], probes[key][m]["standard_error"]) for m, _, _ in METERS}))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(PROBES / "variants.png"))
    args = parser.parse_args()
    table = rows()
    bundled = {voice: json.loads((PROBES / name).read_text())["validation_40_bundled_minus_teacher"]
               for voice, (name, _) in BUNDLED.items()}
    fig, axes = plt.subplots(1, 2, figsize=(12, 0.32 * len(table) + 2.2), sharey=True)
    ys = list(range(len(table)))[::-1]
    for ax, (meter, title, target) in zip(axes, METERS):
        for voice, (_, colour) in BUNDLED.items():
            mine = [(y, r[2][meter]) for y, r in zip(ys, table) if r[1] == voice]
            ax.errorbar([v[0] for _, v in mine], [y for y, _ in mine], xerr=[v[1] for _, v in mine], fmt="o",
                        color=colour, capsize=2, label=f"a variant, on {voice}'s sentences")
            ax.axvline(bundled[voice][meter]["b_minus_a"], color=colour, ls=":",
                       label=f"the bundled student, on {voice}'s sentences")
        ax.axvline(target, color="tab:green", ls="--", label="the target of issue #61")
        ax.axvline(0.0, color="black", lw=0.8, label="the teacher (HiFi-GAN V1)")
        ax.set_title(f"{title}: student − teacher (± SE)")
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(ys, [r[0] for r in table])
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8)
    fig.suptitle("Student variants on 40 validation sentences, paired with the teacher", fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(args.out, dpi=110)
    print(args.out)


if __name__ == "__main__":
    main()
