"""PyTorch's batch-1 decoder step of the bundled voice on 1 and 2 threads, alternating, 200 steps
each, four rounds after a warm-up (ms per step).

    .venv/bin/python docs/speed_trials/2026-12-02_threads/torch_step_threads.py
"""

import torch

from tts.benchmarks.inputs import BENCH_TEXT
from tts.benchmarks.onnx import step_seconds
from tts.synthesis import Synthesizer

synthesizer = Synthesizer.from_checkpoint(None, changes={"vocoder": "vocos-student"})
ids = torch.tensor([synthesizer.tokenizer.encode(BENCH_TEXT)])
ms: dict[int, list[float]] = {1: [], 2: []}
with torch.no_grad():
    for run in range(5):
        for threads in ms:
            torch.set_num_threads(threads)
            per_step = step_seconds(synthesizer.model, ids, 200)
            if run:
                ms[threads].append(round(1000 * per_step, 3))
print(ms)
