"""``tts bench int8``: int8 against float32 decoding on this CPU, with a trained model (the bundled
voice by default): which int8 kernels the CPU computes exactly, milliseconds per decoder step at
each batch size, and how far the int8 mels are from the float32 ones for real sentences."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from tts import checkpoint
from tts.config import InferenceConfig
from tts.data import Batch
from tts.devices import describe_device
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


@torch.no_grad()
def mel_relative_errors(fp32: AutoregressiveTTS, int8: AutoregressiveTTS, ids: torch.Tensor, lengths: torch.Tensor,
                        settings: InferenceConfig) -> dict[str, list[float]]:
    """Per item, int8's mel against float32's over the float32 decoding's frames:
    ``free_running`` (int8 decodes as long as the longest item, stop token ignored: a step's
    rounding can move a pause, and everything after it, by a frame) and ``teacher_forced`` (both
    models fed float32's frames: each step's own error, without that drift)."""
    reference = fp32.inference(ids, lengths, settings)
    r = fp32.reduction_factor
    free = int8.inference(ids, lengths, forced_steps(int(reference.lengths.max()) // r + 1, settings))
    frames = reference.mel.shape[2] - reference.mel.shape[2] % r
    stop = (torch.arange(frames)[None] >= reference.lengths[:, None] - 1).float()
    batch = Batch(ids, lengths, reference.mel[:, :, :frames], reference.lengths, stop, [""] * len(ids))
    forced_fp32, forced_int8 = fp32.forward_by_steps(batch).mel_after, int8.forward_by_steps(batch).mel_after
    return {"free_running": relative_errors(free.mel, reference.mel, reference.lengths),
            "teacher_forced": relative_errors(forced_int8, forced_fp32, reference.lengths)}


def bench_int8(checkpoint_path: str | None = None, batch_sizes: list[int] | None = None, steps: int = 300,
               threads: int = 2, runs: int = 3) -> dict:
    """For each batch size: ms per forced decoder step in float32 and int8 (median of ``runs``) and
    the int8 mels' relative error (:func:`mel_relative_errors`) on :data:`SENTENCES` (repeated to
    fill the batch)."""
    torch.set_num_threads(threads)
    loaded = checkpoint.load(checkpoint_path)
    model = loaded.model.cpu().eval()
    quantized = quantize_int8(model)
    tokenizer = Tokenizer.for_config(loaded.config.text, loaded.inventory)
    settings = loaded.config.inference
    forced = forced_steps(steps, settings)
    kernels = int8_kernels()
    result: dict[str, Any] = {"device": describe_device(torch.device("cpu")), "threads": threads,
                              "int8_instructions": list(kernels.instructions), "int8_kernels": kernels.describe(),
                              "int8_fast_here": kernels.fast, "checkpoint": checkpoint_path or "bundled",
                              "decoder_steps": steps, "batches": {}}
    for batch_size in sorted(set(batch_sizes or [1, 16])):
        texts = [SENTENCES[i % len(SENTENCES)] for i in range(batch_size)]
        ids, lengths = padded_ids([tokenizer.encode(text) for text in texts])
        timing = {}
        for name, m in (("fp32", model), ("int8", quantized)):
            def decode(m: AutoregressiveTTS = m) -> Any:
                return m.inference(ids, lengths, forced)

            timing[name] = float(np.median(timed_runs(decode, runs, "cpu")[0])) / steps * 1e3
        errors = mel_relative_errors(model, quantized, ids, lengths, settings)
        result["batches"][f"batch{batch_size}"] = {
            "fp32_ms_per_step": round(timing["fp32"], 3), "int8_ms_per_step": round(timing["int8"], 3),
            "int8_speedup": round(timing["fp32"] / timing["int8"], 2),
            **{f"mel_relative_error_{kind}": {"mean": round(float(np.mean(e)), 4), "max": round(float(np.max(e)), 4)}
               for kind, e in errors.items()}}
    return result
