"""``tts bench <name>``: speed and quality benchmarks that print JSON; never run in tests. Each
benchmark is a module that owns its arguments and its measurement."""

from __future__ import annotations

import argparse
import json

from tts.commands.bench import (
    attention,
    attention_cost,
    frontend,
    griffin_lim,
    int8,
    long_text,
    model,
    onnx,
    serve,
    streaming,
    vocoder,
)

BENCHMARKS = (griffin_lim, vocoder, model, int8, attention, attention_cost, frontend, long_text, streaming, onnx, serve)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="benchmarks that print JSON (speed, memory, convergence)")
    names = p.add_subparsers(dest="benchmark", required=True, parser_class=type(p))
    for benchmark in BENCHMARKS:
        benchmark.register(names)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    print(json.dumps(args.bench(args), indent=2))
