"""``tts train`` (an acoustic model) and ``tts train-vocoder`` (HiFi-GAN): resumable training runs."""

from __future__ import annotations

import argparse

from tts.commands.options import add_device


def declare_acoustic(p: argparse.ArgumentParser) -> None:
    _add_run_options(p, "corpus root with computed features", "experiment folder (checkpoints, logs, plots)")
    p.set_defaults(func=run_acoustic)


def declare_vocoder(p: argparse.ArgumentParser) -> None:
    _add_run_options(p, "corpus root with computed features (any cache with the config's mel settings)",
                     "experiment folder (checkpoints, logs, validation audio)")
    p.set_defaults(func=run_vocoder)


def _add_run_options(p: argparse.ArgumentParser, data_help: str, out_help: str) -> None:
    p.add_argument("--config", required=True)
    p.add_argument("--data", required=True, help=data_help)
    p.add_argument("--out", required=True, help=out_help)
    p.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in --out")
    p.add_argument("--resume-from", metavar="CHECKPOINT", help="continue from this checkpoint")
    add_device(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar (log files only)")
    p.add_argument("overrides", nargs="*", help="key.path=value overrides, e.g. train.max_steps=1000")


def run_acoustic(args: argparse.Namespace) -> None:
    from tts.config import load_config
    from tts.training.trainer import Trainer

    config = load_config(args.config, args.overrides)
    Trainer(config, args.data, args.out, resume=args.resume_from or args.resume, device=args.device,
            progress=not args.no_progress).fit()


def run_vocoder(args: argparse.Namespace) -> None:
    from tts.config import VocoderExperimentConfig, load_config
    from tts.training.vocoder_trainer import VocoderTrainer

    config = load_config(args.config, args.overrides, VocoderExperimentConfig)
    VocoderTrainer(config, args.data, args.out, resume=args.resume_from or args.resume, device=args.device,
                   progress=not args.no_progress).fit()
