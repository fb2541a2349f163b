"""Options that several commands share, declared once, and the checks of their values.

Values are checked where they are declared (``type=``), so a bad one is a usage error (one
``error:`` line, exit 2) before any work starts.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from tts.errors import TTSError

if TYPE_CHECKING:
    from tts.synthesis import Synthesizer

T = TypeVar("T")


def checked(parse: Callable[[str], T], valid: Callable[[T], bool], rule: str) -> Callable[[str], T]:
    """An argparse ``type``: ``parse`` the text, and refuse it unless ``valid`` (``rule`` says what is)."""
    def check(text: str) -> T:
        try:
            value = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {rule}, got {text!r}") from None
        if not valid(value):  # NaN fails every comparison, so it is refused too
            raise argparse.ArgumentTypeError(f"must be {rule}, got {text}")
        return value

    return check


#: counts, sizes, steps
positive_int = checked(int, lambda n: n >= 1, "at least 1")
non_negative_int = checked(int, lambda n: n >= 0, "0 or more")
#: durations, ratios
positive_float = checked(float, lambda x: math.isfinite(x) and x > 0, "a finite number above 0")
non_negative_float = checked(float, lambda x: math.isfinite(x) and x >= 0, "a finite number of 0 or more")
probability = checked(float, lambda x: 0.0 <= x <= 1.0, "a probability from 0 to 1")


def int_pair(value: str) -> list[int]:
    """``A,B``: two integers ≥ 0."""
    try:
        first, second = (int(v) for v in value.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"wants two integers separated by a comma (e.g. 2,4), got '{value}'") from None
    if first < 0 or second < 0:
        raise argparse.ArgumentTypeError(f"wants two integers of 0 or more, got '{value}'")
    return [first, second]


def add_device(p: argparse.ArgumentParser, default: str | None = None, threads: bool = True) -> None:
    """``--device``, and (``threads``) ``--threads`` for its CPU work (:func:`add_cpu_threads`)."""
    p.add_argument("--device", default=default,
                   help=f"cpu, cuda, cuda:1 ... (default: {default or 'cuda when available, else cpu'})")
    if threads:
        add_cpu_threads(p)


def add_cpu_threads(p: argparse.ArgumentParser) -> None:
    """``--threads``: CPU threads of a command that computes (:func:`tts.threads.use_threads` applies it)."""
    p.add_argument("--threads", type=positive_int,
                   help="CPU threads (default: OMP_NUM_THREADS, else one per core that is idle when the command starts)")


def add_checkpoint(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", help="acoustic model checkpoint (default: the bundled model)")


def add_limit(p: argparse.ArgumentParser) -> None:
    p.add_argument("--limit", type=positive_int, help="only the first N utterances of the split")


def add_threads(p: argparse.ArgumentParser) -> None:
    """A benchmark's ``--threads``: fixed (2) unless given, so that its figures compare."""
    p.add_argument("--threads", type=positive_int, default=2, help="CPU threads (default 2)")


def add_split(p: argparse.ArgumentParser, split: str, data_help: str, data_required: bool = True) -> None:
    """A run over (the first N utterances of) a corpus split."""
    p.add_argument("--data", required=data_required, help=data_help)
    p.add_argument("--split", default=split, help=f"the corpus split (default {split})")
    add_limit(p)


#: inference flags → the :class:`~tts.config.InferenceConfig` key each sets
INFERENCE_FLAGS = {"stop_threshold": "stop_threshold", "max_steps": "max_decoder_steps",
                   "max_frames_per_token": "max_frames_per_token", "attention_window": "attention_window",
                   "gl_iters": "griffin_lim.iterations", "batch_size": "batch_size"}


def add_precision(p: argparse.ArgumentParser) -> None:
    """``--int8`` or ``--bf16``: the acoustic model's precision (:func:`precision`)."""
    low = p.add_mutually_exclusive_group()
    low.add_argument("--int8", action="store_true",
                     help="int8 weights on the CPU: faster for large models with VNNI or AMX, slower elsewhere (it warns)")
    low.add_argument("--bf16", action="store_true",
                     help="decode in bfloat16 (autocast) on a GPU or a CPU with AVX-512 or AMX: faster for batches")


def add_inference(p: argparse.ArgumentParser, batch_size: bool = True) -> None:
    """The flags that change a checkpoint's inference settings for one run, plus device and frontend options."""
    p.add_argument("--stop-threshold", type=probability, help="stop probability that ends an item (0-1)")
    p.add_argument("--max-steps", type=positive_int, help="decoder step limit")
    p.add_argument("--max-frames-per-token", type=positive_float, help="step limit relative to text length")
    p.add_argument("--attention-window", type=int_pair, metavar="BACK,AHEAD",
                   help="keep attention near the previous peak")
    p.add_argument("--gl-iters", type=positive_int, help="Griffin-Lim iterations")
    if batch_size:
        p.add_argument("--batch-size", type=positive_int, help="sentences decoded together")
    add_device(p)
    add_precision(p)
    p.add_argument("--lexicon", help="pronunciation lexicon (WORD PH ON EMES per line), before the dictionary")
    p.add_argument("settings", nargs="*", metavar="inference.KEY=VALUE",
                   help="any inference setting, e.g. inference.stop_after_last_token=true")


def reclaim_settings(args: argparse.Namespace) -> argparse.Namespace:
    """Give back to ``args.settings`` the ``inference.KEY=VALUE`` items that a list option before them
    took (``--vocoder hifigan inference.noise_seed=3``: argparse hands both to ``--vocoder``)."""
    if not isinstance(getattr(args, "settings", None), list):
        return args
    for name, value in vars(args).items():
        if name != "settings" and isinstance(value, list) and all(isinstance(item, str) for item in value):
            taken = [item for item in value if item.startswith("inference.") and "=" in item]
            if taken and len(taken) < len(value):
                setattr(args, name, [item for item in value if item not in taken])
                args.settings.extend(taken)
    return args


def inference_settings(items: list[str] | None) -> dict[str, Any]:
    """``inference.KEY=VALUE`` items as ``{KEY: value}`` (dotted keys kept); any other key is an error."""
    from tts.config import parse_override

    given = {}
    for item in items or []:
        if not item.startswith("inference."):
            raise TTSError(f"'{item}': only inference.* settings can change after training (e.g. "
                           f"inference.max_decoder_steps=1000)")
        key, value = parse_override(item)
        given[key.removeprefix("inference.")] = value
    return given


def add_vocoder(p: argparse.ArgumentParser, several: bool = False) -> None:
    """``--vocoder``: the one that turns mels into sound (with ``several``: the first; the others
    make versions to compare)."""
    from tts.vocoders.catalogue import help_text

    if several:
        p.add_argument("--vocoder", nargs="+", metavar="VOCODER", help=help_text() + "; several: each text in "
                       "each version, played side by side in index.html (the first is <name>.wav)")
    else:
        p.add_argument("--vocoder", metavar="VOCODER", help=help_text())


def inference_changes(args: argparse.Namespace) -> dict[str, Any]:
    """The inference settings given on the command line, flags and ``inference.KEY=VALUE`` alike, as
    dotted keys of :class:`~tts.config.InferenceConfig` (the checkpoint's values apply to the rest)."""
    changes = inference_settings(getattr(args, "settings", None))
    for flag, key in INFERENCE_FLAGS.items():
        value = getattr(args, flag, None)
        if value is not None:
            changes[key] = value
    vocoder = getattr(args, "vocoder", None)
    if vocoder:
        changes["vocoder"] = vocoder[0] if isinstance(vocoder, list) else vocoder
    return changes


def precision(args: argparse.Namespace) -> str:
    """The precision ``--int8`` or ``--bf16`` asks for (``fp32`` when neither)."""
    return "int8" if getattr(args, "int8", False) else "bf16" if getattr(args, "bf16", False) else "fp32"


def device(args: argparse.Namespace) -> str:
    """``--device`` checked against this machine, or the GPU when there is one (the CPU for --int8)."""
    from tts.devices import resolve_device

    return resolve_device(args.device, precision(args))


def add_engine(p: argparse.ArgumentParser) -> None:
    """``--engine``: PyTorch on a checkpoint, or onnxruntime on an export (:func:`load_synthesizer`)."""
    p.add_argument("--engine", choices=["torch", "onnx"], default="torch",
                   help="onnx: run an export of 'tts export --format onnx' (--checkpoint names its folder) on onnxruntime")


def load_synthesizer(args: argparse.Namespace) -> Synthesizer:
    """The synthesizer a command's ``--engine``, ``--checkpoint``, precision, device, lexicon and
    inference flags describe."""
    from tts.synthesis import Synthesizer

    if args.engine == "torch":
        return Synthesizer.from_checkpoint(args.checkpoint, device=device(args), precision=precision(args),
                                           lexicon=args.lexicon, changes=inference_changes(args))
    if args.checkpoint is None:
        raise TTSError("--engine onnx needs --checkpoint: the folder written by 'tts export CKPT --format onnx'")
    if precision(args) != "fp32" or args.device not in (None, "cpu"):
        raise TTSError("--engine onnx runs an export on the CPU in the precision it was exported in: drop --int8, "
                       "--bf16 and --device (int8: 'tts export CKPT --format onnx --int8')")
    return Synthesizer.from_onnx(args.checkpoint, lexicon=args.lexicon, changes=inference_changes(args))


def wav_output(path: str) -> Path:
    """A wav path to write, checked before any work."""
    out = Path(path)
    if out.suffix.lower() != ".wav" or out.is_dir():
        raise TTSError(f"-o {out}: give a file name ending in .wav")
    return out
