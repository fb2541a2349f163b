"""tts.data.workers: pools whose workers die of the first SIGTERM, whenever it comes."""

import multiprocessing as mp
import os
import signal

from tts.data.workers import STOP_SIGNALS, started_pool


def _sigterm_to_the_first_worker(marker: str) -> None:
    """A worker's setup that sends SIGTERM to itself while it starts, in the first worker only (its
    pid goes to ``marker``), as a pool torn down early would."""
    if not os.path.exists(marker):
        with open(marker, "w") as fh:
            fh.write(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGTERM)


def test_a_started_pools_workers_ran_their_setup_and_take_the_stop_signals_as_a_pool_needs(tmp_path):
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    with started_pool(2, os.chdir, (str(tmp_path),)) as pool:
        assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before   # the parent's signals flow again
        assert {pool.apply(os.getcwd) for _ in range(4)} == {str(tmp_path)}
        assert pool.apply(signal.getsignal, (signal.SIGINT,)) == signal.SIG_IGN   # Ctrl-C is the parent's
        assert pool.apply(signal.getsignal, (signal.SIGTERM,)) == signal.SIG_DFL  # terminate() ends it at once
        assert not set(STOP_SIGNALS) & pool.apply(signal.pthread_sigmask, (signal.SIG_BLOCK, []))
        workers = {p.pid for p in mp.active_children()}
    assert len(workers) >= 2
    assert not workers & {p.pid for p in mp.active_children()}   # leaving the block ended them


def test_a_sigterm_that_reaches_a_starting_worker_ends_it_once_let_through(tmp_path):
    """Held by the kernel while the worker starts (never lost), the signal ends it as soon as the
    worker lets it through; the pool works on with a replacement."""
    marker = tmp_path / "first_worker"
    with started_pool(1, _sigterm_to_the_first_worker, (str(marker),)) as pool:
        first = int(marker.read_text())
        assert pool.apply(os.getpid) != first
