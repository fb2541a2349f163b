"""A first look at an int8 ONNX decoder step (not a feature yet): onnxruntime's dynamic
quantization of ``step.onnx`` with int8 or uint8 weights, the bundled voice's synthesis of the
bench text on 2 threads against the float32 export (alternating, 5 runs after a warm-up), and the
free-running mel's mean relative difference over the frames both have (a stop one frame apart
shifts everything after it: a small figure needs the same length). EXPORT: ``tts export --format
onnx --vocoder vocos-student --out EXPORT``; the quantized copies go beside it.

    .venv/bin/python docs/speed_trials/2026-12-02_threads/onnx_int8_probe.py EXPORT
"""

import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic

from tts.benchmarks.inputs import BENCH_TEXT
from tts.onnx import load_onnx
from tts.synthesis import Synthesizer

source = Path(sys.argv[1])
quantized = {}
for weights in ("QInt8", "QUInt8"):
    folder = source.with_name(f"{source.name}_step_{weights}")
    if not folder.exists():
        shutil.copytree(source, folder)
        quantize_dynamic(str(source / "step.onnx"), str(folder / "step.onnx"), weight_type=getattr(QuantType, weights))
    quantized[weights] = folder
    print(weights, "step.onnx bytes:", (folder / "step.onnx").stat().st_size)
torch.set_num_threads(2)
engines = {"fp32": Synthesizer(load_onnx(source, 2))} | {k: Synthesizer(load_onnx(v, 2)) for k, v in quantized.items()}
seconds: dict[str, list[float]] = {name: [] for name in engines}
mels = {}
for run in range(6):
    for name, synthesizer in engines.items():
        start = time.perf_counter()
        result = synthesizer([BENCH_TEXT])[0]
        if run:
            seconds[name].append(round(time.perf_counter() - start, 3))
        mels[name] = result.mel
print("seconds a synthesis:", seconds)
for name in quantized:
    ours, theirs = mels["fp32"], mels[name]
    n = min(ours.shape[1], theirs.shape[1])
    error = float(np.abs(ours[:, :n] - theirs[:, :n]).mean() / np.abs(ours).mean())
    print(f"{name}: frames {ours.shape[1]} (fp32) / {theirs.shape[1]}, mean relative difference {error:.4f}")
