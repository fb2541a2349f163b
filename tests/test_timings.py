"""True phone timings of the synthetic corpus: Festival's segments on the stored wav's clock, the
files that hold them, and a rebuild that adds them without changing the audio."""

import subprocess
import sys
from pathlib import Path

import pytest

from tts.data import read_metadata
from tts.data.timings import PhoneTiming, phones_from_ends, read_timings, timings_path, write_timings
from tts.errors import TTSError

ROOT = Path(__file__).resolve().parents[1]
FESTIVAL = subprocess.run(["which", "text2wave"], capture_output=True).returncode == 0


def test_phone_ends_become_phones_on_the_trimmed_clock():
    ends = [(0.20, "pau"), (0.30, "hh"), (0.45, "ay"), (0.80, "pau")]
    phones = phones_from_ends(ends, offset=0.25, duration=0.40)  # 0.25 s trimmed before, audio ends at 0.65
    assert phones == [PhoneTiming("hh", 0.0, 0.05), PhoneTiming("ay", 0.05, 0.2), PhoneTiming("pau", 0.2, 0.4)]


def test_timings_round_trip_and_bad_lines_name_the_file_and_line(tmp_path):
    phones = [PhoneTiming("pau", 0.0, 0.1), PhoneTiming("k", 0.1, 0.175)]
    path = timings_path(tmp_path, "U1")
    write_timings(path, phones)
    assert read_timings(path) == phones and not list(path.parent.glob("*.tmp"))
    path.write_text("pau\t0.0\t0.1\nk\t0.3\n")
    with pytest.raises(TTSError, match=r"U1.tsv:2: expected"):
        read_timings(path)
    path.write_text("k\t0.3\t0.2\n")
    with pytest.raises(TTSError, match=r"U1.tsv:1: .*start <= end"):
        read_timings(path)


@pytest.mark.skipif(not FESTIVAL, reason="festival not installed (make system-deps)")
def test_the_festival_corpus_records_phone_timings_and_a_rebuild_adds_them_with_the_same_audio(tmp_path):
    out = tmp_path / "syn"
    cmd = [sys.executable, str(ROOT / "recipes/synthetic/prepare.py"), "--out", str(out), "--size", "3",
           "--n-val", "1", "--n-test", "1", "--jobs", "2"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "3 spoken" in done.stdout
    utts = read_metadata(out)
    import soundfile as sf

    for utt in utts:
        phones = read_timings(timings_path(out, utt.id))
        duration = sf.info(out / "wavs" / f"{utt.id}.wav").duration
        assert phones[0].start == 0.0 and phones[-1].end == pytest.approx(duration, abs=1e-4)
        assert all(a.end == b.start for a, b in zip(phones, phones[1:]))  # contiguous
        spoken = [p.phone for p in phones if p.phone != "pau"]
        assert len(spoken) >= 2 * len(utt.text.split())  # every word has phones
    audio = {u.id: (out / "wavs" / f"{u.id}.wav").read_bytes() for u in utts}
    timings_path(out, utts[0].id).unlink()  # a corpus from before timings: spoken again for them
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "2 kept, 1 timed" in done.stdout and "warning" not in done.stdout
    assert {u.id: (out / "wavs" / f"{u.id}.wav").read_bytes() for u in utts} == audio
    assert timings_path(out, utts[0].id).is_file()


def test_an_engine_that_stalls_once_is_run_again(monkeypatch):
    """A corpus build loses no utterance to a passing stall (a paused or overloaded machine)."""
    from tts.data import engines

    calls = []

    def stalling(cmd, **kwargs):
        calls.append(cmd)
        if len(calls) == 1:
            raise subprocess.TimeoutExpired(cmd, kwargs["timeout"])
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(engines.subprocess, "run", stalling)
    assert engines.run_engine(["text2wave", "x"]).returncode == 0 and len(calls) == 2

    def stuck(cmd, **kwargs):
        raise subprocess.TimeoutExpired(cmd, kwargs["timeout"])

    monkeypatch.setattr(engines.subprocess, "run", stuck)
    with pytest.raises(TTSError, match="text2wave took more than 300 s, 2 times"):
        engines.run_engine(["text2wave", "x"])
