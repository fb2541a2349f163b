"""The adaptation learning curve (docs/speakers.md): WER and speaker similarity of the held-out voice
against minutes of its speech and CPU minutes of training, from what ``egs/synthetic/speakers.sh``
stages 5 and 6 wrote, beside the unadapted model said as each of its speakers.

    python egs/synthetic/adaptation_report.py --held-out kal --out docs/speakers/adaptation_kal.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tts.errors import TTSError, report_to_user  # noqa: E402


def speaker_figures(summary_file: Path, speaker: str, limit: int | None = None) -> dict:
    """WER, the recordings' WER through the same vocoder and SECS of ``speaker``'s sentences in an
    evaluation: its summary's, or pooled again over its first ``limit`` utterances."""
    if limit is None:
        figures = json.loads(summary_file.read_text())["speakers"][speaker]
        utterances = figures["utterances"]
    else:
        from tts.metrics import error_counts

        rows = json.loads((summary_file.parent / "utterances.json").read_text())[:limit]
        ours = [error_counts(r["text"], r["transcript"]) for r in rows]
        theirs = [error_counts(r["text"], r["reference_transcript"]) for r in rows]
        figures = {"wer": sum(c.word_errors for c in ours) / max(sum(c.words for c in ours), 1),
                   "reference_wer": sum(c.word_errors for c in theirs) / max(sum(c.words for c in theirs), 1),
                   "secs": sum(r["secs"] for r in rows) / len(rows)}
        utterances = len(rows)
    return {"utterances": utterances, "wer": round(figures["wer"], 4), "reference_wer": round(figures["reference_wer"], 4),
            "wer_ratio": round(figures["wer"] / max(figures["reference_wer"], 1e-9), 2),
            "secs": round(figures["secs"], 4)}


def training_minutes(exp: Path, step: int) -> float:
    """Training seconds logged at the validation of ``step`` (one thread), in minutes."""
    for line in (exp / "metrics.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record.get("split") == "val" and record["step"] == step:
            return round(record["train_seconds"] / 60, 1)
    raise TTSError(f"{exp}/metrics.jsonl has no validation at step {step}")


def report(held: str, base: Path, minutes_list: list[int], out: str) -> dict:
    """The unadapted model's figures as each of its speakers, and each adaptation run's."""
    unadapted = {}
    for folder in sorted(base.glob(f"on_{held}_as_*")):
        if (folder / "summary.json").is_file():
            unadapted[folder.name.rsplit("_as_", 1)[1]] = speaker_figures(folder / "summary.json", held)
    runs = {}
    for minutes in minutes_list:
        exp = Path(f"exp/adapt_{held}_{minutes}min")
        if not (exp / "eval" / "summary.json").is_file():
            continue
        best = json.loads((exp / "eval" / "summary.json").read_text())["checkpoint_step"]
        curve = []
        for folder in sorted(exp.glob("eval_*"), key=lambda f: int(f.name.split("_")[1])):
            step = int(folder.name.split("_")[1])
            curve.append({"step": step, "cpu_minutes": training_minutes(exp, step),
                          **speaker_figures(folder / "summary.json", held, None)})
        limit = curve[0]["utterances"] if curve else None
        runs[f"{minutes}min"] = {
            "best_step": best, "cpu_minutes_to_best": training_minutes(exp, best),
            "test": speaker_figures(exp / "eval" / "summary.json", held),
            **({f"test_first_{limit}": speaker_figures(exp / "eval" / "summary.json", held, limit)} if limit else {}),
            "curve": curve}
    return {"held_out": held, "threads": 1, "unadapted_as": unadapted, "adapted": runs,
            "commands": ["bash egs/synthetic/speakers.sh --stage 5 --stop-stage 5 --eval-limit 25 --no-mos",
                         "bash egs/synthetic/speakers.sh --stage 6 --stop-stage 6 --minutes M --no-mos",
                         f"python egs/synthetic/adaptation_report.py --held-out {held} --out {out}"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--held-out", default="kal")
    p.add_argument("--multispeaker", default="exp/multispeaker", help="the unadapted model's folder")
    p.add_argument("--minutes", nargs="+", type=int, default=[5, 10, 30])
    p.add_argument("--out", required=True, help="JSON file")
    args = p.parse_args(argv)
    try:
        result = report(args.held_out, Path(args.multispeaker), args.minutes, args.out)
    except TTSError as exc:
        return report_to_user(exc)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
