import subprocess
import sys

import numpy as np

from tts.audio import load_wav


def run_tts(*args, check=True):
    out = subprocess.run([sys.executable, "-m", "tts.cli", *args], capture_output=True, text=True, timeout=300)
    if check:
        assert out.returncode == 0, out.stderr
    return out


def test_g2p_command():
    out = run_tts("g2p", "Dr. Smith paid $3.50 for 2 books on March 3rd, 1999.")
    lines = out.stdout.splitlines()
    assert lines[0] == ("normalized: Doctor Smith paid three dollars, fifty cents for two books on "
                        "March third, nineteen ninety-nine.")
    assert "{D AA1 K T ER0} {S M IH1 TH} {P EY1 D} {TH R IY1} {D AA1 L ER0 Z}," in lines[1]
    assert lines[2].startswith("ids:") and len(lines[2].split()) > 40


def test_g2p_bad_text_is_one_line():
    out = run_tts("g2p", "   ", check=False)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and out.stderr.startswith("error: text is empty")


def test_resynth_and_vocode(tmp_path, speech_wav):
    out_wav = tmp_path / "re.wav"
    run_tts("resynth", str(speech_wav), "-o", str(out_wav), "--iters", "8")
    wav, sr = load_wav(out_wav)
    ref, _ = load_wav(speech_wav, 22050)
    assert sr == 22050 and abs(len(wav) - len(ref)) < 256
    mel = np.random.default_rng(0).normal(-5, 1, size=(80, 40)).astype(np.float32)
    np.save(tmp_path / "m.npy", mel)
    run_tts("vocode", str(tmp_path / "m.npy"), "-o", str(tmp_path / "v.wav"), "--iters", "4")
    assert len(load_wav(tmp_path / "v.wav")[0]) == 39 * 256


def test_audio_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.wav"
    bad.write_text("nope")
    out = run_tts("resynth", str(bad), "-o", str(tmp_path / "x.wav"), check=False)
    assert out.returncode == 2 and "bad.wav" in out.stderr and "Traceback" not in out.stderr
    out = run_tts("vocode", str(tmp_path / "missing.npy"), "-o", str(tmp_path / "x.wav"), check=False)
    assert out.returncode == 2 and "missing.npy" in out.stderr
