"""How many CPU threads a command computes with, chosen before torch starts its thread pools.

PyTorch's OpenMP threads wait for each other by spinning. When one of them shares its core with
other work (a training lane, a corpus job, a second command), every parallel region waits for the
thread that lost its core, and a run is several times slower than on fewer threads: on a 2-core
AMD EPYC Zen 3 with one core busy, batch-1 decoding of the bundled voice took 19.6 ms per step on
2 threads against 5.6 ms on one, and a training update 10.1 s against 3.2 (``tts bench
contention``; docs/speed.md, "Sharing the CPU"). So by default a command takes only the cores that
are idle when it starts (:func:`choose_threads`); ``--threads N`` or ``OMP_NUM_THREADS`` choose
instead. A long run (training) whose count was chosen that way keeps choosing as it goes
(:class:`SharedCores`): one thread per core that other processes left idle since its last look.

No torch here: the choice is made before torch is imported, through the environment it reads
(``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``), so ``tts --help`` stays fast.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal, Mapping

log = logging.getLogger(__name__)

#: where Linux counts each CPU's time (jiffies) since boot
PROC_STAT = Path("/proc/stat")
#: how long :func:`busy_cores` watches the CPUs
SAMPLE_SECONDS = 0.1
#: the shortest time between two looks of :class:`SharedCores`
FOLLOW_SECONDS = 30.0


@dataclass(frozen=True)
class ThreadChoice:
    """``threads`` torch will use, out of ``cores`` this process may run on, and why: asked for
    (``--threads``), set in the environment (``OMP_NUM_THREADS``), or ``idle`` cores (``busy``: how
    many cores' worth of other work was running, None where the CPUs' counters cannot be read)."""

    threads: int
    cores: int
    source: Literal["--threads", "OMP_NUM_THREADS", "idle"]
    busy: float | None = None


#: the choice :func:`use_threads` applied in this process (None: none was)
_applied: ThreadChoice | None = None


def usable_cores() -> list[int]:
    """The CPUs this process may run on (its affinity; every CPU where that is unknown)."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def cpu_jiffies(cores: list[int], stat: Path = PROC_STAT) -> tuple[int, int] | None:
    """(busy, total) time of ``cores`` since boot, in jiffies, from ``/proc/stat`` (busy: user,
    nice, system, irq, softirq and steal; total adds idle and iowait); None where it cannot be read."""
    wanted = {f"cpu{c}" for c in cores}
    busy = total = 0
    try:
        lines = stat.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        name, *fields = line.split()
        if name not in wanted or len(fields) < 8:
            continue
        user, nice, system, idle, iowait, irq, softirq, steal = (int(f) for f in fields[:8])
        work = user + nice + system + irq + softirq + steal
        busy, total = busy + work, total + work + idle + iowait
    return (busy, total) if total else None


def busy_cores(cores: list[int], seconds: float = SAMPLE_SECONDS, stat: Path = PROC_STAT) -> float | None:
    """How many of ``cores`` other work keeps busy: their busy share over ``seconds`` (while this
    process sleeps) times their number; None where ``/proc/stat`` cannot be read."""
    before = cpu_jiffies(cores, stat)
    time.sleep(seconds)
    after = cpu_jiffies(cores, stat)
    if before is None or after is None or after[1] <= before[1]:
        return None
    return len(cores) * (after[0] - before[0]) / (after[1] - before[1])


def idle_threads(cores: int, busy: float) -> int:
    """Threads for ``cores`` of which ``busy`` cores' worth is taken: one per core that is not,
    a core counting as taken from half its time on, and at least one."""
    return max(1, cores - int(busy + 0.5))


def choose_threads(requested: int | None, environ: Mapping[str, str] = os.environ,
                   stat: Path = PROC_STAT) -> ThreadChoice:
    """The thread count for a command: ``requested`` (``--threads``) if given, else a positive
    ``OMP_NUM_THREADS`` in ``environ``, else one per core idle now (:func:`busy_cores`; every
    usable core where the counters cannot be read)."""
    cores = usable_cores()
    if requested is not None:
        return ThreadChoice(requested, len(cores), "--threads")
    preset = environ.get("OMP_NUM_THREADS", "")
    if preset.isdigit() and int(preset) > 0:
        return ThreadChoice(int(preset), len(cores), "OMP_NUM_THREADS")
    busy = busy_cores(cores, stat=stat) if len(cores) > 1 else 0.0
    threads = len(cores) if busy is None else idle_threads(len(cores), busy)
    return ThreadChoice(threads, len(cores), "idle", None if busy is None else round(busy, 2))


def use_threads(requested: int | None) -> ThreadChoice:
    """Choose (:func:`choose_threads`) and apply: through the environment that torch, MKL and the
    recognizer read when they start, and directly where torch is already imported."""
    global _applied
    _applied = choice = choose_threads(requested)
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(choice.threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(choice.threads)
    if choice.source == "idle" and choice.threads < choice.cores:
        log.debug("%.1f of %d cores busy with other work: computing on %d thread(s) (--threads N to choose)",
                  choice.busy, choice.cores, choice.threads)
    return choice


def tree_jiffies(pid: str = "self", proc: Path = Path("/proc")) -> int | None:
    """CPU time of process ``pid`` and every descendant alive now, in jiffies (user and system time
    of each, and of the children each has already reaped); None where ``/proc`` cannot be read."""
    total, pending = 0, [pid]
    while pending:
        process = pending.pop()
        try:
            fields = (proc / process / "stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
            for children in (proc / process / "task").glob("*/children"):
                pending += children.read_text().split()
        except (OSError, IndexError, ValueError):  # a descendant that ended meanwhile counts no more
            if process == pid:
                return None
    return total


class SharedCores:
    """For a long run whose thread count was chosen from the idle cores: at each :meth:`adjust`
    at least ``interval`` seconds after the last look, how many cores' worth of the usable cores
    other processes used since then (the cores' busy time less this process tree's), and the
    thread count set to one per core they left idle (:func:`idle_threads`). ``threads``: the count
    now; ``set_threads`` applies one (``torch.set_num_threads``). Looks go by the clock, not by
    steps: a step that other work slows ten times must not delay the next look ten times."""

    def __init__(self, threads: int, set_threads: Callable[[int], None], proc: Path = Path("/proc"),
                 interval: float = FOLLOW_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.cores, self.threads, self.set_threads, self.proc = usable_cores(), threads, set_threads, proc
        self.interval, self.clock = interval, clock
        self._before, self._looked = self._reading(), clock()

    def _reading(self) -> tuple[int, int, int] | None:
        """(busy, total) jiffies of the usable cores and this process tree's jiffies."""
        cores, own = cpu_jiffies(self.cores, self.proc / "stat"), tree_jiffies(proc=self.proc)
        return None if cores is None or own is None else (*cores, own)

    def others(self) -> float | None:
        """Cores' worth of other processes' work since the last call (None where unreadable)."""
        before, now = self._before, self._reading()
        self._before = now
        if before is None or now is None or now[1] <= before[1]:
            return None
        busy = (now[0] - before[0]) - (now[2] - before[2])
        return max(0.0, len(self.cores) * busy / (now[1] - before[1]))

    def adjust(self) -> tuple[int, float, float] | None:
        """Once ``interval`` seconds have passed since the last look: set the thread count for the
        work measured since then; (count, other work in cores, seconds watched) when the count
        changed, else None (also before the interval is up)."""
        now = self.clock()
        if now - self._looked < self.interval:
            return None
        watched, self._looked = now - self._looked, now
        others = self.others()
        if others is None:
            return None
        threads = idle_threads(len(self.cores), others)
        if threads == self.threads:
            return None
        self.threads = threads
        self.set_threads(threads)
        return threads, round(others, 2), round(watched, 1)


def shared_cores(set_threads: Callable[[int], None]) -> SharedCores | None:
    """A :class:`SharedCores` for this process where :func:`use_threads` chose its count from the
    idle cores (not where ``--threads`` or ``OMP_NUM_THREADS`` fixed it, nor outside the command line)."""
    if _applied is None or _applied.source != "idle" or _applied.cores < 2:
        return None
    return SharedCores(_applied.threads, set_threads)
