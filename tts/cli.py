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

    p = sub.add_parser("bench", help="benchmarks that print JSON")
    p.add_argument("name", choices=["griffin-lim"])
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
