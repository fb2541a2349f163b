"""The thread count a command computes with (tts.threads): asked for, preset, or one per idle core."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tts import threads
from tts.cli import main

STAT = """cpu  900 0 300 7000 100 0 0 0 0 0
cpu0 100 0 50 800 50 0 0 0 0 0
cpu1 400 0 100 300 0 0 0 0 0 0
cpu2 400 0 150 5900 50 0 0 0 0 0
intr 12345
"""


def test_jiffies_of_the_chosen_cores_only(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text(STAT)
    assert threads.cpu_jiffies([0, 1], stat) == (650, 1800)
    assert threads.cpu_jiffies([2], stat) == (550, 6500)
    assert threads.cpu_jiffies([7], stat) is None
    assert threads.cpu_jiffies([0], tmp_path / "missing") is None


def test_busy_cores_is_the_busy_share_times_the_cores(monkeypatch):
    readings = iter([(1000, 4000), (1150, 4200)])  # 150 of 200 jiffies busy on 2 cores: 1.5 cores
    monkeypatch.setattr(threads, "cpu_jiffies", lambda cores, stat: next(readings))
    assert threads.busy_cores([0, 1], seconds=0.0) == pytest.approx(1.5)
    monkeypatch.setattr(threads, "cpu_jiffies", lambda cores, stat: (5, 10))  # no time passed
    assert threads.busy_cores([0, 1], seconds=0.0) is None


@pytest.mark.parametrize("cores, busy, expected", [(2, 0.02, 2), (2, 0.49, 2), (2, 0.97, 1), (2, 1.9, 1),
                                                   (2, 2.0, 1), (8, 2.6, 5), (1, 0.0, 1)])
def test_one_thread_per_idle_core(cores, busy, expected):
    assert threads.idle_threads(cores, busy) == expected


def test_asked_beats_preset_beats_idle(monkeypatch, tmp_path):
    monkeypatch.setattr(threads, "usable_cores", lambda: [0, 1, 2, 3])
    monkeypatch.setattr(threads, "busy_cores", lambda cores, stat: 1.2)
    assert threads.choose_threads(3, {"OMP_NUM_THREADS": "1"}) == threads.ThreadChoice(3, 4, "--threads")
    assert threads.choose_threads(None, {"OMP_NUM_THREADS": "1"}) == threads.ThreadChoice(1, 4, "OMP_NUM_THREADS")
    for preset in ("", "0", "two"):  # not a thread count: chosen from the idle cores
        assert threads.choose_threads(None, {"OMP_NUM_THREADS": preset}) == threads.ThreadChoice(3, 4, "idle", 1.2)
    monkeypatch.setattr(threads, "busy_cores", lambda cores, stat: None)  # counters unreadable: every core
    assert threads.choose_threads(None, {}) == threads.ThreadChoice(4, 4, "idle", None)


@pytest.mark.skipif(not Path("/proc/stat").exists() or len(threads.usable_cores()) < 2, reason="Linux, 2+ cores")
def test_a_spinning_process_counts_as_a_busy_core():
    spinner = subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"])
    try:
        busy = threads.busy_cores(threads.usable_cores(), seconds=0.5)
    finally:
        spinner.kill()
        spinner.wait()
    assert busy is not None and busy >= 0.6


def test_use_threads_sets_torch_and_the_environment(monkeypatch):
    before = torch.get_num_threads()
    monkeypatch.setenv("MKL_NUM_THREADS", "")
    try:
        choice = threads.use_threads(1)
        assert choice.threads == 1 and torch.get_num_threads() == 1
        assert os.environ["OMP_NUM_THREADS"] == os.environ["MKL_NUM_THREADS"] == "1"
    finally:
        torch.set_num_threads(before)


def test_threads_flag_is_checked(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["synthesize", "--text", "Hi.", "--out", "never", "--threads", "0"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip() == ("error: argument --threads: must be at least 1, got 0 "
                                               "(see 'tts synthesize --help')")
    assert not Path("never").exists()


def write_process(proc: Path, pid: str, ticks: tuple[int, int, int, int], children: list[str]) -> None:
    """A /proc/<pid> with its stat (utime, stime, cutime, cstime) and one task's children."""
    (proc / pid / "task" / "1").mkdir(parents=True, exist_ok=True)
    (proc / pid / "stat").write_text(f"{pid} (tts (worker) x) S 1 1 1 0 -1 0 0 0 0 0 {' '.join(map(str, ticks))} 20 0\n")
    (proc / pid / "task" / "1" / "children").write_text(" ".join(children))


def write_cores(proc: Path, busy: int, idle: int) -> None:
    (proc / "stat").write_text("".join(f"cpu{c} {busy} 0 0 {idle} 0 0 0 0 0 0\n" for c in (0, 1)))


def test_tree_jiffies_counts_the_living_descendants(tmp_path):
    write_process(tmp_path, "self", (10, 5, 3, 2), ["41"])
    write_process(tmp_path, "41", (7, 1, 0, 0), ["42"])
    write_process(tmp_path, "42", (4, 0, 0, 0), [])
    assert threads.tree_jiffies(proc=tmp_path) == 32
    write_process(tmp_path, "self", (10, 5, 3, 2), ["41", "40"])  # 40 ended: looked at first
    (tmp_path / "42" / "stat").unlink()  # descendants that ended meanwhile: the others still count
    assert threads.tree_jiffies(proc=tmp_path) == 28
    assert threads.tree_jiffies(proc=tmp_path / "missing") is None


def test_shared_cores_follow_the_other_processes(tmp_path, monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: [0, 1])
    applied = []
    write_cores(tmp_path, busy=100, idle=900)
    write_process(tmp_path, "self", (50, 0, 0, 0), ["7"])
    write_process(tmp_path, "7", (0, 0, 0, 0), [])
    clock = iter(range(0, 1000, 40))  # 40 s between looks
    cores = threads.SharedCores(2, applied.append, proc=tmp_path, clock=lambda: float(next(clock)))
    # 170 of 200 jiffies busy; this run and its worker 60 + 20 of them: others 0.9 cores → one thread
    write_cores(tmp_path, busy=185, idle=915)
    write_process(tmp_path, "self", (110, 0, 0, 0), ["7"])
    write_process(tmp_path, "7", (20, 0, 0, 0), [])
    assert cores.adjust() == (1, 0.9, 40.0) and applied == [1] and cores.threads == 1
    # the other work ended: all busy time is this run's → back to both cores
    write_cores(tmp_path, busy=235, idle=965)
    write_process(tmp_path, "self", (210, 0, 0, 0), ["7"])
    assert cores.adjust() == (2, 0.0, 40.0) and applied == [1, 2]
    write_cores(tmp_path, busy=285, idle=1015)
    write_process(tmp_path, "self", (310, 0, 0, 0), ["7"])
    assert cores.adjust() is None and applied == [1, 2]  # nothing changed
    (tmp_path / "stat").unlink()
    assert cores.adjust() is None and cores.threads == 2  # counters unreadable: the count stays


def test_shared_cores_look_only_once_their_interval_is_up(tmp_path, monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: [0, 1])
    write_cores(tmp_path, busy=100, idle=900)
    write_process(tmp_path, "self", (50, 0, 0, 0), [])
    now = [0.0]
    cores = threads.SharedCores(2, lambda n: None, proc=tmp_path, interval=30.0, clock=lambda: now[0])
    write_cores(tmp_path, busy=300, idle=900)  # both cores busy with other work
    now[0] = 29.0
    assert cores.adjust() is None and cores.threads == 2  # too soon: not read
    now[0] = 31.0
    assert cores.adjust() == (1, 2.0, 31.0) and cores.threads == 1


def test_only_a_count_chosen_from_idle_cores_follows_them(monkeypatch):
    monkeypatch.setattr(threads, "_applied", threads.ThreadChoice(2, 2, "--threads"))
    assert threads.shared_cores(lambda n: None) is None
    monkeypatch.setattr(threads, "_applied", threads.ThreadChoice(2, 2, "OMP_NUM_THREADS"))
    assert threads.shared_cores(lambda n: None) is None
    monkeypatch.setattr(threads, "_applied", None)
    assert threads.shared_cores(lambda n: None) is None
    monkeypatch.setattr(threads, "_applied", threads.ThreadChoice(1, 2, "idle", 1.0))
    if Path("/proc/stat").exists():
        shared = threads.shared_cores(lambda n: None)
        assert shared is not None and shared.threads == 1
