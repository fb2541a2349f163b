"""Faults while writing: a full disk during synthesize, export and a training checkpoint ends in one
clear line and leaves no partial file under the final name; what was there before is kept."""

import errno
import json

import numpy as np
import pytest
import soundfile as sf
import torch

from tts import checkpoint, cli
from tts.data.corpus import read_metadata
from tts.errors import TTSError


def full_disk_after(fraction: float, real_write):
    """A writer that writes part of its output, then fails as a full disk does."""
    def write(target, *args, **kwargs):
        real_write(target, *args, **kwargs)
        with open(target, "r+b") as fh:  # keep a truncated file behind, as a full disk does
            fh.truncate(int(fh.seek(0, 2) * fraction))
        raise OSError(errno.ENOSPC, "No space left on device")
    return write


def test_a_full_disk_during_synthesize_leaves_no_truncated_wav(tiny_experiment, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sf, "write", full_disk_after(0.5, sf.write))
    out = tmp_path / "speech.wav"
    code = cli.main(["synthesize", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"), "--text", "Hi.",
                     "--out", str(out), "--max-frames-per-token", "2"])
    assert code == 2
    assert f"error: cannot write {out} (No space left on device)" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob(".*.tmp"))  # neither the wav nor its temp file


def test_a_full_disk_during_export_and_checkpoint_writes(tiny_experiment, tmp_path, monkeypatch, capsys):
    release = tmp_path / "release.pt"
    release.write_bytes(b"the previous release")
    real_save = torch.save

    def failing_save(obj, fh, *args, **kwargs):
        real_save(obj, fh, *args, **kwargs)
        fh.truncate(100)
        raise RuntimeError("[enforce fail at inline_container.cc:672] . PytorchStreamWriter failed writing file")

    monkeypatch.setattr(torch, "save", failing_save)
    assert cli.main(["export", str(tiny_experiment / "checkpoint_00000004.pt"), "--out", str(release)]) == 2
    err = capsys.readouterr().err
    assert f"error: cannot write {release} ([enforce fail at inline_container.cc:672]" in err and "Traceback" not in err
    assert release.read_bytes() == b"the previous release" and not list(tmp_path.glob(".*.tmp"))
    loaded = checkpoint.load(tiny_experiment / "checkpoint_00000004.pt")
    with pytest.raises(TTSError, match=r"cannot write .*ckpt\.pt \(\[enforce fail"):
        checkpoint.save(tmp_path / "ckpt.pt", loaded.model, loaded.config, loaded.inventory, 4)
    assert not (tmp_path / "ckpt.pt").exists()


def test_a_metadata_file_with_a_byte_order_mark_keeps_its_first_utterance(tmp_path):
    (tmp_path / "metadata.csv").write_bytes("\ufeffA|one.|one.\nB|two.|two.\n".encode("utf-8"))
    assert [u.id for u in read_metadata(tmp_path)] == ["A", "B"]


def test_a_mel_saved_with_savez_vocodes(tmp_path, capsys):
    mel = np.random.default_rng(0).normal(-5, 1, size=(80, 20)).astype(np.float32)
    np.savez(tmp_path / "mel.npz", mel=mel)
    (tmp_path / "mel.npz").rename(tmp_path / "renamed.npy")  # an .npz under an .npy name reads too
    assert cli.main(["vocode", str(tmp_path / "renamed.npy"), "-o", str(tmp_path / "x.wav"), "--iters", "2"]) == 0
    assert sf.info(tmp_path / "x.wav").frames == 19 * 256
    assert json.dumps(capsys.readouterr().err) == '""'


def cpu_seconds(pid: int) -> float:
    """The CPU time a running process has used (user + system), from /proc."""
    import os

    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("command", ["resynth", "synthesize"])
def test_ctrl_c_during_long_work_leaves_nothing_under_the_final_name(command, tiny_experiment, speech_wav, tmp_path):
    """SIGINT in the middle of a long resynth (Griffin-Lim, many iterations on a minute of audio) or
    a long synthesize (a runaway decode): exit 130, no file under the output's name, no temporary
    file left beside it."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "out" / "x.wav"
    out.parent.mkdir()
    if command == "resynth":
        wav, sr = sf.read(speech_wav)
        long = tmp_path / "long.wav"
        sf.write(long, np.tile(wav, int(np.ceil(60 * sr / len(wav)))), sr)
        argv = ["resynth", str(long), "-o", str(out), "--iters", "3000"]
    else:
        argv = ["synthesize", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"), "--out", str(out),
                "--text", "A sentence that goes on and on. " * 6, "--stop-threshold", "1", "--max-steps", "100000",
                "--max-frames-per-token", "1000", "inference.split_sentences=false"]
    # SIGINT as a terminal delivers it, even when this suite runs in the background (where the
    # shell ignores SIGINT for its children, and Python keeps an ignored SIGINT ignored)
    process = subprocess.Popen([sys.executable, "-m", "tts.cli", *argv], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 180
        while cpu_seconds(process.pid) < 8 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)  # loaded, and working: 8 s of CPU, however busy the machine is
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()  # never left running, whatever failed
    assert process.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    assert list(out.parent.iterdir()) == []
