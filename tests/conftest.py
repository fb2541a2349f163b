"""Shared fixtures: speech-like audio the tests make themselves (no downloads)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from tts.data.toy import make_toy_corpus as make_tiny_corpus
from tts.data.toy import tone_speech

if TYPE_CHECKING:
    from tts.evaluation.scoring import Item
    from tts.synthesis import Synthesizer

__all__ = ["make_tiny_corpus", "overfit", "tiny_config_dict", "tone_speech"]

SR = 22050


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (``-n N``) the machine's cores are shared among the workers: each worker's
    torch gets its share, so that N workers do not each start a thread per core."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers:
        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(workers)))


def harmonic_speechlike(seconds: float = 2.0, sr: int = SR, seed: int = 0) -> np.ndarray:
    """A voiced, vibrato-modulated harmonic signal with syllable-like amplitude envelope."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    f0 = 140 + 25 * np.sin(2 * np.pi * 3.0 * t) + 10 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / sr
    wav = sum(np.sin(k * phase) / k * (1.0 + 0.6 * np.sin(2 * np.pi * (0.5 + 0.3 * k) * t)) for k in range(1, 25))
    envelope = 0.55 + 0.45 * np.sin(2 * np.pi * 4.0 * t) ** 2
    wav = wav * envelope + 0.01 * rng.standard_normal(len(t))
    return (0.5 * wav / np.abs(wav).max()).astype(np.float32)


@pytest.fixture(autouse=True)
def _threads_as_the_suite_has_them(monkeypatch):
    """Commands run in-process and in subprocesses on the suite's own thread count, not on one chosen
    from how busy the machine is at that moment (tts.threads; tested in test_threads.py)."""
    import torch

    monkeypatch.setenv("OMP_NUM_THREADS", str(torch.get_num_threads()))


@pytest.fixture(autouse=True)
def _a_cache_folder_of_its_own(tmp_path_factory, monkeypatch):
    """Evaluations keep the ceiling's transcripts (tts.evaluation.ceilings): each test in a fresh
    folder, never the user's."""
    monkeypatch.setenv("TTS_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="session")
def speech_wav(tmp_path_factory) -> Path:
    """A wav of real (espeak-ng) speech when the engine is installed, else a speech-like signal."""
    import soundfile as sf

    path = tmp_path_factory.mktemp("audio") / "speech.wav"
    if shutil.which("espeak-ng"):
        subprocess.run(["espeak-ng", "-w", str(path), "The birch canoe slid on the smooth planks. "
                        "Glue the sheet to the dark blue background."], check=True, capture_output=True)
    else:
        sf.write(path, harmonic_speechlike(3.0), SR)
    return path


# --------------------------------------------------------------------------- tiny corpus
def repo_script(relative: str, name: str | None = None) -> types.ModuleType:
    """A script of the repository (``egs/...``, ``recipes/...``; scripts, not a package) loaded as
    a module named ``name`` (default: the file's stem)."""
    path = Path(__file__).resolve().parents[1] / relative
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the script runs
    spec.loader.exec_module(module)
    return module


def tiny_config_dict() -> dict:
    """A small, fast model configuration for tests."""
    return {
        "data": {"max_frames_per_batch": 2000, "max_batch_size": 8, "num_workers": 0},
        "model": {"tacotron2": {
            "embedding_dim": 64, "encoder_conv_layers": 2, "encoder_conv_channels": 64, "encoder_lstm_dim": 64,
            "prenet_dims": [64, 64], "attention_rnn_dim": 128, "decoder_rnn_dim": 128, "reduction_factor": 2,
            "postnet": {"layers": 3, "channels": 64}, "attention": {"attention_dim": 64}}},
        "optim": {"lr": 2e-3},
        "train": {"max_steps": 4, "log_every": 1, "validate_every": 1000, "checkpoint_every": 2,
                  "keep_last": 2, "n_val_audio": 1},
        "inference": {"vocoder": "griffin-lim"},  # quick; the pretrained HiFi-GAN has tests of its own
    }


@pytest.fixture(scope="session")
def tiny_corpus(tmp_path_factory) -> Path:
    """Tiny tone-speech corpus with features computed for the tiny config."""
    from tts.config import config_from_dict
    from tts.data import compute_features

    root = make_tiny_corpus(tmp_path_factory.mktemp("tiny_corpus"))
    compute_features(root, config_from_dict(tiny_config_dict()), num_workers=1, progress=False)
    return root


@pytest.fixture(scope="session")
def tiny_experiment(tiny_corpus, tmp_path_factory) -> Path:
    """An experiment folder trained for a few steps on the tiny corpus (checkpoints at 2 and 4)."""
    from tts.config import config_from_dict
    from tts.training.trainer import Trainer

    exp = tmp_path_factory.mktemp("tiny_exp")
    d = tiny_config_dict()
    d["train"].update(max_steps=4, checkpoint_every=2, validate_every=2)
    Trainer(config_from_dict(d), tiny_corpus, exp, progress=False).fit()
    return exp


def random_batch(r: int = 2, seed: int = 0):
    """Three random items (9, 6 and 3 tokens; 20, 13 and 7 frames, padded to a multiple of r)."""
    import torch

    from tts.data import Batch

    g = torch.Generator().manual_seed(seed)
    lengths, frames = torch.tensor([9, 6, 3]), torch.tensor([20, 13, 7])
    ids = torch.randint(3, 100, (3, 9), generator=g) * (torch.arange(9)[None] < lengths[:, None])
    t_mel = 20 + (-20) % r
    mels = torch.randn(3, 80, t_mel, generator=g)
    stop = (torch.arange(t_mel)[None] >= frames[:, None] - 1).float()
    return Batch(ids, lengths, mels, frames, stop, ["a", "b", "c"])


def overfit(model, batch, loss_config, steps: int, lr: float) -> dict:
    """Train ``model`` on one batch for ``steps`` Adam steps (clip 1.0); returns the last loss terms
    and the first mel loss."""
    import torch

    from tts.training.losses import TTSLoss

    optimizer = torch.optim.Adam(model.parameters(), lr)
    criterion = TTSLoss(loss_config)
    first = None
    for step in range(steps):
        terms = criterion(model(batch), batch, step)
        optimizer.zero_grad()
        terms["loss"].backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        first = first if first is not None else float(terms["mel"].detach())
    return {"first_mel": first, **{k: float(v.detach()) for k, v in terms.items()}}


class CountingRecognizer:
    """Hears every waveform as the number of samples it has, and counts its calls."""

    def __init__(self, identity: str = "counting 1"):
        self.identity, self.calls = identity, 0

    def __call__(self, waveform: np.ndarray, sample_rate: int) -> str:
        self.calls += 1
        return f"{len(waveform)} samples"


def tiny_synthesizer(tiny_experiment: Path) -> Synthesizer:
    """The tiny experiment's checkpoint with short limits and a 2-iteration Griffin-Lim."""
    from tts.synthesis import Synthesizer

    return Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt",
                                       changes={"max_frames_per_token": 2, "griffin_lim.iterations": 2})


def recordings(tiny_corpus: Path, count: int) -> list[Item]:
    """The corpus's first ``count`` recordings, each as the reference of one short text."""
    from tts.audio import load_wav
    from tts.evaluation.scoring import Item

    wavs = sorted((tiny_corpus / "wavs").glob("*.wav"))[:count]
    return [Item(w.stem, "a short text", load_wav(w, 22050)[0]) for w in wavs]
