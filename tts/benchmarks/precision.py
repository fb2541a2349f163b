"""``tts bench int8`` and ``tts bench bf16``: int8 weights, or bfloat16 autocast, against float32
decoding on this CPU, with a trained model (the bundled voice by default): milliseconds per decoder
step at each batch size, how far the low-precision mels are from the float32 ones for real
sentences, and for int8 which kernels the CPU computes exactly."""

from __future__ import annotations

from typing import Any, ContextManager

import numpy as np
import torch

from tts import checkpoint
from tts.config import InferenceConfig
from tts.data import Batch
from tts.devices import check_precision, cpu_instructions, decoding_in, describe_device
from tts.evaluation.timing import forced_steps, timed_runs
from tts.models import AutoregressiveTTS
from tts.models.layers import padded_ids
from tts.models.quantize import int8_kernels, quantize_int8
from tts.text import Tokenizer

#: everyday sentences none of the project's training sets hold
SENTENCES = (
    "The kettle on the stove began to whistle.",
    "Please put the coins in the jar by the door.",
    "It was seventy-two degrees at ten forty-five in the morning.",
    "The store manager opened the attic window.",
    "Fog rolled in over the harbor before dawn.",
    "Why did the water taste of iron?",
    "She jogs around the park every Sunday.",
    "Turn left at the second light and park behind the bakery.",
)


def relative_errors(a: torch.Tensor, b: torch.Tensor, lengths: torch.Tensor) -> list[float]:
    """Per item ``‖a − b‖ / ‖b‖`` over its first ``lengths[i]`` frames of mels ``(B, n_mels, T_mel)``."""
    return [float((a[i, :, :n] - b[i, :, :n]).norm() / b[i, :, :n].norm()) for i, n in enumerate(lengths.tolist())]


def warped_partners(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """For each frame of ``y`` ``(n_mels, T_y)``, the index into ``x`` ``(n_mels, T_x)`` of the first
    frame the dynamic-time-warping path (Euclidean frame distance) pairs it with: ``(T_y,)``."""
    import librosa

    _, path = librosa.sequence.dtw(X=x, Y=y, metric="euclidean")
    path = path[::-1]  # from the first frames to the last
    _, first = np.unique(path[:, 1], return_index=True)
    return path[first, 0]


def time_aligned_relative_errors(a: torch.Tensor, b: torch.Tensor, lengths: torch.Tensor) -> list[float]:
    """:func:`relative_errors` after dynamic time warping: each of ``b``'s frames against its
    :func:`warped_partners` in ``a``, so a pause that moved by a frame or two costs only what the
    frames themselves differ."""
    errors = []
    for i, n in enumerate(lengths.tolist()):
        x, y = a[i, :, :n].double().numpy(), b[i, :, :n].double().numpy()
        errors.append(float(np.linalg.norm(x[:, warped_partners(x, y)] - y) / np.linalg.norm(y)))
    return errors


@torch.no_grad()
def mel_relative_errors(fp32: AutoregressiveTTS, low: AutoregressiveTTS, in_low: ContextManager,
                        ids: torch.Tensor, lengths: torch.Tensor, settings: InferenceConfig) -> dict[str, list[float]]:
    """Per item, the low-precision model's mel (``low`` run inside ``in_low``) against float32's over
    the float32 decoding's frames: ``free_running`` (it decodes as long as the longest item, stop
    token ignored: a step's rounding can move a pause, and everything after it, by a frame),
    ``free_running_time_aligned`` (the same mels after :func:`time_aligned_relative_errors`: what is
    left without that drift) and ``teacher_forced`` (both fed float32's frames: each step's own error)."""
    reference = fp32.inference(ids, lengths, settings)
    r = fp32.reduction_factor
    frames = reference.mel.shape[2] - reference.mel.shape[2] % r
    stop = (torch.arange(frames)[None] >= reference.lengths[:, None] - 1).float()
    batch = Batch(ids, lengths, reference.mel[:, :, :frames], reference.lengths, stop, [""] * len(ids))
    forced_fp32 = fp32.forward_by_steps(batch).mel_after
    with in_low:
        free = low.inference(ids, lengths, forced_steps(int(reference.lengths.max()) // r + 1, settings))
        forced_low = low.forward_by_steps(batch).mel_after
    return {"free_running": relative_errors(free.mel.float(), reference.mel, reference.lengths),
            "free_running_time_aligned": time_aligned_relative_errors(free.mel.float(), reference.mel,
                                                                      reference.lengths),
            "teacher_forced": relative_errors(forced_low.float(), forced_fp32, reference.lengths)}


def bench_precision(precision: str, checkpoint_path: str | None = None, batch_sizes: list[int] | None = None,
                    steps: int = 300, threads: int = 2, runs: int = 3) -> dict:
    """``precision`` (``int8`` or ``bf16``, refused where this CPU would emulate it) against float32,
    for each batch size: ms per forced decoder step in each (median of ``runs``) and the
    low-precision mels' relative error (:func:`mel_relative_errors`) on :data:`SENTENCES`
    (repeated to fill the batch)."""
    if precision not in ("int8", "bf16"):
        raise ValueError(f"precision {precision!r}: int8 or bf16")
    check_precision(precision, "cpu")
    torch.set_num_threads(threads)
    loaded = checkpoint.load(checkpoint_path)
    model = loaded.model.cpu().eval()
    low = quantize_int8(model) if precision == "int8" else model

    tokenizer = Tokenizer.for_config(loaded.config.text, loaded.inventory)
    settings = loaded.config.inference
    forced = forced_steps(steps, settings)
    result: dict[str, Any] = {"device": describe_device(torch.device("cpu")), "cpu_instructions": cpu_instructions(),
                              "threads": threads,
                              "precision": precision, "checkpoint": checkpoint_path or "bundled",
                              "decoder_steps": steps, "batches": {}}
    if precision == "int8":
        kernels = int8_kernels()
        result |= {"int8_instructions": list(kernels.instructions), "int8_kernels": kernels.describe(),
                   "int8_fast_here": kernels.fast}
    for batch_size in sorted(set(batch_sizes or [1, 16])):
        texts = [SENTENCES[i % len(SENTENCES)] for i in range(batch_size)]
        ids, lengths = padded_ids([tokenizer.encode(text) for text in texts])
        timing = {}
        for name, m in (("fp32", model), (precision, low)):
            def decode(m: AutoregressiveTTS = m, name: str = name) -> Any:
                with decoding_in(name, "cpu"):
                    return m.inference(ids, lengths, forced)

            timing[name] = float(np.median(timed_runs(decode, runs, "cpu")[0])) / steps * 1e3
        errors = mel_relative_errors(model, low, decoding_in(precision, "cpu"), ids, lengths, settings)
        result["batches"][f"batch{batch_size}"] = {
            "fp32_ms_per_step": round(timing["fp32"], 3), f"{precision}_ms_per_step": round(timing[precision], 3),
            f"{precision}_speedup": round(timing["fp32"] / timing[precision], 2),
            **{f"mel_relative_error_{kind}": {"mean": round(float(np.mean(e)), 4), "max": round(float(np.max(e)), 4)}
               for kind, e in errors.items()}}
    return result
