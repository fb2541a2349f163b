"""How long the command line makes a user wait: cold-start wall and CPU time of ``tts --help``,
``tts g2p`` and a one-sentence ``tts synthesize``, each a fresh process, median of several runs."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from tts.devices import describe_device
from tts.errors import TTSError

#: the command lines timed, by name (``{out}``: a scratch folder)
COMMAND_LINES = {
    "help": ["--help"],
    "g2p": ["g2p", "Hello world."],
    "synthesize": ["synthesize", "--text", "Hello.", "--out", "{out}/x.wav", "--no-plots"],
}


def _timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the child) of one ``python -m tts.cli ...``."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tts.cli", *argv], capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode != 0:
        raise TTSError(f"tts {' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def bench_cli(runs: int = 5) -> dict:
    """Per command line: the median wall and CPU seconds over ``runs`` cold starts (after one
    untimed run that warms the file cache)."""
    results: dict = {"hardware": describe_device(torch.device("cpu")), "runs": runs}
    with tempfile.TemporaryDirectory() as tmp:
        for name, template in COMMAND_LINES.items():
            argv = [word.format(out=tmp) for word in template]
            _timed(argv)
            walls, cpus = zip(*(_timed(argv) for _ in range(runs)))
            for wav in Path(tmp).glob("*.wav"):
                wav.unlink()
            results[name] = {"command": "tts " + " ".join(template).replace("{out}/", ""),
                             "wall_seconds": round(statistics.median(walls), 3),
                             "cpu_seconds": round(statistics.median(cpus), 3)}
    return results
