"""The bundled voice (the student) loaded on the main thread (``main``) or on the one thread of
an executor (``pool``), then 36 sentences five times on that executor's thread: what
``tts serve``'s compute thread is for (docs/serving.md, "One compute thread").

    .venv/bin/python docs/speed_trials/2026-12-02_threads/compute_thread_probe.py pool|main
"""

import asyncio
import dataclasses
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import torch

from tts.benchmarks.serve import SENTENCES
from tts.synthesis import Synthesizer

pool = ThreadPoolExecutor(1)


def load() -> Synthesizer:
    torch.set_num_threads(2)
    synthesizer = Synthesizer.from_checkpoint(None, changes={"vocoder": "vocos-student"})
    synthesizer([SENTENCES[0]], dataclasses.replace(synthesizer.settings, batch_size=64))
    return synthesizer


synthesizer = pool.submit(load).result() if sys.argv[1] == "pool" else load()
settings = dataclasses.replace(synthesizer.settings, batch_size=64)


def seconds(n: int = 36) -> float:
    torch.set_num_threads(2)
    start = time.perf_counter()
    synthesizer([SENTENCES[i % len(SENTENCES)] for i in range(n)], settings)
    return time.perf_counter() - start


async def main() -> None:
    loop = asyncio.get_running_loop()
    times = [await loop.run_in_executor(pool, seconds) for _ in range(5)]
    print(sys.argv[1], " ".join(f"{t:.2f}" for t in times), flush=True)


asyncio.run(main())
