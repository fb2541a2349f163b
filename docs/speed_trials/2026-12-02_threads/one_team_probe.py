"""36 sentences of the bundled voice (the student) on the main thread or on an asyncio worker
thread, in the order given: how a second team of CPU threads slows both (docs/serving.md, "One
compute thread").

    .venv/bin/python docs/speed_trials/2026-12-02_threads/one_team_probe.py m,m,m,t,t,m,m
"""

import asyncio
import dataclasses
import sys
import time

import torch

from tts.benchmarks.serve import SENTENCES
from tts.synthesis import Synthesizer

torch.set_num_threads(2)
synthesizer = Synthesizer.from_checkpoint(None, changes={"vocoder": "vocos-student"})
settings = dataclasses.replace(synthesizer.settings, batch_size=64)
synthesizer([SENTENCES[0]], settings)


def seconds(n: int = 36) -> float:
    torch.set_num_threads(2)
    start = time.perf_counter()
    synthesizer([SENTENCES[i % len(SENTENCES)] for i in range(n)], settings)
    return time.perf_counter() - start


async def main(order: list[str]) -> None:
    out = [f"{where} {seconds() if where == 'm' else await asyncio.to_thread(seconds):.2f}" for where in order]
    print(" | ".join(out), flush=True)


asyncio.run(main(sys.argv[1].split(",")))
