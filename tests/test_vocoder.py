"""The neural vocoder: HiFi-GAN's shapes, sizes and receptive field, a short overfit, training
with the trainer's guarantees, and every command that takes ``--vocoder``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from tts import checkpoint
from tts.audio import MelSpectrogram
from tts.config import AudioConfig, VocoderExperimentConfig, config_from_dict, load_config
from tts.errors import TTSError
from tts.vocoder_loader import vocoder_for
from tts.vocoders import build_vocoder

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def tiny_vocoder_dict(**train) -> dict:
    """A HiFi-GAN small enough to train a few steps in seconds on the tiny corpus."""
    return {"train": {"max_steps": 4, "log_every": 1, "validate_every": 2, "checkpoint_every": 2, "keep_last": 3,
                      "n_val_audio": 1, **train},
            "vocoder": {"batch_size": 2, "segment_frames": 8, "num_workers": 0, "n_val_utterances": 2,
                        "discriminators": {"channels": 32},
                        "hifigan": {"upsample_initial_channel": 16, "resblock": "2",
                                    "resblock_kernel_sizes": [3], "resblock_dilations": [[1, 3]]}}}


def tts(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tts.cli", *args], capture_output=True, text=True)


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr[-2000:]
    return lines[0]


@pytest.fixture(scope="module")
def trained_vocoder(tiny_corpus, tmp_path_factory) -> Path:
    """A tiny vocoder trained 4 steps by ``tts train-vocoder`` (checkpoints at 2 and 4)."""
    exp = tmp_path_factory.mktemp("vocoder_exp")
    cfg = exp.parent / "tiny_vocoder.yaml"
    cfg.write_text(yaml.safe_dump(tiny_vocoder_dict()))
    proc = tts("train-vocoder", "--config", str(cfg), "--data", str(tiny_corpus), "--out", str(exp), "--no-progress")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return exp


# --------------------------------------------------------------------------- the generator

@pytest.mark.parametrize("version, parameters, receptive_field", [
    ("v1", 13_936_130, 27), ("v2", 928_514, 27), ("v3", 1_464_322, 21)])
def test_the_papers_three_generators_sizes_shapes_and_receptive_fields(version, parameters, receptive_field):
    """Kong et al. 2020 give 13.92M / 0.92M / 1.46M parameters for V1 / V2 / V3. The receptive
    field is measured, in mel frames: those whose gradient reaches one output sample (float64,
    so that no path underflows), a contiguous run around the sample's own frame."""
    config = load_config(CONFIGS / f"hifigan_{version}.yaml", schema=VocoderExperimentConfig)
    torch.manual_seed(0)
    generator = build_vocoder(config.vocoder, config.audio)
    assert sum(p.numel() for p in generator.parameters()) == parameters
    mel = torch.randn(2, 80, 48) - 4.0
    with torch.no_grad():
        raw = generator.generate(mel)
    assert raw.shape == (2, 1, 48 * 256) and float(raw.abs().max()) < 1.0
    wide = (torch.randn(1, 80, 64, dtype=torch.float64) - 4.0).requires_grad_()
    generator.double().generate(wide)[0, 0, 32 * 256 + 100].backward()
    frames = torch.nonzero(wide.grad[0].abs().sum(0) > 0).flatten().tolist()
    assert len(frames) == receptive_field and frames == list(range(frames[0], frames[-1] + 1))
    assert frames[0] < 32 < frames[-1]
    generator.float()
    wav, lengths = generator(mel, torch.tensor([48, 30]))
    assert wav.shape == (2, 47 * 256) and lengths.tolist() == [47 * 256, 29 * 256]
    assert float(wav[1, 29 * 256:].abs().max()) == 0.0  # past its length, silence


def test_folding_weight_norm_for_inference_keeps_the_output():
    config = config_from_dict(tiny_vocoder_dict(), VocoderExperimentConfig)
    generator = build_vocoder(config.vocoder, config.audio)
    mel = torch.randn(1, 80, 20) - 4.0
    before, _ = generator(mel)
    after, _ = generator.for_inference()(mel)
    assert torch.allclose(before, after, atol=1e-6)
    assert not any("parametrizations" in name for name in generator.state_dict())


def test_a_short_overfit_lowers_the_mel_loss_of_one_segment():
    """The generator alone, mel L1 on one 16-frame segment: 150 Adam steps cut the loss by half."""
    config = config_from_dict(tiny_vocoder_dict(), VocoderExperimentConfig)
    torch.manual_seed(0)
    generator = build_vocoder(config.vocoder, config.audio)
    mel_of = MelSpectrogram(config.audio)
    t = torch.arange(16 * 256) / 22050
    target = (0.3 * torch.sin(2 * torch.pi * 220 * t) + 0.15 * torch.sin(2 * torch.pi * 660 * t))[None]
    target_mel = mel_of.differentiable(target)
    mel = target_mel[:, :, :16]  # a segment: 16 frames and their 16 · hop samples, as in training
    optimizer = torch.optim.Adam(generator.parameters(), 2e-3)
    losses = []
    for _ in range(150):
        loss = torch.nn.functional.l1_loss(mel_of.differentiable(generator.generate(mel).squeeze(1)), target_mel)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.5 * losses[0], (losses[0], losses[-1])


def test_upsampling_rates_must_make_the_hop_length():
    d = tiny_vocoder_dict()
    d["vocoder"]["hifigan"]["upsample_rates"] = [8, 8, 2]
    d["vocoder"]["hifigan"]["upsample_kernel_sizes"] = [16, 16, 4]
    with pytest.raises(TTSError, match="multiply to 128, not audio.hop_length 256"):
        build_vocoder(config_from_dict(d, VocoderExperimentConfig).vocoder, AudioConfig())


@pytest.mark.parametrize("mel, message", [
    (torch.full((1, 80, 10), float("nan")), "NaN or infinite"), (torch.zeros(1, 80, 0), "empty"),
    (torch.zeros(1, 40, 10), "n_mels=80"), (torch.full((1, 80, 10), 60.0), "linear or dB")])
def test_the_vocoder_refuses_mels_it_cannot_read(mel, message):
    generator = build_vocoder(config_from_dict(tiny_vocoder_dict(), VocoderExperimentConfig).vocoder, AudioConfig())
    with pytest.raises(TTSError, match=message):
        generator(mel)


# --------------------------------------------------------------------------- configs

def test_vocoder_and_acoustic_configs_are_not_interchangeable(tiny_corpus, tmp_path):
    with pytest.raises(TTSError, match="vocoder"):
        load_config(CONFIGS / "hifigan_v2.yaml")
    with pytest.raises(TTSError, match="model"):
        load_config(CONFIGS / "tacotron2_small.yaml", schema=VocoderExperimentConfig)
    d = tiny_vocoder_dict()
    d["vocoder"]["segment_frames"] = 1
    with pytest.raises(TTSError, match="vocoder.segment_frames"):
        config_from_dict(d, VocoderExperimentConfig)
    d = tiny_vocoder_dict(r_schedule=[{"step": 0, "r": 2}])
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(yaml.safe_dump(d))
    line = one_error_line(tts("train-vocoder", "--config", str(cfg), "--data", str(tiny_corpus), "--out",
                              str(tmp_path / "exp")))
    assert "'train.r_schedule' applies to acoustic models only" in line
    assert not (tmp_path / "exp").exists()
    d = tiny_vocoder_dict()
    d["vocoder"]["segment_frames"] = 5000
    cfg.write_text(yaml.safe_dump(d))
    line = one_error_line(tts("train-vocoder", "--config", str(cfg), "--data", str(tiny_corpus), "--out",
                              str(tmp_path / "exp")))
    assert "vocoder.segment_frames=5000 is longer than every utterance of the split (the longest has" in line
    assert "lower it to at most" in line and not (tmp_path / "exp").exists()


# --------------------------------------------------------------------------- training

def test_train_vocoder_writes_checkpoints_logs_and_validation_audio(trained_vocoder):
    assert sorted(p.name for p in trained_vocoder.glob("checkpoint_*.pt")) == ["checkpoint_00000002.pt",
                                                                               "checkpoint_00000004.pt"]
    contents = checkpoint.read(trained_vocoder / "checkpoint_00000004.pt")
    assert contents.kind == "vocoder" and contents.step == 4 and "discriminators" in contents.training
    records = [json.loads(x) for x in (trained_vocoder / "metrics.jsonl").read_text().splitlines()]
    train = [r for r in records if r.get("split") != "val"]
    val = [r for r in records if r.get("split") == "val"]
    assert [r["step"] for r in train] == [1, 2, 3, 4] and [r["step"] for r in val] == [2, 4]
    assert all(np.isfinite(r[k]) for r in train for k in ("generator", "discriminator", "mel_l1", "feature_matching"))
    assert len(list((trained_vocoder / "val_audio").glob("*.wav"))) == 2
    assert (trained_vocoder / "best.pt").is_file()
    assert load_config(trained_vocoder / "config.yaml", schema=VocoderExperimentConfig).vocoder.segment_frames == 8


def test_train_vocoder_resumes_exactly(tiny_corpus, tmp_path):
    """2 steps, then 2 more after --resume: the same generator and discriminators as 4 at once
    (both in this process: bit-exactness holds for one thread count)."""
    from tts.training.vocoder_trainer import VocoderTrainer

    config = config_from_dict(tiny_vocoder_dict(), VocoderExperimentConfig)
    VocoderTrainer(config, tiny_corpus, tmp_path / "whole", progress=False).fit()
    VocoderTrainer(config_from_dict(tiny_vocoder_dict(max_steps=2), VocoderExperimentConfig), tiny_corpus,
                   tmp_path / "split", progress=False).fit()
    VocoderTrainer(config, tiny_corpus, tmp_path / "split", resume=True, progress=False).fit()
    whole = checkpoint.read(tmp_path / "whole" / "checkpoint_00000004.pt")
    split = checkpoint.read(tmp_path / "split" / "checkpoint_00000004.pt")
    assert all(torch.equal(whole.weights[k], split.weights[k]) for k in whole.weights)
    for key, tensor in whole.training["discriminators"].items():
        assert torch.equal(tensor, split.training["discriminators"][key])


def test_the_generator_warms_up_alone_before_the_discriminators_join(tiny_corpus, tmp_path):
    """vocoder.adversarial_start=2: updates 1-2 train the generator on mel + waveform L1 only (the
    discriminators are not run and keep their weights), update 3 is a full GAN step; the logged
    generator loss is exactly mel_weight · mel L1 + waveform_weight · waveform L1 before it."""
    from tts.training.vocoder_trainer import VocoderTrainer

    d = tiny_vocoder_dict(max_steps=3, checkpoint_every=1, validate_every=1000)
    d["vocoder"].update(adversarial_start=2, waveform_weight=3.0)
    VocoderTrainer(config_from_dict(d, VocoderExperimentConfig), tiny_corpus, tmp_path / "warm", progress=False).fit()
    records = [json.loads(x) for x in (tmp_path / "warm" / "metrics.jsonl").read_text().splitlines()]
    train = [r for r in records if r.get("split") != "val"]
    assert [r["step"] for r in train] == [1, 2, 3]
    for r in train[:2]:
        assert "discriminator" not in r and "adversarial" not in r
        assert r["generator"] == pytest.approx(45.0 * r["mel_l1"] + 3.0 * r["waveform_l1"], rel=1e-5)
    assert {"discriminator", "adversarial", "feature_matching", "waveform_l1"} <= set(train[2])
    states = [checkpoint.read(tmp_path / "warm" / f"checkpoint_{s:08d}.pt").training["discriminators"] for s in (1, 2, 3)]
    assert all(torch.equal(states[0][k], states[1][k]) for k in states[0])  # not trained during the warm-up
    assert not all(torch.equal(states[1][k], states[2][k]) for k in states[1])  # trained from update 3 on
    generators = [checkpoint.read(tmp_path / "warm" / f"checkpoint_{s:08d}.pt").weights for s in (1, 2)]
    assert not all(torch.equal(generators[0][k], generators[1][k]) for k in generators[0])


def test_a_non_finite_loss_skips_the_update_and_training_goes_on(tiny_corpus, tmp_path, monkeypatch):
    """A NaN generator loss on the first step: that step's generator update is skipped (counted,
    weights untouched and finite), the next steps train; three in a row stop the run."""
    from tts.training import vocoder_trainer

    original, calls = vocoder_trainer.generator_adversarial_loss, []

    def poisoned(fake):
        calls.append(1)
        return original(fake) * (float("nan") if len(calls) == 1 else 1.0)

    monkeypatch.setattr(vocoder_trainer, "generator_adversarial_loss", poisoned)
    config = config_from_dict(tiny_vocoder_dict(max_steps=2, validate_every=1000), VocoderExperimentConfig)
    trainer = vocoder_trainer.VocoderTrainer(config, tiny_corpus, tmp_path / "a", progress=False)
    start = {k: v.clone() for k, v in trainer.generator.state_dict().items()}
    trainer.fit()
    assert trainer.state.step == 2 and trainer.state.nan_total == 1 and len(calls) == 3
    after = trainer.generator.state_dict()
    assert all(torch.isfinite(v).all() for v in after.values()) and not all(torch.equal(start[k], after[k]) for k in start)

    monkeypatch.setattr(vocoder_trainer, "generator_adversarial_loss", lambda fake: original(fake) * float("nan"))
    config = config_from_dict(tiny_vocoder_dict(max_steps=5, max_nan_steps=3), VocoderExperimentConfig)
    with pytest.raises(TTSError, match="3 steps in a row"):
        vocoder_trainer.VocoderTrainer(config, tiny_corpus, tmp_path / "b", progress=False).fit()


def test_fine_tuning_on_teacher_forced_mels_of_an_acoustic_checkpoint(tiny_corpus, tiny_experiment, tmp_path,
                                                                      trained_vocoder):
    from tts.training.vocoder_trainer import VocoderTrainer

    acoustic = tiny_experiment / "checkpoint_00000004.pt"
    d = tiny_vocoder_dict(max_steps=1, warm_start=str(trained_vocoder / "checkpoint_00000004.pt"))
    d["vocoder"].update(mels="teacher_forced", acoustic_checkpoint=str(acoustic))
    VocoderTrainer(config_from_dict(d, VocoderExperimentConfig), tiny_corpus, tmp_path / "ft", progress=False).fit()
    (folder,) = tiny_corpus.glob("features/*/teacher_forced/*")
    source = json.loads((folder / "source.json").read_text())
    assert source["step"] == 4 and source["checkpoint"] == str(acoustic.resolve())
    train_ids = [line.split("|")[0] for line in (tiny_corpus / "splits" / "train.txt").read_text().split()]
    mel = np.load(folder / f"{train_ids[0]}.npy")
    assert mel.dtype == np.float16 and mel.shape[0] == 80 and np.isfinite(mel).all()
    assert checkpoint.read(tmp_path / "ft" / "checkpoint_00000001.pt").kind == "vocoder"


def test_a_vocoder_checkpoint_is_not_an_acoustic_model_and_vice_versa(tiny_experiment, trained_vocoder, tmp_path):
    vocoder = str(trained_vocoder / "checkpoint_00000004.pt")
    line = one_error_line(tts("synthesize", "--checkpoint", vocoder, "--text", "Hello.", "--out", str(tmp_path / "a")))
    assert "vocoder" in line and "--vocoder" in line
    line = one_error_line(tts("synthesize", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"),
                              "--text", "Hello.", "--out", str(tmp_path / "b"), "--vocoder",
                              str(tiny_experiment / "checkpoint_00000002.pt")))
    assert "acoustic" in line
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_vocoder_for_other_mel_settings_is_refused_naming_the_fields(tiny_experiment, trained_vocoder, tmp_path):
    contents = checkpoint.read(trained_vocoder / "checkpoint_00000004.pt")
    other = tmp_path / "other_fmax.pt"
    contents.config.audio.fmax = 7600.0
    checkpoint.save_vocoder(other, build_vocoder(contents.config.vocoder, contents.config.audio), contents.config, 4)
    line = one_error_line(tts("synthesize", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"),
                              "--text", "Hello.", "--out", str(tmp_path / "out"), "--vocoder", str(other)))
    assert "fmax" in line and "7600" in line
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- the commands

def test_synthesize_plays_both_vocoders_side_by_side(tiny_experiment, trained_vocoder, tmp_path):
    out = tmp_path / "synth"
    proc = tts("synthesize", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"), "--text", "Hello there.",
               "--out", str(out), "--max-steps", "40", "--no-plots", "--vocoder",
               str(trained_vocoder / "best.pt"), "griffin-lim")
    assert proc.returncode == 0, proc.stderr[-2000:]
    (main,) = [p for p in out.glob("*.wav") if p.name.count(".") == 1]
    other = out / main.name.replace(".wav", ".griffin-lim.wav")
    assert other.is_file()
    import soundfile as sf

    a, b = sf.read(main), sf.read(other)
    assert a[1] == b[1] == 22050 and len(a[0]) == len(b[0]) and not np.allclose(a[0], b[0])
    page = (out / "index.html").read_text()
    assert main.name in page and other.name in page and "griffin-lim" in page


def test_vocode_and_resynth_with_a_neural_vocoder(trained_vocoder, tiny_corpus, tmp_path):
    mel = tmp_path / "mel.npy"
    np.save(mel, np.full((80, 25), -5.0, dtype=np.float32))
    proc = tts("vocode", str(mel), "-o", str(tmp_path / "v.wav"), "--vocoder", str(trained_vocoder / "best.pt"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    import soundfile as sf

    wav, sr = sf.read(tmp_path / "v.wav")
    assert sr == 22050 and len(wav) == 24 * 256
    np.save(mel, np.full((80, 25), np.nan, dtype=np.float32))
    assert "NaN" in one_error_line(tts("vocode", str(mel), "-o", str(tmp_path / "nan.wav"), "--vocoder",
                                       str(trained_vocoder / "best.pt")))
    assert not (tmp_path / "nan.wav").exists()
    recording = sorted((tiny_corpus / "wavs").glob("*.wav"))[0]
    proc = tts("resynth", str(recording), "-o", str(tmp_path / "r.wav"), "--vocoder", str(trained_vocoder / "best.pt"))
    assert proc.returncode == 0 and (tmp_path / "r.wav").is_file(), proc.stderr[-2000:]
    assert "--iters" in one_error_line(tts("resynth", str(recording), "-o", str(tmp_path / "i.wav"), "--iters", "8",
                                           "--vocoder", str(trained_vocoder / "best.pt")))


def test_evaluate_vocoder_scores_each_vocoder_against_the_recordings(trained_vocoder, tiny_corpus, tmp_path):
    out = tmp_path / "eval"
    proc = tts("evaluate-vocoder", "--data", str(tiny_corpus), "--split", "val", "--limit", "2", "--no-asr",
               "--no-mos", "--out", str(out), "--vocoder", "griffin-lim", str(trained_vocoder / "best.pt"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    rows = json.loads((out / "utterances.json").read_text())
    assert len(rows) == 2
    names = list(summary["vocoders"])
    assert names[0] == "griffin-lim" and len(names) == 2
    for name in names:
        figures = summary[name]
        assert figures["mcd_db"] > 0 and 0.0 <= figures["stoi"] <= 1.0 and 1.0 <= figures["pesq"] <= 4.7
        assert all(f"{name}_{key}" in rows[0] for key in ("pesq", "stoi", "mcd_db", "rtf"))
        assert len(list((out / name).glob("*.wav"))) == 2
    # Griffin-Lim from the recording's own mel is far closer to it than a 4-step HiFi-GAN
    assert summary["griffin-lim"]["stoi"] > summary[names[1]]["stoi"]


def test_distilling_a_teacher_trains_on_its_waveforms_made_once(tiny_corpus, tmp_path, monkeypatch):
    """vocoder.teacher: the generator's targets are cut from the teacher's waveforms of the whole
    utterances, which are made once and reused by the next run."""
    from tts.training import vocoder_trainer
    from tts.vocoders.hifigan import HiFiGANGenerator

    d = tiny_vocoder_dict(max_steps=1, validate_every=1000)
    d["vocoder"]["teacher"] = "hifigan"
    config = config_from_dict(d, VocoderExperimentConfig)
    trainer = vocoder_trainer.VocoderTrainer(config, tiny_corpus, tmp_path / "student", progress=False)
    seen, step = [], trainer._step
    monkeypatch.setattr(trainer, "_step", lambda mels, wavs: seen.append((mels, wavs)) or step(mels, wavs))
    trainer.fit()
    (mels, wavs), = seen
    assert wavs.shape == (2, 1, 8 * 256)
    (folder,) = tiny_corpus.glob("features/*/teacher_audio/*")
    assert json.loads((folder / "source.json").read_text())["teacher"] == "hifigan"
    uid = trainer.train_set.utterance_id(0)
    mel, target = trainer.train_set[0]
    teacher = vocoder_for("hifigan")
    whole = teacher.generate(mel[None]).squeeze()
    assert target.shape == whole.shape and np.load(folder / f"{uid}.npy").dtype == np.float16
    torch.testing.assert_close(target, whole, atol=1e-3, rtol=0)  # float16 storage
    segment_mel, segment_wav = trainer.train_set[(0, 0.5)]
    start = int(0.5 * (mel.shape[1] - 8 + 1))
    torch.testing.assert_close(segment_mel, mel[:, start:start + 8])
    torch.testing.assert_close(segment_wav, target[start * 256:(start + 8) * 256])

    def no_teacher(*_: object) -> None:
        raise AssertionError("the teacher's waveforms were made again")
    monkeypatch.setattr(HiFiGANGenerator, "generate", no_teacher)
    vocoder_trainer.VocoderTrainer(config, tiny_corpus, tmp_path / "again", progress=False)
    bad = tiny_vocoder_dict(max_steps=1)
    bad["vocoder"]["teacher"] = str(tmp_path / "missing.pt")
    with pytest.raises(TTSError, match="does not exist"):
        vocoder_trainer.VocoderTrainer(config_from_dict(bad, VocoderExperimentConfig), tiny_corpus, tmp_path / "x",
                                       progress=False)


# --------------------------------------------------------------------------- the Vocos student

def test_the_inverse_stft_is_torch_istft_as_a_transposed_convolution():
    """The same samples as torch.istft(center=True) of a spectrum torch.stft made, to float precision,
    and the waveform itself back (T_mel · hop samples, frame t centred on sample t · hop)."""
    from tts.vocoders.vocos import InverseSTFT

    torch.manual_seed(0)
    wav = torch.randn(2, 40 * 256)
    for win_length in (1024, 800):
        window = torch.hann_window(win_length)
        spec = torch.stft(wav, 1024, 256, win_length, window, center=True, return_complex=True)
        ours = InverseSTFT(1024, 256, win_length)(spec.real, spec.imag)
        theirs = torch.istft(spec, 1024, 256, win_length, window, center=True, length=spec.shape[-1] * 256)
        assert ours.shape == (2, 41 * 256) and float((ours - theirs).abs().max()) < 1e-5
        assert float((ours[:, :wav.shape[1]] - wav).abs().max()) < 1e-5
    with pytest.raises(TTSError, match="hop_length ≤ n_fft / 2"):
        InverseSTFT(512, 300, 512)


def test_the_phase_loss_is_zero_for_equal_waveforms_and_about_one_for_unrelated_phases():
    """The same magnitudes with random phases (an inverse STFT of |S| e^{iφ}) are far from the
    original; a waveform is at 0 from itself; a silent fake has finite gradients."""
    from tts.training.losses import phase_loss

    torch.manual_seed(0)
    t = torch.arange(8192) / 22050
    real = (torch.sin(2 * torch.pi * 220 * t) + 0.5 * torch.sin(2 * torch.pi * 1375 * t)).unsqueeze(0) \
        + 0.01 * torch.randn(1, 8192)
    window = torch.hann_window(1024)
    spec = torch.stft(real, 1024, 256, window=window, return_complex=True)
    scrambled = torch.istft(spec.abs() * torch.exp(2j * torch.pi * torch.rand(spec.shape)), 1024, 256, window=window,
                            length=8192)
    unrelated = float(phase_loss(scrambled, real, 1024, 256))
    assert float(phase_loss(real, real, 1024, 256)) == 0.0 and 1.5 < unrelated < 4.0
    assert 0.05 < float(phase_loss(torch.roll(real, 3, dims=1), real, 1024, 256)) < unrelated / 2
    silent = torch.zeros(1, 8192, requires_grad=True)
    phase_loss(silent, real, 1024, 256).backward()
    assert silent.grad is not None and bool(torch.isfinite(silent.grad).all())


def test_the_vocos_student_size_shape_and_receptive_field():
    """configs/vocos_student.yaml: 3.58M parameters; the frames whose gradient reaches one sample
    are a contiguous run no wider than context_frames on either side."""
    config = load_config(CONFIGS / "vocos_student.yaml", schema=VocoderExperimentConfig)
    torch.manual_seed(0)
    generator = build_vocoder(config.vocoder, config.audio)
    assert sum(p.numel() for p in generator.parameters()) == 3_584_770 and generator.context_frames == 29
    mel = torch.randn(2, 80, 48) - 4.0
    wav, lengths = generator(mel, torch.tensor([48, 30]))
    assert wav.shape == (2, 47 * 256) and lengths.tolist() == [47 * 256, 29 * 256]
    assert float(wav[1, 29 * 256:].abs().max()) == 0.0 and bool(torch.isfinite(wav).all())
    wide = (torch.randn(1, 80, 80, dtype=torch.float64) - 4.0).requires_grad_()
    generator.double().generate(wide)[0, 0, 40 * 256 + 100].backward()
    frames = torch.nonzero(wide.grad[0].abs().sum(0) > 0).flatten().tolist()
    assert frames == list(range(frames[0], frames[-1] + 1))
    assert 40 - generator.context_frames <= frames[0] and frames[-1] <= 40 + generator.context_frames
    bad = tiny_vocoder_dict()
    bad["vocoder"].update(kind="vocos", vocos={"kernel": 4})
    with pytest.raises(TTSError, match="vocoder.vocos.kernel must be odd"):
        config = config_from_dict(bad, VocoderExperimentConfig)
        build_vocoder(config.vocoder, config.audio)


def test_a_vocos_student_distils_with_the_stft_loss_and_its_export_vocodes(tiny_corpus, tmp_path):
    """Two reconstruction-only updates of a tiny Vocos on the teacher's waveforms of the first two
    utterances (train_utterances=2): the logged generator loss is the weighted sum of its four terms;
    the exported student loads as a vocoder and vocodes."""
    from tts.training.vocoder_trainer import VocoderTrainer

    d = tiny_vocoder_dict(max_steps=2, validate_every=2, checkpoint_every=2)
    d["vocoder"].update(kind="vocos", vocos={"dim": 16, "hidden": 32, "layers": 2}, teacher="hifigan",
                        train_utterances=2, waveform_weight=3.0, stft_weight=2.0, phase_weight=0.5,
                        adversarial_start=2)
    trainer = VocoderTrainer(config_from_dict(d, VocoderExperimentConfig), tiny_corpus, tmp_path / "vocos",
                             progress=False)
    assert len(trainer.train_set) == 2
    trainer.fit()
    records = [json.loads(x) for x in (tmp_path / "vocos" / "metrics.jsonl").read_text().splitlines()]
    train = [r for r in records if r.get("split") != "val"]
    assert [r["step"] for r in train] == [1, 2] and "discriminator" not in train[-1]
    for r in train:
        assert 0 < r["phase"] <= 6  # three terms of 1 − cos Δ, each at most 2
        assert r["generator"] == pytest.approx(45.0 * r["mel_l1"] + 3.0 * r["waveform_l1"] + 2.0 * r["stft"]
                                               + 0.5 * r["phase"], rel=1e-5)
    exported = checkpoint.export(tmp_path / "vocos" / "checkpoint_00000002.pt", tmp_path / "student.pt")
    vocoder = vocoder_for(exported)
    wav, lengths = vocoder(torch.randn(1, 80, 20) - 4.0)
    assert type(vocoder).__name__ == "VocosGenerator" and wav.shape == (1, 19 * 256) and bool(torch.isfinite(wav).all())


def test_a_warm_start_into_a_wider_vocos_keeps_the_waveforms_and_trains_the_new_units(tiny_corpus, tmp_path):
    """vocos.hidden 32 → 48, and dim 16 → 32 with it: before any update the grown student's waveforms
    are the narrow one's (new hidden units' outgoing weights zero; each residual channel in two
    copies whose consumers' weights are split); one adversarial update moves the new units' weights
    off zero and the two copies of a channel apart. A ``dim`` that is not a whole multiple cannot
    grow: one error naming the tensor."""
    from tts.training.vocoder_trainer import VocoderTrainer

    def config(hidden: int, dim: int = 16, source: Path | None = None) -> VocoderExperimentConfig:
        d = tiny_vocoder_dict(max_steps=1, checkpoint_every=1, validate_every=1,
                              warm_start=str(source) if source else "")
        d["vocoder"].update(kind="vocos", vocos={"dim": dim, "hidden": hidden, "layers": 2}, adversarial_start=0)
        return config_from_dict(d, VocoderExperimentConfig)

    narrow_config = config(32)
    torch.manual_seed(0)
    narrow = build_vocoder(narrow_config.vocoder, narrow_config.audio)
    for module in narrow.modules():   # a trained student's projections, norms and biases are not at their init
        if isinstance(module, (torch.nn.Linear, torch.nn.LayerNorm, torch.nn.Conv1d)):
            torch.nn.init.normal_(module.weight, mean=1.0 if isinstance(module, torch.nn.LayerNorm) else 0.0, std=0.1)
            torch.nn.init.normal_(module.bias, std=0.1)
    source = tmp_path / "narrow.pt"
    checkpoint.save_vocoder(source, narrow, narrow_config, 7)
    mel = torch.randn(2, 80, 24) - 4.0
    with torch.no_grad():
        reference = narrow.generate(mel)
    for name, hidden, dim in (("wide_mlp", 48, 16), ("wide", 48, 32)):
        trainer = VocoderTrainer(config(hidden, dim=dim, source=source), tiny_corpus, tmp_path / name, progress=False)
        with torch.no_grad():
            assert torch.allclose(trainer.generator.generate(mel), reference, atol=1e-5)
        block = trainer.generator.blocks[0]
        project = block.project.weight.detach()
        assert project.shape == (dim, 48) and float(project[:, 32:].abs().max()) == 0.0
        trainer.fit()
        assert float(block.project.weight.detach()[:, 32:].abs().max()) > 0.0
    copies = block.project.weight.detach()[:16, :32] - block.project.weight.detach()[16:, :32]
    assert float(copies.abs().max()) > 0.0           # the copies of a residual channel parted
    with pytest.raises(TTSError, match=r"warm start: the generator's embed.weight has shape \(16, 80, 7\)"):
        VocoderTrainer(config(32, dim=24, source=source), tiny_corpus, tmp_path / "other", progress=False)
    assert not (tmp_path / "other").exists()


def test_students_trained_differently_average_and_other_generators_are_refused(tmp_path):
    """Two Vocos students of one architecture whose training differed (discriminators, learning
    rate) export as the mean of their weights; a student of another width is not averaged with them."""
    def student(seed: int, dim: int = 16, **training) -> Path:
        d = tiny_vocoder_dict()
        d["vocoder"].update(kind="vocos", vocos={"dim": dim, "hidden": 32, "layers": 2}, **training)
        config = config_from_dict(d, VocoderExperimentConfig)
        torch.manual_seed(seed)
        path = tmp_path / f"student_{seed}_{dim}.pt"
        checkpoint.save_vocoder(path, build_vocoder(config.vocoder, config.audio), config, seed)
        return path

    first, second = student(1), student(2, lr=1e-4, discriminators={"channels": 64})
    mean = checkpoint.read(checkpoint.export([first, second], tmp_path / "soup.pt", half=False))
    a, b = checkpoint.read(first).weights, checkpoint.read(second).weights
    assert mean.step == 2 and not torch.allclose(a["head.weight"], b["head.weight"])
    for name, tensor in mean.weights.items():
        torch.testing.assert_close(tensor, (a[name] + b[name]) / 2)
    with pytest.raises(TTSError, match=r"student_3_24.pt is not the same model as .*student_1_16.pt"):
        checkpoint.export([first, student(3, dim=24)], tmp_path / "bad.pt")
    assert not (tmp_path / "bad.pt").exists()


def test_a_checkpoint_with_hifigans_old_discriminator_keys_still_reads(trained_vocoder, tmp_path):
    """Discriminator settings were vocoder.hifigan.discriminator_*; they live in vocoder.discriminators now."""
    payload = torch.load(trained_vocoder / "checkpoint_00000004.pt", weights_only=True)
    payload["config"]["vocoder"].pop("discriminators")
    payload["config"]["vocoder"]["hifigan"].update(discriminator_channels=32, discriminator_periods=[2, 3])
    torch.save(payload, tmp_path / "old.pt")
    config = checkpoint.read(tmp_path / "old.pt").vocoder_config()
    assert config.vocoder.discriminators.channels == 32 and config.vocoder.discriminators.periods == [2, 3]


def test_the_discriminators_a_config_names(tiny_corpus, tmp_path):
    """vocoder.discriminators: the multi-period ones always, the three multi-scale ones unless
    multi_scale is false, one multi-resolution one per FFT size; each sub-discriminator gives logits
    and feature maps, a spectrogram's under bf16 autocast too; a GAN step trains them all."""
    from tts.training.vocoder_trainer import VocoderTrainer
    from tts.vocoders import build_discriminators

    d = tiny_vocoder_dict(max_steps=1, validate_every=1000)
    d["vocoder"]["discriminators"].update(periods=[2, 3], multi_scale=False, resolutions=[256, 512],
                                          resolution_channels=4)
    config = config_from_dict(d, VocoderExperimentConfig)
    discriminators = build_discriminators(config.vocoder)
    assert (len(discriminators.periods), len(discriminators.scales), len(discriminators.resolutions)) == (2, 0, 2)
    wav = torch.randn(2, 1, 4096)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        outputs = discriminators(wav)
    assert len(outputs) == 4
    logits, features = outputs[2]  # n_fft 256: 65 frames of 129 bins, halved in frequency three times
    assert logits.shape == (2, 65 * 17) and len(features) == 6 and features[0].shape == (2, 4, 65, 129)
    assert all(bool(torch.isfinite(f).all()) for _, maps in outputs for f in maps)
    start = {k: v.clone() for k, v in discriminators.state_dict().items()}
    trainer = VocoderTrainer(config, tiny_corpus, tmp_path / "mrd", progress=False)
    trainer.discriminators.load_state_dict(start)
    trainer.fit()
    after = checkpoint.read(tmp_path / "mrd" / "checkpoint_00000001.pt").training["discriminators"]
    for name in ("resolutions.0.convs.0", "periods.0.post"):
        weight = f"{name}.parametrizations.weight.original1"
        assert not torch.equal(start[weight], after[weight]), name
    d["vocoder"]["discriminators"]["resolutions"] = [32]
    with pytest.raises(TTSError, match=r"vocoder.discriminators.resolutions.*>= 64"):
        config_from_dict(d, VocoderExperimentConfig)
    assert VocoderExperimentConfig().vocoder.discriminators.multi_scale  # HiFi-GAN's by default


@pytest.mark.parametrize("kind", ["hifigan", "vocos"])
def test_a_long_mel_vocoded_in_chunks_with_progress_is_the_whole_mel_vocoded(kind, capsys):
    """vocode_long (tts resynth of long inputs) cuts the mel into chunks with the vocoder's
    context on each side and shows how far it is; the samples are those of one call."""
    config = config_from_dict({**tiny_vocoder_dict(), "vocoder": {**tiny_vocoder_dict()["vocoder"], "kind": kind}},
                              VocoderExperimentConfig)
    torch.manual_seed(0)
    vocoder = build_vocoder(config.vocoder, config.audio).for_inference()
    mel = torch.randn(config.audio.n_mels, 300) - 5.0
    whole = vocoder(mel[None])[0][0]
    chunked = vocoder.vocode_long(mel, chunk_frames=64, progress=True)
    assert chunked.shape == whole.shape == ((300 - 1) * config.audio.hop_length,)
    assert float((chunked - whole).abs().max()) < 1e-4 * max(float(whole.abs().max()), 1e-3)
    assert "vocode" in capsys.readouterr().err  # the progress bar


def test_the_synthesizer_vocodes_a_long_mel_in_chunks(tiny_experiment, monkeypatch):
    """A passage read to the step limit has tens of thousands of frames, and a neural vocoder's
    memory grows with its input: the synthesizer gives the vocoder VOCODE_CHUNK_FRAMES at a time,
    and the waveform is the one a single call makes."""
    import tts.synthesis
    from tts.synthesis import Synthesizer

    config = config_from_dict(tiny_vocoder_dict(), VocoderExperimentConfig)
    torch.manual_seed(0)
    vocoder = build_vocoder(config.vocoder, config.audio).for_inference()
    synthesizer = Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt")
    synthesizer.vocoder = vocoder
    mel = (torch.randn(config.audio.n_mels, 300) - 5.0).numpy()
    whole = vocoder(torch.from_numpy(mel)[None])[0][0].numpy()
    calls: list[int] = []
    chunk = vocoder.chunk
    monkeypatch.setattr(vocoder, "chunk", lambda m, start, end, last=True: calls.append(start) or chunk(m, start, end, last))
    monkeypatch.setattr(tts.synthesis, "VOCODE_CHUNK_FRAMES", 128)
    chunked = synthesizer.vocode(mel)
    assert calls == [0, 128, 256]
    assert chunked.shape == whole.shape == ((300 - 1) * config.audio.hop_length,)
    assert float(np.abs(chunked - whole).max()) < 1e-4 * max(float(np.abs(whole).max()), 1e-3)
