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
