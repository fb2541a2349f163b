"""Which torch device a command runs on: the one asked for, checked, or the GPU when there is one."""

from __future__ import annotations

import contextlib
import platform
from pathlib import Path
from typing import ContextManager, Literal

import torch

from tts.errors import TTSError

#: what an acoustic model decodes in: float32, bfloat16 under autocast, or int8 weights (the CPU only)
Precision = Literal["fp32", "bf16", "int8"]
PRECISIONS: tuple[Precision, ...] = ("fp32", "bf16", "int8")


def resolve_device(requested: str | None, precision: str = "fp32") -> str:
    """``requested`` (``cpu``, ``cuda``, ``cuda:1`` ...) after checking this machine can run it, in
    ``precision`` (:func:`check_precision`); ``None``: ``cuda`` when a GPU is available (and
    ``precision`` is not int8), else ``cpu``."""
    if requested is None:
        requested = "cuda" if torch.cuda.is_available() and precision != "int8" else "cpu"
    try:
        device = torch.device(requested)
    except RuntimeError:
        raise TTSError(f"--device {requested!r} is not a device: use cpu, cuda or cuda:N") from None
    check_precision(precision, device)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise TTSError(f"--device {requested}: this machine has no usable CUDA GPU (torch "
                           f"{torch.__version__}); use --device cpu")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise TTSError(f"--device {requested}: this machine has {torch.cuda.device_count()} GPU(s); "
                           f"use cuda:0 … cuda:{torch.cuda.device_count() - 1}")
    elif device.type != "cpu":
        raise TTSError(f"--device {requested}: only cpu and cuda are supported")
    return requested


def computes_bf16(device: torch.device) -> bool:
    """Whether ``device`` computes bfloat16 products itself: a GPU that supports them, or a CPU on
    which oneDNN does (AVX-512 or AMX). Elsewhere (AVX2 only) bf16 is converted in software and
    slower than float32."""
    if device.type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    if not torch.backends.mkldnn.is_available():
        return False
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def check_precision(precision: str, device: str | torch.device) -> Precision:
    """``precision`` (one of :data:`PRECISIONS`) if ``device`` decodes in it faster than float32:
    int8 on the CPU only, bf16 where :func:`computes_bf16`; else a :class:`TTSError` saying what to do."""
    device = torch.device(device)
    if precision not in PRECISIONS:
        raise TTSError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    if precision == "int8" and device.type != "cpu":
        raise TTSError("int8 inference runs on the CPU only; drop --int8 or use --device cpu")
    if precision == "bf16" and not computes_bf16(device):
        if device.type == "cuda":
            raise TTSError("no GPU here computes bfloat16 (there is none, or it predates bf16 support); drop --bf16")
        raise TTSError(f"this CPU ({cpu_model()}) has no bfloat16 arithmetic (no AVX-512 or AMX), so bf16 would be "
                       f"slower than float32; drop --bf16")
    return precision


def decoding_in(precision: str, device: str | torch.device) -> ContextManager:
    """The context a model decodes in at ``precision``: bfloat16 autocast on ``device`` for ``bf16``,
    else nothing (int8 is in the weights)."""
    if precision == "bf16":
        return torch.autocast(torch.device(device).type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def describe_device(device: torch.device) -> str:
    """What ``device`` is, for a run's records: the GPU's name, or the CPU's model and the threads
    torch computes with (a bf16 run's numbers depend on the CPU's kernels: the same seed on another
    CPU is another run)."""
    if device.type == "cuda":
        return f"{device} ({torch.cuda.get_device_name(device)})"
    threads = torch.get_num_threads()
    return f"cpu ({cpu_model()}, {threads} thread{'' if threads == 1 else 's'})"


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else what :mod:`platform` knows)."""
    return _cpuinfo_field("model name") or platform.processor() or platform.machine() or "unknown CPU"


def _cpuinfo_field(key: str) -> str:
    """The first ``key : value`` of ``/proc/cpuinfo`` ('' where there is none, or no such file)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(key):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return ""


#: the x86 instructions that multiply 8-bit integers without 16-bit intermediate sums
INT8_INSTRUCTIONS = ("avx512_vnni", "avx_vnni", "amx_int8")
#: the instruction sets a CPU run's numbers and speed depend on (bf16 and int8 kernels above all)
NOTABLE_INSTRUCTIONS = ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "avx_vnni", "amx_bf16", "amx_int8")


def cpu_class(instructions: list[str]) -> str:
    """A short name for a CPU by the most capable of its :data:`NOTABLE_INSTRUCTIONS` (what its bf16
    numbers depend on): "AMX", "AVX-512 BF16", "AVX-512", "AVX2" or "unknown" (none recorded)."""
    for flag, name in (("amx_bf16", "AMX"), ("avx512_bf16", "AVX-512 BF16"), ("avx512f", "AVX-512"), ("avx2", "AVX2")):
        if flag in instructions:
            return name
    return "unknown"


def cpu_instructions() -> list[str]:
    """Which of :data:`NOTABLE_INSTRUCTIONS` this CPU has (``/proc/cpuinfo`` flags; [] where unknown),
    recorded with every training session: the same seed in bf16 on another CPU is another run."""
    flags = set(_cpuinfo_field("flags").split())
    return [name for name in NOTABLE_INSTRUCTIONS if name in flags]


def cpu_int8_instructions() -> list[str]:
    """Which of :data:`INT8_INSTRUCTIONS` this CPU has (``/proc/cpuinfo`` flags; [] where unknown).
    Without any, x86 multiplies bytes with ``pmaddubsw``: pairs of products summed in saturating
    16-bit arithmetic, and int8 products are slower than float ones."""
    flags = set(_cpuinfo_field("flags").split())
    return [name for name in INT8_INSTRUCTIONS if name in flags]
