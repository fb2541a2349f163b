import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

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


def test_resume_is_a_flag_so_overrides_after_it_stay_overrides():
    from tts import cli

    argv = ["train", "--config", "c.yaml", "--data", "d", "--out", "e", "--resume", "train.max_steps=60"]
    args = cli.build_parser(argv).parse_args(argv)
    assert args.resume is True and args.resume_from is None and args.overrides == ["train.max_steps=60"]
    argv = ["train", "--config", "c.yaml", "--data", "d", "--out", "e", "--resume-from", "e/checkpoint_00000002.pt",
            "optim.lr=1e-4"]
    args = cli.build_parser(argv).parse_args(argv)
    assert args.resume_from == "e/checkpoint_00000002.pt" and args.overrides == ["optim.lr=1e-4"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.parametrize("command", [["synthesize", "--text", "Hi.", "--out", "{tmp}/s"],
                                     ["train", "--config", "configs/tacotron2_small.yaml", "--data", "{tmp}",
                                      "--out", "{tmp}/e"],
                                     ["synthesize", "--text", "Hi.", "--out", "{tmp}/s", "--device", "tpu"]])
def test_a_device_this_machine_lacks_is_one_error_line(command, tmp_path):
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    if "--device" not in args:
        args += ["--device", "cuda"]
    proc = subprocess.run([sys.executable, "-m", "tts.cli", *args], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1])
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "--device" in lines[0], proc.stderr[-1500:]
    assert not (tmp_path / "s").exists() and not (tmp_path / "e").exists()
