"""torch.compile of the bundled voice's batch-1 decoder step against the eager step, alternating in
one process (docs/speed.md, "Measuring a change side by side"). oneDNN's packed-weight products
(tts.models.recurrent) do not trace, so inside the compiled graph they are plain F.linear.

    OMP_NUM_THREADS=1 .venv/bin/python docs/speed_trials/2026-12-02_compile/compile_step.py [THREADS]
"""

import sys
import time
from typing import Any, Callable

import torch
import torch.nn.functional as F

import tts.models.recurrent as recurrent
from tts.benchmarks.inputs import BENCH_TEXT
from tts.synthesis import Synthesizer

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
synthesizer = Synthesizer.from_checkpoint(None, changes={"vocoder": "vocos-student"})
model = synthesizer.model.eval()
ids = torch.tensor([synthesizer.tokenizer.encode(BENCH_TEXT)])
lengths = torch.tensor([ids.shape[1]])
packed_product = recurrent.fixed_weight_product


def traceable_product(weight: torch.Tensor, batch_size: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """The packed product in eager mode, F.linear while compiling."""
    if torch.compiler.is_compiling():
        fixed = weight.detach()
        return lambda x: F.linear(x, fixed)
    return packed_product(weight, batch_size)


recurrent.fixed_weight_product = traceable_product  # type: ignore[assignment]


def ms_per_step(step: Callable, steps: int = 200) -> tuple[float, torch.Tensor]:
    """Milliseconds per free-running step of ``step`` on BENCH_TEXT, and the last frame."""
    with torch.no_grad():
        memory, mask = model.encode(ids, lengths)
        state = model.init_decoder(memory, mask)
        frame = memory.new_full((1, model.n_mels), model.go_value)
        start = time.perf_counter()
        for _ in range(steps):
            out = step(frame, state, None)
            state, frame = out.state, out.frames[:, -1]
        return (time.perf_counter() - start) / steps * 1000, frame


def plain_step(frame: torch.Tensor, state: Any, window: torch.Tensor | None) -> Any:
    """The model's step on a state of plain tensors (as the ONNX export traces it)."""
    return model.step(frame, model.state_from_tensors(state.tensors()), window)


compiled = torch.compile(plain_step, dynamic=True)
start = time.perf_counter()
ms_per_step(compiled, 3)
print("compile s", round(time.perf_counter() - start, 1), flush=True)
for _ in range(3):
    eager_ms, eager_frame = ms_per_step(model.step)
    compiled_ms, compiled_frame = ms_per_step(compiled)
    print(f"eager {eager_ms:.3f} ms  compiled {compiled_ms:.3f} ms  "
          f"diff {float((eager_frame - compiled_frame).abs().max()):.2e}", flush=True)
