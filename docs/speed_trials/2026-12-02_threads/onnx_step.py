"""Two tries at onnxruntime's batch-1 decoder step, not kept (docs/serving.md): ``threads``, the
bundled voice's synthesis of the bench text with its step graph on 1 thread against 2 (everything
else on 2), alternating; ``iobinding``, seconds per step of the exported model's own loop against
IOBinding with the state kept as OrtValues. EXPORT: ``tts export --format onnx --vocoder
vocos-student --out EXPORT``.

    .venv/bin/python docs/speed_trials/2026-12-02_threads/onnx_step.py threads|iobinding EXPORT
"""

import sys
import time
from pathlib import Path

import onnxruntime as ort
import torch

from tts.benchmarks.inputs import BENCH_TEXT
from tts.onnx import load_onnx
from tts.onnx.export import NEXT
from tts.onnx.runtime import _Graph
from tts.synthesis import Synthesizer

torch.set_num_threads(2)
mode, folder = sys.argv[1], Path(sys.argv[2])


def step_threads() -> None:
    two, one = load_onnx(folder, 2), load_onnx(folder, 2)
    graph = one.model.decoder_step
    one.model.decoder_step = _Graph(folder / "step.onnx", 1, graph.inputs, graph.outputs)
    engines = {"step on 2 threads": Synthesizer(two), "step on 1 thread": Synthesizer(one)}
    times: dict[str, list[float]] = {name: [] for name in engines}
    for run in range(8):
        for name, synthesizer in engines.items():
            start = time.perf_counter()
            synthesizer([BENCH_TEXT])
            if run:
                times[name].append(round(time.perf_counter() - start, 3))
    print(times)


def iobinding() -> None:
    export = load_onnx(folder, 2)
    model = export.model
    ids = torch.tensor([Synthesizer(export).tokenizer.encode(BENCH_TEXT)])
    memory, mask = model.encode(ids, torch.tensor([ids.shape[1]]))
    first = model.init_decoder(memory, mask)
    go = memory.new_full((1, model.n_mels), model.go_value)
    session = model.decoder_step.session
    outputs = [o.name for o in session.get_outputs()]

    def own_loop(n: int) -> float:
        state, frame = first, go
        start = time.perf_counter()
        for _ in range(n):
            out = model.step(frame, state, None)
            state, frame = out.state, out.frames[:, -1]
        return (time.perf_counter() - start) / n

    def bound(n: int) -> float:
        values = {k: ort.OrtValue.ortvalue_from_numpy(v.numpy()) for k, v in first.tensors.items()}
        window = ort.OrtValue.ortvalue_from_numpy(mask.numpy())
        frame = go.numpy()
        start = time.perf_counter()
        for _ in range(n):
            binding = session.io_binding()
            binding.bind_ortvalue_input("frame", ort.OrtValue.ortvalue_from_numpy(frame))
            binding.bind_ortvalue_input("window", window)
            for name, value in values.items():
                if name in model.decoder_step.inputs:
                    binding.bind_ortvalue_input(name, value)
            for name in outputs:
                binding.bind_output(name, "cpu")
            session.run_with_iobinding(binding)
            result = dict(zip(outputs, binding.get_outputs()))
            for name in model.carried:
                values[name] = result[NEXT + name]
            for name in ("stop_prob", "alignment"):
                torch.from_numpy(result[name].numpy())
            frame = result["frames"].numpy()[:, -1]
        return (time.perf_counter() - start) / n

    for _ in range(4):
        print(f"own loop {1000 * own_loop(300):.3f} ms   iobinding {1000 * bound(300):.3f} ms", flush=True)


step_threads() if mode == "threads" else iobinding()
