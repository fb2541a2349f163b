"""tts.data.workers: pools whose workers die of the first SIGTERM, whenever it comes."""

import multiprocessing as mp
import os
import signal

from tts.data.workers import STOP_SIGNALS, share_out, started_pool


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


def test_shared_out_work_gives_every_result_with_workers_or_in_this_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path.parent)   # restored after the in-process setup below moves this process
    assert sorted(share_out(abs, [-3, 1, -2, 4], workers=2)) == [1, 2, 3, 4]
    assert list(share_out(os.path.isabs, ["x"], workers=2, setup=os.chdir, setup_args=(str(tmp_path),))) == [False]
    assert os.getcwd() == str(tmp_path)   # one item: no pool, the setup ran here
    started = share_out(abs, range(-50, 0), workers=2)
    assert next(started) > 0
    workers = {p.pid for p in mp.active_children()}
    started.close()                      # read no further: the pool is torn down
    assert len(workers) >= 2 and not workers & {p.pid for p in mp.active_children()}
