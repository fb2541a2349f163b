"""The speed figures that ``egs/bench/voice_speed.sh`` measured, each beside its target: writes
``OUT/targets.json`` and ``OUT/targets.md`` from the benchmarks' JSON files in OUT, with the CPU,
the commit and the date.

    python egs/bench/voice_speed_targets.py OUT [--vocoder vocos-student]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from tts.devices import cpu_instructions, cpu_model

#: (name, target, what it reads): a figure meets its target when it is at most the target
TARGETS = {
    "rtf_batch1_torch": (0.05, "end-to-end RTF, batch 1, 2 threads, PyTorch (tts bench onnx: bundled voice, text to wav)"),
    "rtf_batch1_onnx": (0.05, "the same on onnxruntime (tts export --format onnx; tts synthesize --engine onnx)"),
    "rtf_batch1_onnx_int8": (0.05, "the same with the decoder step in int8 (tts export --format onnx --int8)"),
    "serve_p95_s": (5.0, "tts bench serve: p95 latency of 50 requests sent at once, the worse round"),
    "first_audio_s": (0.15, "tts bench streaming: time to first audio, streamed"),
}


def read_benchmark(out: Path, name: str) -> dict:
    """The JSON that ``tts bench NAME`` wrote to ``out/NAME.json``; exits 2 with an ``error:`` line when missing."""
    path = out / f"{name}.json"
    if not path.is_file():
        print(f"error: {path} is missing: run bash egs/bench/voice_speed.sh {out}", file=sys.stderr)
        raise SystemExit(2)
    return json.loads(path.read_text())


def figures(out: Path) -> dict[str, float]:
    """The figures with a target, read from the benchmarks' JSON files in ``out``."""
    onnx, serve, streaming = (read_benchmark(out, name) for name in ("onnx", "serve", "streaming"))
    return {"rtf_batch1_torch": onnx["rtf"]["torch"], "rtf_batch1_onnx": onnx["rtf"]["onnx"],
            "rtf_batch1_onnx_int8": onnx["rtf"]["onnx_int8"],
            "serve_p95_s": max(r["latency_p95_s"] for r in serve["rounds"]),
            "first_audio_s": streaming["first_audio_seconds_streamed"]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder of voice_speed.sh's benchmark files")
    parser.add_argument("--vocoder", default="vocos-student", help="the vocoder they were measured with")
    args = parser.parse_args(argv)
    measured = figures(args.out)
    model = read_benchmark(args.out, "model")["synthesis"]
    vocoders = read_benchmark(args.out, "vocoder")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    summary = {
        "command": f"bash egs/bench/voice_speed.sh --vocoder {args.vocoder} {args.out}",
        "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": cpu_model(), "cpu_instructions": cpu_instructions(), "vocoder": args.vocoder,
        "targets": {name: {"figure": measured[name], "target": target, "met": measured[name] <= target, "reads": reads}
                    for name, (target, reads) in TARGETS.items()},
        "bench_model_rtf": {key: model[key]["realtime_factor"] for key in model if key.startswith("fp32_batch")},
        "vocoder_rtf": {name: entry["rtf"] for name, entry in vocoders.items() if isinstance(entry, dict)},
    }
    (args.out / "targets.json").write_text(json.dumps(summary, indent=1) + "\n")
    rows = [f"| {entry['reads']} | {entry['figure']} | ≤ {entry['target']} | {'yes' if entry['met'] else '**no**'} |"
            for entry in summary["targets"].values()]
    lines = [f"{summary['cpu']} ({', '.join(summary['cpu_instructions'])}), commit {commit}, {summary['date']}, "
             f"vocoder {args.vocoder}: `{summary['command']}`", "",
             "| figure | measured | target | met |", "|---|---|---|---|", *rows, "",
             "`tts bench model` (the bundled voice's config, 500 decoder steps) RTF: "
             + ", ".join(f"{k.removeprefix('fp32_')} {v}" for k, v in summary["bench_model_rtf"].items()),
             "Vocoders' RTF (`tts bench vocoder --threads 2`): "
             + ", ".join(f"{k} {v}" for k, v in summary["vocoder_rtf"].items())]
    (args.out / "targets.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
