"""Worker pools that stop cleanly: the stop signals (SIGINT, SIGTERM) of a command that shares work
out among processes.

A pool is torn down with SIGTERM to each worker (``Pool.terminate``, also on a normal exit), so a
worker must die of the first SIGTERM it is sent, whenever it comes. A forked worker inherits the
parent's Python handler and clears the signals pending in the interpreter right after the fork, so
a SIGTERM that reaches it before it has set its own handler can be lost; the worker then waits for
work forever and the pool for the worker (CI saw the corpus recipe hang so, its pool torn down
before a worker slowed by a busy machine had started). :func:`started_pool` spawns its workers with
the stop signals blocked (held by the kernel, never lost) until each has set them to their final
actions (:func:`quiet_worker`), and returns once every worker has.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, TypeVar

from tts.errors import Stopped

T = TypeVar("T")
R = TypeVar("R")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: how long a pool waits for its workers to start before it works with those that have
WORKER_START_SECONDS = 300.0


@contextmanager
def stop_signals_raise(what: str) -> Iterator[None]:
    """Within the block SIGINT and SIGTERM raise :class:`~tts.errors.Stopped` in this process (the
    command reports one line and exits 130 / 143), so a pool is torn down rather than orphaned."""
    def stop(signum: int, _frame: object) -> None:
        raise Stopped(signum, what)

    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return
    previous = {s: signal.signal(s, stop) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def quiet_worker() -> None:
    """A pool worker's stop signals: Ctrl-C (which reaches the whole process group) is the parent's
    to report, and SIGTERM (the pool's terminate(), or a kill of the group) ends the worker without a
    word. SIGTERM gets the kernel's default action, not a Python handler: a Python handler runs only
    between bytecodes, so a SIGTERM that lands just before the worker blocks on the task queue's lock
    would never be acted on, and the pool would wait for that worker forever."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _start_worker(ready: Any, setup: Callable[..., None] | None, setup_args: tuple) -> None:
    """A pool worker's start: ``setup(*setup_args)`` (what its tasks need), quiet stop signals, then
    the stop signals the parent held back while spawning it (inherited as blocked) are let through
    (a SIGTERM held meanwhile ends the worker here), and ``ready`` (a barrier the parent waits on
    too) is passed."""
    if setup is not None:
        setup(*setup_args)
    quiet_worker()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    _wait_for_start(ready)


def _wait_for_start(ready: Any) -> None:
    """Wait at the start-up barrier shared by a pool and its workers for at most
    :data:`WORKER_START_SECONDS`; a barrier broken by a side that stopped waiting lets this one
    work on regardless."""
    try:
        ready.wait(WORKER_START_SECONDS)
    except threading.BrokenBarrierError:
        pass


@contextmanager
def started_pool(workers: int, setup: Callable[..., None] | None = None, setup_args: tuple = ()) -> Iterator[Any]:
    """A spawn pool of ``workers``, each running ``setup(*setup_args)`` first (a module-level
    function: it travels by name), returned once every worker has started. Until then the parent's
    stop signals wait too: a Ctrl-C or ``kill`` that tore the pool down while a child was still
    reading its start-up data from the parent would leave that child's EOFError traceback on the
    terminal. Leaving the block terminates the pool."""
    context = mp.get_context("spawn")
    ready = context.Barrier(workers + 1)
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        pool = context.Pool(workers, _start_worker, (ready, setup, setup_args))
    except BaseException:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        raise
    with pool:  # torn down however the block ends, also by a stop raised when the signals are let through
        try:
            _wait_for_start(ready)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        yield pool


def share_out(function: Callable[[T], R], items: Iterable[T], workers: int, setup: Callable[..., None] | None = None,
              setup_args: tuple = (), chunksize: int = 1) -> Iterator[R]:
    """``function`` of every item, in the order they finish: in a :func:`started_pool` of ``workers``
    (``function`` and ``setup`` module-level: they travel by name), or in this process after
    ``setup(*setup_args)`` where one worker or one item leaves nothing to share. Closing the
    iterator early (a stop raised while it is read) tears the pool down."""
    items = list(items)
    if workers > 1 and len(items) > 1:
        with started_pool(workers, setup, setup_args) as pool:
            yield from pool.imap_unordered(function, items, chunksize=chunksize)
        return
    if setup is not None:
        setup(*setup_args)
    yield from map(function, items)
