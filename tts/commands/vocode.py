"""``tts vocode`` (a saved mel → wav) and ``tts resynth`` (wav → mel → wav): a vocoder on its own,
without an acoustic model."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tts.commands.options import add_cpu_threads, positive_int, wav_output
from tts.errors import TTSError, brief

if TYPE_CHECKING:
    import numpy as np

    from tts.vocoders import Vocoder


def declare_vocode(p: argparse.ArgumentParser) -> None:
    p.add_argument("mel")
    _add_vocoder_options(p)
    p.set_defaults(func=run_vocode)


def declare_resynth(p: argparse.ArgumentParser) -> None:
    p.add_argument("input")
    p.add_argument("--no-progress", action="store_true", help="no progress bar for long inputs")
    _add_vocoder_options(p)
    p.set_defaults(func=run_resynth)


def _add_vocoder_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", required=True, help="the wav to write")
    p.add_argument("--config", help="YAML config for the audio settings (default: built-in)")
    p.add_argument("--iters", type=positive_int, help="Griffin-Lim iterations")
    add_cpu_threads(p)
    from tts.vocoders.catalogue import GRIFFIN_LIM, help_text

    p.add_argument("--vocoder", metavar="VOCODER", default=GRIFFIN_LIM,
                   help=f"{help_text()}; here the default is {GRIFFIN_LIM}, with the config's audio settings")


def standalone_vocoder(args: argparse.Namespace) -> Vocoder:
    """Griffin-Lim with ``--config``'s audio settings (``--iters`` iterations), or a neural vocoder
    checkpoint (whose own audio settings apply; with ``--config`` they must agree)."""
    from tts.config import load_config, resolve_inference
    from tts.vocoder_loader import vocoder_for
    from tts.vocoders import GriffinLim
    from tts.vocoders.catalogue import resolve

    if resolve(args.vocoder).neural:
        if args.iters is not None:
            raise TTSError("--iters sets Griffin-Lim's iterations; it does not apply to a neural --vocoder")
        vocoder = vocoder_for(args.vocoder)
        if args.config:
            vocoder.check_compatible(load_config(args.config).audio, f"--config {args.config}")
        return vocoder
    config = load_config(args.config)
    settings = resolve_inference(config.inference, {"griffin_lim.iterations": args.iters})
    return GriffinLim(config.audio, settings.griffin_lim)


def read_mel(path: str, n_mels: int) -> np.ndarray:
    """A saved mel ``(n_mels, T_mel)`` (or its transpose) as float32, from ``np.save`` (``.npy``) or
    ``np.savez`` (``.npz`` holding one array, whatever the file is named); anything else is one clear error."""
    import numpy as np

    try:
        loaded = np.load(path, allow_pickle=False)
        if isinstance(loaded, np.lib.npyio.NpzFile):
            with loaded:
                names = list(loaded.files)
                if len(names) != 1:
                    raise TTSError(f"{path}: an .npz archive of {len(names)} arrays ({', '.join(names[:5]) or 'none'}): "
                                   f"save the mel alone (np.save, or np.savez with one array)")
                mel = loaded[names[0]]
        else:
            mel = loaded
    except (OSError, ValueError, EOFError) as exc:
        raise TTSError(f"{path}: not a readable .npy mel file ({brief(exc)})") from None
    if not np.issubdtype(mel.dtype, np.floating) and not np.issubdtype(mel.dtype, np.integer):
        raise TTSError(f"{path}: holds {mel.dtype} values, not numbers")
    if mel.ndim != 2 or n_mels not in mel.shape:
        raise TTSError(f"{path}: expected a (n_mels={n_mels}, T_mel) array, got shape {mel.shape}")
    return (mel if mel.shape[0] == n_mels else mel.T).astype(np.float32)


def run_vocode(args: argparse.Namespace) -> None:
    import torch

    from tts.audio import save_wav

    output = wav_output(args.output)
    vocoder = standalone_vocoder(args)
    mel = read_mel(args.mel, vocoder.audio.n_mels)
    wav, lengths = vocoder(torch.from_numpy(mel)[None])
    save_wav(output, wav[0].numpy(), vocoder.audio.sample_rate)
    print(f"wrote {output} ({int(lengths[0]) / vocoder.audio.sample_rate:.2f} s)")


def run_resynth(args: argparse.Namespace) -> None:
    import torch

    from tts.audio import MelSpectrogram, load_wav, save_wav
    from tts.fileio import refuse_overwriting

    output = wav_output(args.output)
    refuse_overwriting(output, [args.input], "-o")
    vocoder = standalone_vocoder(args)
    audio = vocoder.audio
    wav, _ = load_wav(args.input, audio.sample_rate)
    if len(wav) < audio.win_length:
        raise TTSError(f"{args.input}: {len(wav)} samples is shorter than one analysis window "
                       f"({audio.win_length} samples at {audio.sample_rate} Hz)")
    mel = MelSpectrogram(audio)(torch.from_numpy(wav))
    vocoder.check_mel(mel[None])
    out = vocoder.vocode_long(mel, progress=not args.no_progress)
    save_wav(output, out.numpy(), audio.sample_rate)  # whole, under its name, only once it is done
    print(f"wrote {output}: {mel.shape[-1]} mel frames → {len(out) / audio.sample_rate:.2f} s")
