"""``tts bench onnx``: the onnxruntime synthesizer against PyTorch on the same checkpoint — one
decoder step, and whole texts through the acoustic model and the vocoder."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from tts.benchmarks.inputs import BENCH_TEXT
from tts.models.decoding import Decodable
from tts.onnx import export_checkpoint, load_onnx
from tts.synthesis import Synthesizer


def step_seconds(model: Decodable, ids: torch.Tensor, steps: int) -> float:
    """Seconds per free-running step of ``model`` on one text (stop ignored: the same steps for every engine)."""
    lengths = torch.tensor([ids.shape[1]])
    memory, mask = model.encode(ids, lengths)
    state = model.init_decoder(memory, mask)
    frame = memory.new_full((1, model.n_mels), model.go_value)
    start = time.perf_counter()
    for _ in range(steps):
        out = model.step(frame, state, None)
        state, frame = out.state, out.frames[:, -1]
    return (time.perf_counter() - start) / steps


def bench_onnx(checkpoint: str | None = None, vocoder: str | None = None, steps: int = 200, runs: int = 3,
               threads: int = 2, int8: bool = False) -> dict:
    """Median milliseconds per decoder step and seconds per synthesis of :data:`BENCH_TEXT` for
    PyTorch and onnxruntime on ``threads`` threads (runs alternate between the engines), and the
    largest mel difference between the two; with ``int8``, an export whose decoder step has int8
    weights too, and its mel's mean relative difference from the float32 export's."""
    torch.set_num_threads(threads)
    changes = {"vocoder": vocoder} if vocoder else None
    with tempfile.TemporaryDirectory() as tmp:
        engines = {"torch": Synthesizer.from_checkpoint(checkpoint, changes=changes),
                   "onnx": Synthesizer(load_onnx(export_checkpoint(checkpoint, Path(tmp) / "onnx", changes), threads))}
        if int8:
            folder = export_checkpoint(checkpoint, Path(tmp) / "onnx_int8", changes, int8=True)
            engines["onnx_int8"] = Synthesizer(load_onnx(folder, threads))
        ids = torch.tensor([engines["torch"].tokenizer.encode(BENCH_TEXT)])
        step_ms: dict[str, list[float]] = {name: [] for name in engines}
        synthesis_s: dict[str, list[float]] = {name: [] for name in engines}
        mels = {}
        with torch.no_grad():
            for run in range(runs + 1):  # the first run warms up
                for name, synthesizer in engines.items():
                    per_step = step_seconds(synthesizer.model, ids, steps)
                    start = time.perf_counter()
                    result = synthesizer([BENCH_TEXT])[0]
                    if run:
                        step_ms[name].append(1000 * per_step)
                        synthesis_s[name].append(time.perf_counter() - start)
                    mels[name] = result.mel
    audio = len(result.waveform) / result.sample_rate
    median = {name: statistics.median(values) for name, values in synthesis_s.items()}
    step = {name: statistics.median(values) for name, values in step_ms.items()}
    same_length = mels["torch"].shape == mels["onnx"].shape
    settings = engines["torch"].settings
    report = {"attention": engines["onnx"].model.attention_name, "vocoder": settings.vocoder, "threads": threads,
              "audio_seconds": round(audio, 2),
              "decoder_step_ms": {name: round(value, 3) for name, value in step.items()},
              "synthesis_seconds": {name: round(value, 3) for name, value in median.items()},
              "rtf": {name: round(value / audio, 4) for name, value in median.items()},
              "onnx_speedup": {"decoder_step": round(step["torch"] / step["onnx"], 2),
                               "synthesis": round(median["torch"] / median["onnx"], 2)},
              "same_stop_step": same_length,
              "max_mel_difference": float(np.abs(mels["torch"] - mels["onnx"]).max()) if same_length else None}
    if int8:
        ours, theirs = mels["onnx"], mels["onnx_int8"]
        frames = min(ours.shape[1], theirs.shape[1])
        report["int8"] = {"speedup": {"decoder_step": round(step["onnx"] / step["onnx_int8"], 2),
                                      "synthesis": round(median["onnx"] / median["onnx_int8"], 2)},
                          "frames": {"float32": ours.shape[1], "int8": theirs.shape[1]},
                          "mel_relative_difference": round(float(np.abs(ours[:, :frames] - theirs[:, :frames]).mean()
                                                                 / np.abs(ours).mean()), 4)}
    return report
