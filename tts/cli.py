"""The ``tts`` command: thin wrappers over the library, one sub-command each.

User errors (:class:`~tts.errors.TTSError`) print one ``error: ...`` line and exit with 2.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import Callable

import numpy as np

from tts.errors import TTSError

Handler = Callable[[argparse.Namespace], int | None]


def _cmd_g2p(args: argparse.Namespace) -> None:
    from tts.text import Tokenizer

    tokenizer = Tokenizer(mode=args.mode)
    result = tokenizer.encode_verbose(args.text)
    print(f"normalized: {result.normalized}")
    print(f"symbols:    {tokenizer.decode(result.ids)}")
    print(f"ids:        {' '.join(map(str, result.ids))}")


def _cmd_vocode(args: argparse.Namespace) -> None:
    import torch

    from tts.audio import GriffinLim, save_wav
    from tts.config import load_config

    config = load_config(args.config).audio
    try:
        mel = np.load(args.mel)
    except (OSError, ValueError) as exc:
        raise TTSError(f"{args.mel}: not a readable .npy mel file ({exc})") from None
    if mel.ndim != 2 or config.n_mels not in mel.shape:
        raise TTSError(f"{args.mel}: expected a (n_mels={config.n_mels}, T_mel) array, got shape {mel.shape}")
    if mel.shape[0] != config.n_mels:
        mel = mel.T
    wav = GriffinLim(config)(torch.from_numpy(mel.astype(np.float32)), n_iter=args.iters)
    save_wav(args.output, wav.numpy(), config.sample_rate)
    print(f"wrote {args.output} ({wav.shape[-1] / config.sample_rate:.2f} s)")


def _cmd_resynth(args: argparse.Namespace) -> None:
    import torch

    from tts.audio import GriffinLim, MelSpectrogram, load_wav, save_wav
    from tts.config import load_config

    config = load_config(args.config).audio
    wav, _ = load_wav(args.input, config.sample_rate)
    mel = MelSpectrogram(config)(torch.from_numpy(wav))
    out = GriffinLim(config)(mel, n_iter=args.iters)
    save_wav(args.output, out.numpy(), config.sample_rate)
    print(f"wrote {args.output}: {mel.shape[-1]} mel frames → {out.shape[-1] / config.sample_rate:.2f} s")


def _cmd_bench(args: argparse.Namespace) -> None:
    from tts import benchmarks

    if args.name == "griffin-lim":
        result = benchmarks.bench_griffin_lim(seconds=args.seconds, iters=args.iters, threads=args.threads,
                                              wav_path=args.wav)
    elif args.name == "model":
        result = benchmarks.bench_model(threads=args.threads, config_path=args.config)
    else:
        result = benchmarks.bench_attention(kinds=args.kinds, max_steps=args.max_steps, threads=args.threads,
                                            guided=not args.no_guided)
    print(json.dumps(result, indent=2))


def _cmd_features(args: argparse.Namespace) -> None:
    from tts.config import load_config
    from tts.data import compute_features

    config = load_config(args.config, args.overrides)
    out = compute_features(args.data, config, num_workers=args.jobs)
    stats = json.loads((out / "stats.json").read_text())
    summary = {k: v for k, v in stats.items() if not k.endswith("per_bin")}
    print(f"features in {out}")
    print(json.dumps(summary, indent=1))


def _cmd_train(args: argparse.Namespace) -> None:
    from tts.config import load_config
    from tts.training.trainer import Trainer

    config = load_config(args.config, args.overrides)
    Trainer(config, args.data, args.out, resume=args.resume or False, device=args.device,
            progress=not args.no_progress).fit()


def _read_texts(args: argparse.Namespace) -> list[str]:
    if args.text is not None:
        return [args.text]
    from pathlib import Path

    path = Path(args.text_file)
    if not path.is_file():
        raise TTSError(f"text file {path} does not exist")
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    texts = [line.strip() for line in lines if line.strip()]
    if len(texts) < len(lines):
        print(f"skipped {len(lines) - len(texts)} empty line(s) in {path}")
    return texts


def _pair(value: str | None, option: str) -> tuple[int, int] | None:
    if not value:
        return None
    try:
        first, second = (int(v) for v in value.split(","))
    except ValueError:
        raise TTSError(f"{option} wants two integers separated by a comma (e.g. 2,4), got '{value}'") from None
    return first, second


def _cmd_synthesize(args: argparse.Namespace) -> int:
    from tts.synthesis import Synthesizer, write_outputs

    synthesizer = Synthesizer.from_checkpoint(args.checkpoint, device=args.device, int8=args.int8)
    texts, valid = _read_texts(args), []
    for number, text in enumerate(texts, 1):
        try:
            synthesizer.prepare(text)
            valid.append(text)
        except TTSError as exc:
            print(f"skipped line {number}: {exc}")
    if not valid:
        raise TTSError("no line could be turned into tokens")
    results = synthesizer(valid, batch_size=args.batch_size, **_synthesis_options(args))
    summary = write_outputs(results, args.out, synthesizer.step, plots=not args.no_plots,
                            stop_threshold=args.stop_threshold)
    for row in summary["utterances"]:
        flag = f"  [{', '.join(row['failures'])}]" if row["failures"] else ""
        print(f"{row['wav']}: {row['seconds']:.2f} s audio, RTF {row['rtf']:.3f}{flag}")
    print(f"total: {summary['audio_seconds']:.2f} s audio in {summary['compute_seconds']:.2f} s "
          f"(RTF {summary['rtf']:.3f}); {summary['step_limit_hits']} step-limit hit(s)")
    return 0


def _synthesis_options(args: argparse.Namespace) -> dict:
    return {"stop_threshold": args.stop_threshold, "max_decoder_steps": args.max_steps,
            "max_frames_per_token": args.max_frames_per_token,
            "attention_window": _pair(args.attention_window, "--attention-window"),
            "griffin_lim_iters": args.gl_iters}


def _add_synthesis_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stop-threshold", type=float, default=0.5)
    p.add_argument("--max-steps", type=int, default=2000, help="decoder step limit")
    p.add_argument("--max-frames-per-token", type=float, default=20.0, help="step limit relative to text length")
    p.add_argument("--attention-window", help="BACK,AHEAD: keep attention near the previous peak")
    p.add_argument("--gl-iters", type=int, default=None, help="Griffin-Lim iterations")
    p.add_argument("--device", default="cpu")
    p.add_argument("--int8", action="store_true", help="int8 weights for faster CPU inference")


def _cmd_evaluate(args: argparse.Namespace) -> None:
    from tts.analysis.evaluate import evaluate
    from tts.synthesis import Synthesizer

    synthesizer = Synthesizer.from_checkpoint(args.checkpoint, device=args.device, int8=args.int8)
    summary = evaluate(synthesizer, args.data, args.out, split=args.split, limit=args.limit, use_asr=not args.no_asr,
                       batch_size=args.batch_size, **_synthesis_options(args))
    print(json.dumps(summary, indent=1))
    print(f"per-utterance table: {args.out}/utterances.md")


def _cmd_validate(args: argparse.Namespace) -> None:
    from tts.analysis.validate import validate_checkpoint
    from tts.synthesis import Synthesizer

    synthesizer = Synthesizer.from_checkpoint(args.checkpoint, device=args.device)
    print(json.dumps(validate_checkpoint(synthesizer, args.data, args.split, args.limit, args.asr), indent=1))


def _cmd_plot_alignment(args: argparse.Namespace) -> None:
    from tts.analysis.inspect import plot_alignments

    out = plot_alignments(args.checkpoint, args.out, text=args.text, data_root=args.data, utterance=args.utterance,
                          device=args.device, int8=args.int8, head=_pair(args.head, "--head"),
                          all_heads=args.all_heads, **_synthesis_options(args))
    print(f"wrote {out}")


def _cmd_export(args: argparse.Namespace) -> None:
    from pathlib import Path

    from tts.training.checkpoint import export_release

    out = export_release(args.checkpoint, args.out, half=not args.fp32)
    print(f"wrote {out} ({Path(out).stat().st_size / 1e6:.1f} MB)")


def _cmd_report(args: argparse.Namespace) -> None:
    from tts.analysis.report import build_report

    print(f"wrote {build_report(args.exp, args.eval)}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tts", description="Attention-based text-to-speech toolkit")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("g2p", help="print normalized text, phonemes and ids")
    p.add_argument("text")
    p.add_argument("--mode", default="phoneme", choices=["phoneme", "char", "mixed"])
    p.set_defaults(func=_cmd_g2p)

    p = sub.add_parser("vocode", help="mel .npy (n_mels, T) → wav with Griffin-Lim")
    p.add_argument("mel")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--config", help="YAML config for the audio settings (default: built-in)")
    p.add_argument("--iters", type=int, default=None, help="Griffin-Lim iterations")
    p.set_defaults(func=_cmd_vocode)

    p = sub.add_parser("resynth", help="wav → mel → Griffin-Lim → wav")
    p.add_argument("input")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--config")
    p.add_argument("--iters", type=int, default=None)
    p.set_defaults(func=_cmd_resynth)

    p = sub.add_parser("features", help="compute the mel / token-id cache of a corpus")
    p.add_argument("--data", required=True, help="corpus root (metadata.csv, wavs/, splits/)")
    p.add_argument("--config", help="YAML config (audio and text settings)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("overrides", nargs="*", help="key.path=value overrides")
    p.set_defaults(func=_cmd_features)

    p = sub.add_parser("train", help="train a model")
    p.add_argument("--config", required=True)
    p.add_argument("--data", required=True, help="corpus root with computed features")
    p.add_argument("--out", required=True, help="experiment folder (checkpoints, logs, plots)")
    p.add_argument("--resume", nargs="?", const=True, help="continue from the latest (or the given) checkpoint")
    p.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (log files only)")
    p.add_argument("overrides", nargs="*", help="key.path=value overrides, e.g. train.max_steps=1000")
    p.set_defaults(func=_cmd_train)

    p = sub.add_parser("synthesize", help="text → wav (+ mel .npy and alignment plot)")
    p.add_argument("--checkpoint", help="checkpoint file (default: the bundled model)")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--text")
    group.add_argument("--text-file", help="one text per line; empty lines are skipped")
    p.add_argument("--out", required=True, help="output folder, or a .wav path for a single text")
    _add_synthesis_options(p)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--no-plots", action="store_true")
    p.set_defaults(func=_cmd_synthesize)

    p = sub.add_parser("evaluate", help="attention failures, MCD and WER on held-out sentences")
    p.add_argument("--checkpoint", help="checkpoint file (default: the bundled model)")
    p.add_argument("--data", required=True, help="corpus root with reference recordings")
    p.add_argument("--split", default="test")
    p.add_argument("--limit", type=int, help="only the first N utterances of the split")
    p.add_argument("--out", required=True, help="folder for summary.json, utterances.{csv,md}, wavs and plots")
    p.add_argument("--no-asr", action="store_true", help="skip the recognizer (no WER/CER)")
    p.add_argument("--batch-size", type=int, default=8)
    _add_synthesis_options(p)
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("validate", help="teacher-forced losses, attention and text reliance of a checkpoint")
    p.add_argument("--checkpoint", help="checkpoint file (default: the bundled model)")
    p.add_argument("--data", required=True, help="corpus root with computed features")
    p.add_argument("--split", default="val")
    p.add_argument("--limit", type=int, help="only the first N utterances of the split")
    p.add_argument("--asr", type=int, default=0, metavar="N",
                   help="also the WER of N utterances' teacher-forced speech (needs the eval extra)")
    p.add_argument("--device", default="cpu")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("plot-alignment", help="alignment figure of one or several checkpoints")
    p.add_argument("--checkpoint", nargs="+", required=True, help="one or more checkpoints (side by side)")
    p.add_argument("--text", help="free text (inference)")
    p.add_argument("--utterance", help="a validation utterance id (teacher-forced; needs --data)")
    p.add_argument("--data", help="corpus root with features")
    p.add_argument("--out", required=True, help="PNG file")
    p.add_argument("--head", help="LAYER,HEAD of a Transformer-TTS encoder-decoder attention")
    p.add_argument("--all-heads", action="store_true", help="grid of every layer and head (Transformer-TTS)")
    _add_synthesis_options(p)
    p.set_defaults(func=_cmd_plot_alignment)

    p = sub.add_parser("export", help="strip a checkpoint for release (no optimizer, float16 weights)")
    p.add_argument("checkpoint")
    p.add_argument("--out", required=True)
    p.add_argument("--fp32", action="store_true", help="keep float32 weights")
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser("report", help="static HTML report of an experiment folder")
    p.add_argument("exp")
    p.add_argument("--eval", help="evaluation folder (default: <exp>/eval)")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("bench", help="benchmarks that print JSON")
    p.add_argument("name", choices=["griffin-lim", "model", "attention"])
    p.add_argument("--max-steps", type=int, default=400, help="attention: training steps per mechanism")
    p.add_argument("--kinds", nargs="+", help="attention: mechanisms to compare (default: all registered)")
    p.add_argument("--no-guided", action="store_true", help="attention: train without the guided attention loss")
    p.add_argument("--config", help="model: its config, Tacotron2 or Transformer-TTS (default: configs/tacotron2.yaml)")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--iters", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--wav", help="speech clip to use (default: espeak-ng)")
    p.set_defaults(func=_cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except TTSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
