"""``tts bench serve``: ``tts serve`` as a real process under concurrent load — requests per
second, latency percentiles, errors and the service's resident memory."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

from tts.errors import TTSError
from tts.vocoders.catalogue import DEFAULT_VOCODER

SENTENCES = ["The quick brown fox jumps over the lazy dog.", "Please call me back after lunch.",
             "The train leaves at seven in the morning.", "We will need two more chairs for the meeting.",
             "She reads a book every week.", "Turn left at the second traffic light."]


def free_port() -> int:
    """A TCP port free on the loopback interface now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def resident_mb(pid: int) -> float:
    """Process ``pid``'s resident memory (VmRSS) in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _batches(base: str) -> tuple[int, int]:
    """The batches ``tts serve`` has computed so far and the requests they held (its ``/health``)."""
    with urllib.request.urlopen(f"{base}/health", timeout=10) as response:
        batches = json.load(response)["batches"]
    return batches["count"], batches["requests"]


def _post(base: str, text: str) -> tuple[int, float]:
    """Status and seconds of one ``POST /synthesize``."""
    request = urllib.request.Request(f"{base}/synthesize", data=json.dumps({"text": text}).encode(),
                                     headers={"Content-Type": "application/json"})
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    return status, time.perf_counter() - start


@contextmanager
def running_service(options: list[str]) -> Iterator[tuple[str, subprocess.Popen]]:
    """``tts serve OPTIONS`` started as a user starts it, on a free loopback port, once it answers
    ``/health``: its base URL and process; stopped on leaving."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "tts.cli", "serve", *options, "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            if server.poll() is not None:
                raise TTSError(f"tts serve ended at start: {server.stdout.read().strip()[-300:] if server.stdout else ''}")
            try:
                urllib.request.urlopen(f"{base}/health", timeout=1)
                break
            except OSError:  # not listening yet (refused), or listening but still loading (timed out)
                time.sleep(0.2)
        yield base, server
    finally:
        server.terminate()
        server.wait(timeout=30)


def bench_serve(checkpoint: str | None = None, vocoder: str | None = None, requests: int = 50, rounds: int = 2,
                spread: float = 0.0) -> dict:
    """Start ``tts serve`` (``checkpoint``, default the bundled voice), warm it with one request,
    then send ``rounds`` × ``requests`` requests, each round all at once (``spread`` 0) or one
    every ``spread / requests`` seconds, so that batches are still running when the next arrive."""
    vocoder = vocoder or DEFAULT_VOCODER
    voice = ["--voice", f"bench={checkpoint}"] if checkpoint else []
    with running_service([*voice, "--vocoder", vocoder, "--max-jobs", str(requests + 1)]) as (base, server):
        _post(base, SENTENCES[0])  # warm-up
        result: dict = {"vocoder": vocoder, "requests_per_round": requests, "spread_s": spread, "rounds": [],
                        "resident_mb_after_warmup": resident_mb(server.pid)}
        for _ in range(rounds):
            texts = [SENTENCES[i % len(SENTENCES)] for i in range(requests)]
            batches_before, batched_before = _batches(base)
            start = time.perf_counter()

            def send(i: int) -> tuple[int, float]:
                time.sleep(max(0.0, start + i * spread / requests - time.perf_counter()))
                return _post(base, texts[i])

            with ThreadPoolExecutor(requests) as pool:
                answers = list(pool.map(send, range(requests)))
            wall = time.perf_counter() - start
            latencies = np.array([seconds for _, seconds in answers])
            batches, batched = (now - before for now, before in zip(_batches(base), (batches_before, batched_before)))
            result["rounds"].append({"errors": sum(status != 200 for status, _ in answers),
                                     "batches": batches, "mean_batch": round(batched / max(batches, 1), 1),
                                     "requests_per_second": round(requests / wall, 2),
                                     "latency_p50_s": round(float(np.percentile(latencies, 50)), 2),
                                     "latency_p95_s": round(float(np.percentile(latencies, 95)), 2),
                                     "resident_mb_after": resident_mb(server.pid)})
        return result
