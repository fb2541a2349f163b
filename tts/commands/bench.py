"""``tts bench <name>``: speed and quality benchmarks that print JSON; never run in tests. Each
benchmark's arguments are declared here and its measurement lives in :mod:`tts.benchmarks`;
only the chosen benchmark's module is imported."""

from __future__ import annotations

import argparse
import importlib
import json
from typing import Callable

from tts.commands.options import (
    add_checkpoint,
    add_device,
    add_threads,
    add_vocoder,
    non_negative_float,
    positive_float,
    positive_int,
)
from tts.commands.table import Command, Group


def declare(p: argparse.ArgumentParser) -> Group:
    p.set_defaults(func=run)
    return BENCHMARKS


def run(args: argparse.Namespace) -> None:
    print(json.dumps(args.bench(args), indent=2))


def calling(target: str, *names: str, **keywords: str) -> Callable[[argparse.Namespace], dict]:
    """A benchmark's run: ``"module:function"`` (imported when it runs) called with the parsed
    arguments ``names`` in order and ``keywords`` (parameter → argument name)."""
    def bench(args: argparse.Namespace) -> dict:
        module, _, function = target.partition(":")
        measure = getattr(importlib.import_module(module), function)
        return measure(*(getattr(args, n) for n in names), **{k: getattr(args, v) for k, v in keywords.items()})

    return bench


def _clip_options(p: argparse.ArgumentParser, iterations_help: str) -> None:
    """The options of a benchmark on a speech clip: its length, Griffin-Lim's iterations, the clip, threads, device."""
    p.add_argument("--seconds", type=positive_float, default=10.0, help="clip length")
    p.add_argument("--iters", type=positive_int, default=64, help=iterations_help)
    p.add_argument("--wav", help="speech clip to use (default: espeak-ng)")
    add_threads(p)
    add_device(p, "cpu", threads=False)


def griffin_lim(p: argparse.ArgumentParser) -> None:
    _clip_options(p, "our iterations")

    p.set_defaults(bench=calling("tts.benchmarks.griffin_lim:bench_griffin_lim", "seconds", "iters", "threads",
                                 "device", "wav"))


def vocoder(p: argparse.ArgumentParser) -> None:
    _clip_options(p, "Griffin-Lim iterations")

    p.set_defaults(bench=calling("tts.benchmarks.vocoder:bench_vocoder", "seconds", "threads", "iters", "device",
                                 wav_path="wav"))


def model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="its config, Tacotron2 or Transformer-TTS (default: configs/tacotron2.yaml)")
    p.add_argument("--train-steps", type=positive_int, default=5, help="timed training steps (median)")
    p.add_argument("--inference-steps", type=positive_int, default=500,
                   help="decoder steps each timed inference is forced to")
    reference = p.add_mutually_exclusive_group()
    reference.add_argument("--reference-command", help="a timing harness to run first, side by side, that prints "
                                                       "one JSON line (see tts/benchmarks/model.py)")
    reference.add_argument("--reference-json", help="that harness's JSON, stored from an earlier run")
    p.add_argument("--precisions", nargs="+", choices=("fp32", "bf16", "int8"),
                   help="default fp32 int8 on the CPU, fp32 bf16 on CUDA; bf16 also trains under autocast")
    p.add_argument("--batch-sizes", nargs="+", type=positive_int,
                   help="inference and synthesis batch sizes (default 1 16, and 64 on CUDA)")
    add_vocoder(p)
    p.add_argument("--iters", type=positive_int, default=64, help="Griffin-Lim iterations, with --vocoder griffin-lim")
    p.add_argument("--speakers", type=int, default=0, metavar="N",
                   help="give the model a table of N speakers (what conditioning costs; 0: the config's)")
    add_threads(p)
    add_device(p, "cpu", threads=False)

    def bench(a: argparse.Namespace) -> dict:
        from tts.benchmarks.model import bench_model, run_reference

        return bench_model(a.threads, a.config, a.train_steps, a.inference_steps,
                           reference=run_reference(a.reference_command, a.reference_json), device=a.device,
                           precisions=a.precisions, batch_sizes=a.batch_sizes, vocoder=a.vocoder,
                           griffin_lim_iters=a.iters,
                           speakers=a.speakers)
    p.set_defaults(bench=bench)


def _against_fp32(p: argparse.ArgumentParser, precision: str) -> None:
    """The options of a benchmark of one low precision against float32 decoding."""
    p.add_argument("--checkpoint", help="acoustic model checkpoint (default: the bundled voice)")
    p.add_argument("--batch-sizes", nargs="+", type=positive_int, default=[1, 16], help="batch sizes")
    p.add_argument("--steps", type=positive_int, default=300, help="decoder steps each speed timing is forced to")
    add_threads(p)

    p.set_defaults(precision=precision, bench=calling("tts.benchmarks.precision:bench_precision", "precision",
                                                      "checkpoint", "batch_sizes", "steps", "threads"))


def int8(p: argparse.ArgumentParser) -> None:
    _against_fp32(p, "int8")


def bf16(p: argparse.ArgumentParser) -> None:
    _against_fp32(p, "bf16")


def attention(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kinds", nargs="+", help="mechanisms to compare (default: all registered)")
    p.add_argument("--max-steps", type=positive_int, default=400, help="training steps per mechanism")
    p.add_argument("--no-guided", action="store_true", help="train without the guided attention loss")
    add_threads(p)

    def bench(a: argparse.Namespace) -> dict:
        from tts.benchmarks.attention import bench_attention

        return bench_attention(a.kinds, a.max_steps, threads=a.threads, guided=not a.no_guided)
    p.set_defaults(bench=bench)


def attention_cost(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="a Tacotron2 config (default: configs/attention_study.yaml)")
    p.add_argument("--kinds", nargs="+", help="mechanisms (default: all registered)")
    p.add_argument("--rounds", type=positive_int, default=3, help="round-robin rounds (the median is reported)")
    add_threads(p)

    p.set_defaults(bench=calling("tts.benchmarks.attention_cost:bench_attention_cost", "config", "kinds", "rounds",
                                 "threads"))


def frontend(p: argparse.ArgumentParser) -> None:
    p.add_argument("--text-file", help="transcripts, one per line or id<TAB>...<TAB>text "
                                       "(default: LJSpeech's, recipes/ljspeech/nvidia_filelists.tsv.gz)")

    p.set_defaults(bench=calling("tts.benchmarks.frontend:bench_frontend", "text_file"))


def cli(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", type=positive_int, default=5, help="cold starts of each command (the median is reported)")

    p.set_defaults(bench=calling("tts.benchmarks.cli:bench_cli", "runs"))


def long_text(p: argparse.ArgumentParser) -> None:
    p.add_argument("--text-file", required=True, help="the paragraph (one text; line breaks are spaces)")
    add_checkpoint(p)
    add_vocoder(p)
    add_threads(p)

    p.set_defaults(bench=calling("tts.benchmarks.long_text:bench_long_text", "text_file", "checkpoint", "vocoder",
                                 "threads"))


def streaming(p: argparse.ArgumentParser) -> None:
    p.add_argument("--text", help="the sentence (default: 20 words)")
    p.add_argument("--runs", type=positive_int, default=3, help="timed runs (median), after one warm-up")
    add_checkpoint(p)
    add_vocoder(p)
    add_threads(p)

    def bench(a: argparse.Namespace) -> dict:
        from tts.benchmarks.streaming import SENTENCE, bench_streaming

        return bench_streaming(a.text or SENTENCE, a.checkpoint, a.vocoder, a.threads, a.runs)
    p.set_defaults(bench=bench)


def onnx(p: argparse.ArgumentParser) -> None:
    add_checkpoint(p)
    add_vocoder(p)
    p.add_argument("--steps", type=positive_int, default=200, help="decoder steps timed per run")
    p.add_argument("--runs", type=positive_int, default=3, help="timed runs of each engine, alternating (median)")
    p.add_argument("--int8", action="store_true", help="an export with an int8 decoder step too (tts export --int8)")
    add_threads(p)

    p.set_defaults(bench=calling("tts.benchmarks.onnx:bench_onnx", "checkpoint", "vocoder", "steps", "runs", "threads",
                                 "int8"))


def serve(p: argparse.ArgumentParser) -> None:
    add_checkpoint(p)
    p.add_argument("--vocoder", help="the service's vocoder (default: the default vocoder)")
    p.add_argument("--requests", type=positive_int, default=50, help="requests per round (default 50)")
    p.add_argument("--rounds", type=positive_int, default=2, help="rounds of --requests (memory after each)")
    p.add_argument("--spread", type=non_negative_float, default=0.0, metavar="SECONDS",
                   help="send a round's requests evenly over this many seconds (default 0: all at once)")

    p.set_defaults(bench=calling("tts.benchmarks.serve:bench_serve", "checkpoint", "vocoder", "requests", "rounds",
                                 "spread"))


def contention(p: argparse.ArgumentParser) -> None:
    add_checkpoint(p)
    add_vocoder(p)
    p.add_argument("--steps", type=positive_int, default=200, help="decoder steps each timing is forced to")
    p.add_argument("--runs", type=positive_int, default=2, help="timed runs of each measure (median)")

    p.set_defaults(bench=calling("tts.benchmarks.contention:bench_contention", "checkpoint", "vocoder", "steps", "runs"))


BENCHMARKS = Group("benchmark", {
    "griffin-lim": Command(f"{__name__}:griffin_lim", "speed and spectral convergence against librosa's Griffin-Lim"),
    "vocoder": Command(f"{__name__}:vocoder", "real-time factor of Griffin-Lim and of each HiFi-GAN and Vocos config"),
    "model": Command(f"{__name__}:model", "training and inference speed of an acoustic model config"),
    "int8": Command(f"{__name__}:int8", "int8 vs float32 decoding on this CPU: kernels, speed and mel error"),
    "bf16": Command(f"{__name__}:bf16", "bfloat16 autocast vs float32 decoding on this CPU: speed and mel error"),
    "attention": Command(f"{__name__}:attention",
                         "toy: steps each attention mechanism needs to align on two utterances"),
    "attention-cost": Command(f"{__name__}:attention_cost", "seconds per update and ms per decoder step of every "
                                                            "attention mechanism in one config, side by side"),
    "frontend": Command(f"{__name__}:frontend", "frontend speed and neural-G2P words on a transcript list"),
    "cli": Command(f"{__name__}:cli", "cold-start wall and CPU time of tts --help, tts g2p and tts synthesize"),
    "long-text": Command(f"{__name__}:long_text", "time and peak memory of synthesizing one long paragraph"),
    "streaming": Command(f"{__name__}:streaming", "time to first audio, streamed against whole, for one sentence"),
    "onnx": Command(f"{__name__}:onnx", "onnxruntime against PyTorch: decoder step and whole synthesis"),
    "serve": Command(f"{__name__}:serve", "tts serve under concurrent load: requests/s, p50/p95 latency, memory"),
    "contention": Command(f"{__name__}:contention", "synthesis and training with other work on the CPU: all cores' "
                                                    "threads against one, and the thread count chosen by default"),
})
