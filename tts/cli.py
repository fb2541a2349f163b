"""The ``tts`` command: thin wrappers over the library, one sub-command each.

User errors (:class:`~tts.errors.TTSError`) print one ``error: ...`` line and exit with 2; training
stopped by SIGINT / SIGTERM saves a checkpoint and exits with 130 / 143.
Inference flags (``--stop-threshold``, ``--max-steps``, ...) override the checkpoint's
``inference`` settings; left out, the checkpoint's own values apply.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

import numpy as np

from tts.errors import Interrupted, TTSError


def _wav_output(path: str) -> Path:
    """A wav path to write, checked before any work."""
    out = Path(path)
    if out.suffix.lower() != ".wav" or out.is_dir():
        raise TTSError(f"-o {out}: give a file name ending in .wav")
    return out


def _cmd_g2p(args: argparse.Namespace) -> None:
    from tts.config import TextConfig
    from tts.text import Tokenizer

    tokenizer = Tokenizer.for_config(TextConfig(mode=args.mode, lexicon=args.lexicon or ""))
    result = tokenizer.encode_verbose(args.text)
    print(f"normalized: {result.normalized}")
    print(f"symbols:    {tokenizer.decode(result.ids)}")
    print(f"ids:        {' '.join(map(str, result.ids))}")


def _standalone_vocoder(args: argparse.Namespace):
    """``--vocoder`` for a mel or a recording without an acoustic model: Griffin-Lim with
    ``--config``'s audio settings (``--iters`` iterations), or a neural vocoder checkpoint (whose
    own audio settings apply; with ``--config`` they must agree)."""
    from tts import checkpoint
    from tts.config import load_config, with_overrides
    from tts.vocoders import GriffinLim

    if args.vocoder not in (None, "griffin-lim"):
        if args.iters is not None:
            raise TTSError("--iters sets Griffin-Lim's iterations; it does not apply to a neural --vocoder")
        vocoder = checkpoint.load_vocoder(args.vocoder)
        if args.config:
            vocoder.check_compatible(load_config(args.config).audio, f"--config {args.config}")
        return vocoder
    config = load_config(args.config)
    settings = with_overrides(config.inference, "inference", **({"griffin_lim_iters": args.iters}
                                                                 if args.iters is not None else {}))
    return GriffinLim(config.audio, settings.griffin_lim_iters)


def _cmd_vocode(args: argparse.Namespace) -> None:
    import torch

    from tts.audio import save_wav

    output = _wav_output(args.output)
    vocoder = _standalone_vocoder(args)
    n_mels = vocoder.audio.n_mels
    try:
        mel = np.load(args.mel, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise TTSError(f"{args.mel}: not a readable .npy mel file ({str(exc).splitlines()[0][:120]})") from None
    if not np.issubdtype(mel.dtype, np.floating) and not np.issubdtype(mel.dtype, np.integer):
        raise TTSError(f"{args.mel}: holds {mel.dtype} values, not numbers")
    if mel.ndim != 2 or n_mels not in mel.shape:
        raise TTSError(f"{args.mel}: expected a (n_mels={n_mels}, T_mel) array, got shape {mel.shape}")
    if mel.shape[0] != n_mels:
        mel = mel.T
    wav, lengths = vocoder(torch.from_numpy(mel.astype(np.float32))[None])
    save_wav(output, wav[0].numpy(), vocoder.audio.sample_rate)
    print(f"wrote {output} ({int(lengths[0]) / vocoder.audio.sample_rate:.2f} s)")


def _cmd_resynth(args: argparse.Namespace) -> None:
    import torch

    from tts.audio import MelSpectrogram, load_wav, save_wav

    output = _wav_output(args.output)
    vocoder = _standalone_vocoder(args)
    audio = vocoder.audio
    wav, _ = load_wav(args.input, audio.sample_rate)
    if len(wav) < audio.win_length:
        raise TTSError(f"{args.input}: {len(wav)} samples is shorter than one analysis window "
                       f"({audio.win_length} samples at {audio.sample_rate} Hz)")
    mel = MelSpectrogram(audio)(torch.from_numpy(wav))
    out, lengths = vocoder(mel[None])
    save_wav(output, out[0].numpy(), audio.sample_rate)
    print(f"wrote {output}: {mel.shape[-1]} mel frames → {int(lengths[0]) / audio.sample_rate:.2f} s")


def _cmd_bench(args: argparse.Namespace) -> None:
    from tts.commands import bench

    if args.name == "griffin-lim":
        result = bench.bench_griffin_lim(seconds=args.seconds, iters=args.iters, threads=args.threads,
                                         device=_device(args), wav_path=args.wav)
    elif args.name == "model":
        result = bench.bench_model(threads=args.threads, config_path=args.config, train_steps=args.train_steps,
                                   inference_steps=args.inference_steps, reference_command=args.reference_command,
                                   reference_json=args.reference_json, device=_device(args),
                                   precisions=args.precisions, batch_sizes=args.batch_sizes, griffin_lim_iters=args.iters)
    elif args.name == "frontend":
        result = bench.bench_frontend(args.text_file)
    elif args.name == "vocoder":
        result = bench.bench_vocoder(seconds=args.seconds, threads=args.threads, iters=args.iters, device=_device(args),
                                     wav_path=args.wav)
    else:
        result = bench.bench_attention(kinds=args.kinds, max_steps=args.max_steps, threads=args.threads,
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
    resume: bool | str = args.resume_from or args.resume
    Trainer(config, args.data, args.out, resume=resume, device=args.device, progress=not args.no_progress).fit()


def _cmd_train_vocoder(args: argparse.Namespace) -> None:
    from tts.config import VocoderExperimentConfig, load_config
    from tts.training.vocoder_trainer import VocoderTrainer

    config = load_config(args.config, args.overrides, VocoderExperimentConfig)
    resume: bool | str = args.resume_from or args.resume
    VocoderTrainer(config, args.data, args.out, resume=resume, device=args.device,
                   progress=not args.no_progress).fit()


def _read_texts(args: argparse.Namespace) -> list[str]:
    if args.text is not None:
        return [args.text]
    if args.split is not None:
        from tts.data import read_metadata, read_split

        if args.data is None:
            raise TTSError("--split needs --data (the corpus root)")
        if args.limit is not None and args.limit < 1:
            raise TTSError(f"--limit must be at least 1, got {args.limit}")
        texts = {u.id: u.normalized for u in read_metadata(args.data)}
        return [texts[i] for i in read_split(args.data, args.split)[: args.limit] if i in texts]
    path = Path(args.text_file)
    if path.is_dir():
        raise TTSError(f"text file {path} is a folder: give a file with one text per line")
    if not path.is_file():
        raise TTSError(f"text file {path} does not exist")
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    texts = [line.strip() for line in lines if line.strip()]
    if not texts:
        raise TTSError(f"text file {path} has no text (only empty lines)")
    if len(texts) < len(lines):
        print(f"skipped {len(lines) - len(texts)} empty line(s) in {path}")
    return texts


def _pair(value: str | None, option: str) -> list[int] | None:
    if not value:
        return None
    try:
        first, second = (int(v) for v in value.split(","))
    except ValueError:
        raise TTSError(f"{option} wants two integers separated by a comma (e.g. 2,4), got '{value}'") from None
    return [first, second]


def _settings(items: list[str] | None) -> dict:
    """``inference.KEY=VALUE`` items as ``{KEY: value}``; any other key is an error."""
    from tts.config import apply_overrides

    given = {}
    for item in items or []:
        if not item.startswith("inference."):
            raise TTSError(f"'{item}': only inference.* settings can change after training (e.g. "
                           f"inference.max_decoder_steps=1000)")
        given.update(apply_overrides({}, [item])["inference"])
    return given


def _inference_overrides(args: argparse.Namespace) -> dict:
    """The inference settings the user gave, as flags or as ``inference.KEY=VALUE`` (the
    checkpoint's settings apply to the others)."""
    given = _settings(getattr(args, "settings", None))
    flags = {"stop_threshold": args.stop_threshold, "max_decoder_steps": args.max_steps,
             "max_frames_per_token": args.max_frames_per_token,
             "attention_window": _pair(args.attention_window, "--attention-window"),
             "griffin_lim_iters": args.gl_iters, "batch_size": getattr(args, "batch_size", None)}
    given.update({key: value for key, value in flags.items() if value is not None})
    return given


def _device(args: argparse.Namespace) -> str:
    """``--device`` checked against this machine, or the GPU when there is one (the CPU for --int8)."""
    from tts.devices import resolve_device

    return resolve_device(args.device, getattr(args, "int8", False))


def _synthesizer(args: argparse.Namespace):
    """The checkpoint's synthesizer with the inference flags checked against its settings."""
    from tts.config import with_overrides
    from tts.synthesis import Synthesizer

    overrides = _inference_overrides(args)
    vocoder = getattr(args, "vocoder", None)
    synthesizer = Synthesizer.from_checkpoint(args.checkpoint, device=_device(args), int8=args.int8,
                                              lexicon=args.lexicon, vocoder=vocoder[0] if isinstance(vocoder, list)
                                              else vocoder)
    with_overrides(synthesizer.settings, "inference", **overrides)  # bad values fail before any work
    return synthesizer, overrides


def _cmd_synthesize(args: argparse.Namespace) -> int:
    from tts.config import with_overrides
    from tts.synthesis import output_names, vocoder_from_option, vocoder_names, write_outputs

    texts = _read_texts(args)
    names = vocoder_names(args.vocoder or ["griffin-lim"])
    output_names(args.out, 1 if args.text is not None else len(texts))
    synthesizer, overrides = _synthesizer(args)
    if len(texts) == 1:
        synthesizer.prepare(texts[0])  # a single text's problem is the error itself
    valid = []
    for number, text in enumerate(texts, 1):
        try:
            synthesizer.prepare(text)
            valid.append(text)
        except TTSError as exc:
            print(f"skipped line {number}: {exc}")
    if not valid:
        raise TTSError(f"no line could be turned into tokens (all {len(texts)} skipped)")
    output_names(args.out, len(valid))
    others = {name: vocoder_from_option(option, synthesizer.config.audio, synthesizer.device)
              for name, option in zip(names[1:], (args.vocoder or [])[1:])}
    results = synthesizer(valid, **overrides)
    threshold = overrides.get("stop_threshold", synthesizer.settings.stop_threshold)
    settings = with_overrides(synthesizer.settings, "inference", **overrides)
    compare = {name: (lambda mel, v=vocoder: synthesizer.vocode(mel, settings, v)) for name, vocoder in others.items()}
    summary = write_outputs(results, args.out, synthesizer.step, plots=not args.no_plots, stop_threshold=threshold,
                            compare=compare, vocoder_name=names[0])
    for row in summary["utterances"]:
        flag = f"  [{', '.join(row['failures'])}]" if row["failures"] else ""
        print(f"{row['wav']}: {row['seconds']:.2f} s audio, RTF {row['rtf']:.3f}{flag}")
    print(f"total: {summary['audio_seconds']:.2f} s audio in {summary['compute_seconds']:.2f} s "
          f"(RTF {summary['rtf']:.3f}); {summary['step_limit_hits']} step-limit hit(s)")
    return 0


def _add_inference_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stop-threshold", type=float, help="stop probability that ends an item (default: checkpoint's)")
    p.add_argument("--max-steps", type=int, help="decoder step limit")
    p.add_argument("--max-frames-per-token", type=float, help="step limit relative to text length")
    p.add_argument("--attention-window", help="BACK,AHEAD: keep attention near the previous peak")
    p.add_argument("--gl-iters", type=int, help="Griffin-Lim iterations")
    p.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    p.add_argument("--int8", action="store_true", help="int8 weights for faster CPU inference")
    p.add_argument("--lexicon", help="pronunciation lexicon (WORD PH ON EMES per line), before the dictionary")
    p.add_argument("settings", nargs="*", metavar="inference.KEY=VALUE",
                   help="inference settings, e.g. inference.stop_after_last_token=true")


def _add_vocoder_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vocoder", metavar="griffin-lim|PATH",
                   help="griffin-lim (default) or a vocoder checkpoint written by 'tts train-vocoder'")


def _add_training_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in --out")
    p.add_argument("--resume-from", metavar="CHECKPOINT", help="continue from this checkpoint")
    p.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (log files only)")
    p.add_argument("overrides", nargs="*", help="key.path=value overrides, e.g. train.max_steps=1000")


def _add_experiment_options(p: argparse.ArgumentParser, data_help: str, out_help: str) -> None:
    p.add_argument("--config", required=True)
    p.add_argument("--data", required=True, help=data_help)
    p.add_argument("--out", required=True, help=out_help)


def _add_split_options(p: argparse.ArgumentParser, split: str, data_help: str, data_required: bool = True,
                       checkpoint: bool = True) -> None:
    """A run over (the first N utterances of) a corpus split (with ``checkpoint``: of an acoustic model)."""
    if checkpoint:
        p.add_argument("--checkpoint", help="checkpoint file (default: the bundled model)")
    p.add_argument("--data", required=data_required, help=data_help)
    p.add_argument("--split", default=split)
    p.add_argument("--limit", type=int, help="only the first N utterances of the split")


def _cmd_evaluate(args: argparse.Namespace) -> None:
    from tts.commands.evaluate import evaluate
    from tts.commands.robustness import load_suite, run_suite

    if args.limit is not None and args.limit < 1:
        raise TTSError(f"--limit must be at least 1, got {args.limit}")
    if args.suite is None and args.data is None:
        raise TTSError("give --data (a corpus to evaluate on) or --suite robustness")
    if args.suite is not None:
        load_suite(args.suite)  # an unknown suite fails before the model loads
    synthesizer, overrides = _synthesizer(args)
    if args.suite is not None:
        summary = run_suite(synthesizer, args.out, args.suite, args.data, use_asr=not args.no_asr,
                            use_mos=not args.no_mos, **overrides)
        print(Path(args.out, "categories.md").read_text())
    else:
        summary = evaluate(synthesizer, args.data, args.out, split=args.split, limit=args.limit,
                           use_asr=not args.no_asr, use_mos=not args.no_mos, **overrides)
        print(json.dumps(summary, indent=1))
    print(f"per-utterance table: {args.out}/utterances.md")


def _cmd_evaluate_vocoder(args: argparse.Namespace) -> None:
    from tts.commands.evaluate_vocoder import evaluate_vocoders
    from tts.config import load_config

    if args.limit is not None and args.limit < 1:
        raise TTSError(f"--limit must be at least 1, got {args.limit}")
    audio = load_config(args.config).audio if args.config else None
    summary = evaluate_vocoders(args.vocoder, args.data, args.out, split=args.split, limit=args.limit, audio=audio,
                                use_asr=not args.no_asr, use_mos=not args.no_mos, device=_device(args))
    print(json.dumps(summary, indent=1))
    print(f"per-utterance table: {args.out}/utterances.md")


def _cmd_validate(args: argparse.Namespace) -> None:
    from tts import checkpoint
    from tts.commands.validate import validate_checkpoint

    device = _device(args)
    loaded = checkpoint.load(args.checkpoint, device)
    print(json.dumps(validate_checkpoint(loaded, args.data, args.split, args.limit, args.asr, device=device),
                     indent=1))


def _cmd_plot_alignment(args: argparse.Namespace) -> None:
    from tts.commands.plot_alignment import plot_alignments

    out = plot_alignments(args.checkpoint, args.out, text=args.text, data_root=args.data, utterance=args.utterance,
                          device=_device(args), int8=args.int8, head=_pair(args.head, "--head"),
                          all_heads=args.all_heads, **_inference_overrides(args))
    print(f"wrote {out}")


def _cmd_export(args: argparse.Namespace) -> None:
    from tts import checkpoint

    out = checkpoint.export(args.checkpoint, args.out, half=not args.fp32, inference=_settings(args.settings))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")


def _cmd_study(args: argparse.Namespace) -> None:
    from tts.commands.study import Variant, attention_variants, run_study
    from tts.config import load_config

    if (args.kinds is None) == (args.variant is None):
        raise TTSError("give the variants to compare: --kinds K1 K2 ... or --variant NAME[:key=value,...] ...")
    if args.eval_limit < 1:
        raise TTSError(f"--eval-limit must be at least 1, got {args.eval_limit}")
    variants = ([Variant.parse(v) for v in args.variant] if args.variant
                else attention_variants(args.kinds, load_config(args.config).model.name))
    result = run_study(args.config, args.data, args.out, variants, args.steps, args.eval_limit, not args.no_suite,
                       not args.no_asr, not args.no_mos, _device(args))
    print(Path(args.out, "study.md").read_text())
    print(f"{len(result['rows'])} variants: {args.out}/study.json")


def _cmd_report(args: argparse.Namespace) -> None:
    from tts.commands.report import build_report

    print(f"wrote {build_report(args.exp, args.eval)}")


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


class _Parser(argparse.ArgumentParser):
    """Usage mistakes are one ``error:`` line (what is wrong and where the help is), exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"error: {message} (see '{self.prog} --help')", file=sys.stderr)
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tts", description="Attention-based text-to-speech toolkit")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("g2p", help="print normalized text, phonemes and ids")
    p.add_argument("text")
    p.add_argument("--mode", default="phoneme", choices=["phoneme", "char", "mixed"])
    p.add_argument("--lexicon", help="pronunciation lexicon (WORD PH ON EMES per line), before the dictionary")
    p.set_defaults(func=_cmd_g2p)

    p = sub.add_parser("vocode", help="mel .npy (n_mels, T) → wav with Griffin-Lim or a neural vocoder")
    p.add_argument("mel")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--config", help="YAML config for the audio settings (default: built-in)")
    p.add_argument("--iters", type=int, default=None, help="Griffin-Lim iterations")
    _add_vocoder_option(p)
    p.set_defaults(func=_cmd_vocode)

    p = sub.add_parser("resynth", help="wav → mel → vocoder → wav")
    p.add_argument("input")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--config")
    p.add_argument("--iters", type=int, default=None)
    _add_vocoder_option(p)
    p.set_defaults(func=_cmd_resynth)

    p = sub.add_parser("features", help="compute the mel / token-id cache of a corpus")
    p.add_argument("--data", required=True, help="corpus root (metadata.csv, wavs/, splits/)")
    p.add_argument("--config", help="YAML config (audio and text settings)")
    p.add_argument("--jobs", type=_positive_int, default=min(len(os.sched_getaffinity(0)), 8),
                   help="worker processes (default: the usable cores, at most 8; each takes ~0.5 GB)")
    p.add_argument("overrides", nargs="*", help="key.path=value overrides")
    p.set_defaults(func=_cmd_features)

    p = sub.add_parser("train", help="train an acoustic model")
    _add_experiment_options(p, "corpus root with computed features", "experiment folder (checkpoints, logs, plots)")
    _add_training_options(p)
    p.set_defaults(func=_cmd_train)

    p = sub.add_parser("train-vocoder", help="train a neural vocoder (HiFi-GAN) on a corpus's mels and audio")
    _add_experiment_options(p, "corpus root with computed features (any cache with the config's mel settings)",
                            "experiment folder (checkpoints, logs, validation audio)")
    _add_training_options(p)
    p.set_defaults(func=_cmd_train_vocoder)

    p = sub.add_parser("synthesize", help="text → wav (+ mel .npy and alignment plot)")
    p.add_argument("--checkpoint", help="checkpoint file (default: the bundled model)")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--text")
    group.add_argument("--text-file", help="one text per line; empty lines are skipped")
    group.add_argument("--split", help="the normalized texts of a corpus split (with --data, --limit)")
    p.add_argument("--data", help="corpus root, for --split")
    p.add_argument("--limit", type=int, help="with --split: only its first N utterances")
    p.add_argument("--out", required=True, help="output folder, or a .wav path for a single text")
    _add_inference_options(p)
    p.add_argument("--batch-size", type=_positive_int)
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--vocoder", nargs="+", metavar="griffin-lim|PATH",
                   help="griffin-lim (default) or a vocoder checkpoint; several: each text in each version, "
                        "played side by side in index.html (the first is <name>.wav)")
    p.set_defaults(func=_cmd_synthesize)

    p = sub.add_parser("evaluate", help="attention failures, MCD and WER on held-out sentences")
    _add_split_options(p, "test", "corpus root with reference recordings (with --suite: the training corpus, "
                                  "whose longest utterance sets the long category)", data_required=False)
    p.add_argument("--suite", help="a shipped suite instead of a corpus split: robustness")
    p.add_argument("--out", required=True, help="folder for summary.json, utterances.{csv,md}, wavs and plots")
    p.add_argument("--no-asr", action="store_true", help="skip the recognizer (no WER/CER)")
    p.add_argument("--no-mos", action="store_true", help="skip the quality meters (no DNSMOS, PESQ, STOI)")
    p.add_argument("--batch-size", type=_positive_int)
    _add_inference_options(p)
    _add_vocoder_option(p)
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("evaluate-vocoder", help="recordings resynthesized through vocoders, side by side: "
                                                "DNSMOS, PESQ, STOI, MCD, WER")
    _add_split_options(p, "test", "corpus root with recordings", checkpoint=False)
    p.add_argument("--vocoder", nargs="+", required=True, metavar="VOCODER",
                   help="griffin-lim and/or vocoder checkpoints (compared side by side)")
    p.add_argument("--config", help="audio settings for Griffin-Lim alone (default: built-in; a neural "
                                    "vocoder brings its own)")
    p.add_argument("--out", required=True, help="folder for summary.json, utterances.{csv,md} and the wavs")
    p.add_argument("--no-asr", action="store_true", help="skip the recognizer (no WER/CER)")
    p.add_argument("--no-mos", action="store_true", help="skip DNSMOS")
    p.add_argument("--device", help="cpu, cuda ... (default: cuda when available)")
    p.set_defaults(func=_cmd_evaluate_vocoder)

    p = sub.add_parser("validate", help="teacher-forced losses, attention and text reliance of a checkpoint")
    _add_split_options(p, "val", "corpus root with computed features")
    p.add_argument("--asr", type=int, default=0, metavar="N",
                   help="also the WER of N utterances' teacher-forced speech (needs the eval extra)")
    p.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("plot-alignment", help="alignment figure of one or several checkpoints")
    p.add_argument("--checkpoint", nargs="+", required=True, help="one or more checkpoints (side by side)")
    p.add_argument("--text", help="free text (inference)")
    p.add_argument("--utterance", help="a validation utterance id (teacher-forced; needs --data)")
    p.add_argument("--data", help="corpus root with features")
    p.add_argument("--out", required=True, help="PNG file")
    p.add_argument("--head", help="LAYER,HEAD of a Transformer-TTS encoder-decoder attention")
    p.add_argument("--all-heads", action="store_true", help="grid of every layer and head (Transformer-TTS)")
    _add_inference_options(p)
    p.set_defaults(func=_cmd_plot_alignment)

    p = sub.add_parser("export", help="strip a checkpoint for release (no optimizer, float16 weights)")
    p.add_argument("checkpoint")
    p.add_argument("--out", required=True, help="the release file (.pt)")
    p.add_argument("--fp32", action="store_true", help="keep float32 weights")
    p.add_argument("settings", nargs="*", metavar="inference.KEY=VALUE",
                   help="inference settings the release is stored with, e.g. inference.attention_window=[1,2]")
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser("study", help="train one model per variant (e.g. per attention mechanism) and compare them")
    _add_experiment_options(p, "corpus root", "study folder (one experiment per variant, study.json, study.md)")
    p.add_argument("--steps", type=_positive_int, required=True, help="training steps of every variant")
    p.add_argument("--kinds", nargs="+", help="one variant per attention mechanism")
    p.add_argument("--variant", nargs="+", help="NAME[:key=value,key=value] (config overrides)")
    p.add_argument("--eval-limit", type=int, default=100, help="test utterances to evaluate")
    p.add_argument("--no-suite", action="store_true", help="skip the robustness suite")
    p.add_argument("--no-asr", action="store_true")
    p.add_argument("--no-mos", action="store_true")
    p.add_argument("--device", help="cpu, cuda ... (default: cuda when available)")
    p.set_defaults(func=_cmd_study)

    p = sub.add_parser("report", help="static HTML report of an experiment folder")
    p.add_argument("exp")
    p.add_argument("--eval", help="evaluation folder (default: <exp>/eval)")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("bench", help="benchmarks that print JSON")
    p.add_argument("name", choices=["griffin-lim", "vocoder", "model", "attention", "frontend"])
    p.add_argument("--max-steps", type=_positive_int, default=400, help="attention: training steps per mechanism")
    p.add_argument("--kinds", nargs="+", help="attention: mechanisms to compare (default: all registered)")
    p.add_argument("--no-guided", action="store_true", help="attention: train without the guided attention loss")
    p.add_argument("--config", help="model: its config, Tacotron2 or Transformer-TTS (default: configs/tacotron2.yaml)")
    p.add_argument("--train-steps", type=_positive_int, default=5, help="model: timed training steps (median)")
    p.add_argument("--inference-steps", type=_positive_int, default=500,
                   help="model: decoder steps each timed inference is forced to")
    reference = p.add_mutually_exclusive_group()
    reference.add_argument("--reference-command", help="model: a timing harness to run first, side by side, that prints "
                                                       "one JSON line (../shared/bench/nvidia_baseline.py's format)")
    reference.add_argument("--reference-json", help="model: that harness's JSON, stored from an earlier run")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--iters", type=_positive_int, default=64)
    p.add_argument("--threads", type=_positive_int, default=2)
    p.add_argument("--device", default="cpu", help="griffin-lim, vocoder, model: cpu or cuda")
    p.add_argument("--precisions", nargs="+", choices=["fp32", "bf16", "int8"],
                   help="model: inference precisions (default fp32 int8 on the CPU, fp32 bf16 on CUDA; "
                        "bf16 also trains under autocast)")
    p.add_argument("--batch-sizes", nargs="+", type=_positive_int,
                   help="model: inference and synthesis batch sizes (default 1 16, and 64 on CUDA)")
    p.add_argument("--wav", help="speech clip to use (default: espeak-ng)")
    p.add_argument("--text-file", help="frontend: transcripts, one per line or id<TAB>...<TAB>text "
                                       "(default: LJSpeech's, recipes/ljspeech/nvidia_filelists.tsv.gz)")
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
    except Interrupted as exc:
        print(f"interrupted: saved {exc.checkpoint}; continue with --resume", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`, which stopped reading
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
