import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml
from conftest import tiny_config_dict

from tts import checkpoint
from tts.config import ScheduleConfig, attention_config, config_from_dict, load_config
from tts.data import batch_loader
from tts.errors import ConfigError, Interrupted, TTSError
from tts.models import build_model
from tts.synthesis import Synthesizer
from tts.text import SymbolInventory
from tts.training.adversarial import matching_segments
from tts.training.optim import lr_multiplier
from tts.training.trainer import Trainer

ROOT = Path(__file__).resolve().parents[1]


def make_config(**train):
    d = tiny_config_dict()
    d["train"].update(train)
    return config_from_dict(d)


def losses(exp: Path) -> dict[int, float]:
    records = [json.loads(x) for x in (exp / "metrics.jsonl").read_text().splitlines()]
    return {r["step"]: r["loss"] for r in records if "split" not in r}


def test_training_steps_checkpoint_and_reload(tiny_corpus, tmp_path):
    config = make_config(max_steps=30, checkpoint_every=15, validate_every=30)
    Trainer(config, tiny_corpus, tmp_path / "exp", progress=False).fit()
    exp = tmp_path / "exp"
    trace = losses(exp)
    assert sorted(trace) == list(range(1, 31))
    assert sum(list(trace.values())[-5:]) / 5 < 0.8 * sum(list(trace.values())[:5]) / 5
    assert sorted(p.name for p in exp.glob("checkpoint_*.pt")) == ["checkpoint_00000015.pt", "checkpoint_00000030.pt"]
    contents = checkpoint.read(exp / "checkpoint_00000030.pt")
    assert contents.step == 30 and contents.inventory.symbols[0] == "_" and "optimizer" in contents.training
    assert contents.config == config and load_config(exp / "config.yaml") == config
    assert (exp / "best.pt").is_file() and checkpoint.read(exp / "best.pt").training is None
    assert list((exp / "plots").glob("step00000030_*.png")) and list((exp / "audio").glob("step00000030_*.wav"))
    assert (exp / "train.log").read_text().count("validation at step 30") == 1
    (val,) = [json.loads(x) for x in (exp / "metrics.jsonl").read_text().splitlines() if '"val"' in x]
    assert 0 < val["attention_focus"] <= 1 and -1 <= val["attention_diagonal"] <= 1
    assert 0.5 < val["text_reliance"] < 5 and "mel_wrong_text" not in val
    assert list((exp / "tensorboard").iterdir())


def test_resume_is_exact(tiny_corpus, tmp_path):
    full = make_config(max_steps=8, checkpoint_every=4)
    Trainer(full, tiny_corpus, tmp_path / "a", progress=False).fit()
    Trainer(make_config(max_steps=4, checkpoint_every=4), tiny_corpus, tmp_path / "b", progress=False).fit()
    Trainer(full, tiny_corpus, tmp_path / "b", resume=True, progress=False).fit()
    a, b = losses(tmp_path / "a"), losses(tmp_path / "b")
    assert sorted(b) == list(range(1, 9))
    for step in range(1, 9):
        assert a[step] == pytest.approx(b[step], rel=1e-6, abs=1e-7), step


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_ends_the_step_saves_and_resumes_exactly(signum, tiny_corpus, tmp_path, monkeypatch):
    handler_before = signal.getsignal(signal.SIGTERM)
    full = make_config(max_steps=8, checkpoint_every=100)
    Trainer(full, tiny_corpus, tmp_path / "a", progress=False).fit()
    trainer = Trainer(full, tiny_corpus, tmp_path / "b", progress=False)
    original = trainer._optimizer_step

    def signal_inside_step_three(terms):
        if trainer.state.step == 2:
            os.kill(os.getpid(), signum)  # arrives in the middle of step 3
        return original(terms)

    monkeypatch.setattr(trainer, "_optimizer_step", signal_inside_step_three)
    with pytest.raises(Interrupted) as caught:
        trainer.fit()
    assert caught.value.signum == signum and caught.value.checkpoint.endswith("checkpoint_00000003.pt")
    assert checkpoint.read(tmp_path / "b" / "checkpoint_00000003.pt").training["state"]["step"] == 3
    assert signal.getsignal(signal.SIGTERM) == handler_before
    Trainer(full, tiny_corpus, tmp_path / "b", resume=True, progress=False).fit()
    a, b = (checkpoint.read(tmp_path / run / "checkpoint_00000008.pt") for run in ("a", "b"))
    assert all(torch.equal(a.weights[k], b.weights[k]) for k in a.weights)  # bit-exact, BatchNorm statistics included
    assert sorted(losses(tmp_path / "b")) == list(range(1, 9))


@pytest.mark.parametrize("signum,whole_group", [(signal.SIGTERM, False), (signal.SIGTERM, True), (signal.SIGINT, True)],
                         ids=["kill-pid", "scheduler-kills-the-job", "ctrl-c-in-a-terminal"])
def test_the_train_command_saves_and_exits_on_a_signal(signum, whole_group, tiny_corpus, tmp_path):
    """A scheduler's kill and Ctrl-C reach the loader's worker too (a process group of two): the
    worker must not die mid-batch and take the run down before it saves."""
    cfg = tmp_path / "tiny.yaml"
    d = tiny_config_dict()
    d["train"].update(max_steps=100000, checkpoint_every=100000, validate_every=100000)
    d["data"]["num_workers"] = 1
    cfg.write_text(yaml.safe_dump(d))
    proc = subprocess.Popen([sys.executable, "-m", "tts.cli", "train", "--config", str(cfg), "--data", str(tiny_corpus),
                             "--out", str(tmp_path / "e"), "--no-progress"], stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    for _ in range(600):  # wait until it trains
        if (tmp_path / "e" / "metrics.jsonl").is_file():
            break
        time.sleep(0.1)
    if whole_group:
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-2000:]
    assert "interrupted: saved" in stderr and len(list((tmp_path / "e").glob("checkpoint_*.pt"))) == 1


def test_nan_losses_are_skipped_then_stop(tiny_corpus, tmp_path, monkeypatch):
    trainer = Trainer(make_config(max_steps=10, max_nan_steps=3), tiny_corpus, tmp_path / "exp", progress=False)
    original = trainer.criterion.forward

    def poisoned(output, batch, step=0):
        terms = original(output, batch, step)
        if step >= 2:
            terms["loss"] = terms["loss"] * float("nan")
        return terms

    monkeypatch.setattr(trainer.criterion, "forward", poisoned)
    with pytest.raises(TTSError, match="NaN/inf for 3 steps in a row"):
        trainer.fit()
    assert trainer.state.step == 2 and trainer.state.nan_total == 3
    assert all(torch.isfinite(p).all() for p in trainer.model.parameters())


def test_full_disk_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    config = make_config()
    model = build_model(config.model, len(SymbolInventory()), config.audio)
    path = tmp_path / "c.pt"
    checkpoint.save(path, model, config, SymbolInventory(), 1)
    before = checkpoint.read(path).weights

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(torch, "save", disk_full)
    with torch.no_grad():
        model.decoder.mel_proj.weight.zero_()
    with pytest.raises(TTSError, match=r"cannot write .*c\.pt \(No space left on device\)"):
        checkpoint.save(path, model, config, SymbolInventory(), 2)
    after = checkpoint.read(path)
    assert after.step == 1 and torch.equal(after.weights["decoder.mel_proj.weight"], before["decoder.mel_proj.weight"])
    assert [p.name for p in tmp_path.iterdir()] == ["c.pt"]


def test_bad_checkpoints_are_one_line_errors(tmp_path):
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(TTSError, match="not a readable checkpoint"):
        checkpoint.read(tmp_path / "junk.pt")
    torch.save({"some": "dict"}, tmp_path / "other.pt")
    with pytest.raises(TTSError, match="not a checkpoint of this toolkit"):
        checkpoint.read(tmp_path / "other.pt")
    with pytest.raises(TTSError, match="does not exist"):
        checkpoint.read(tmp_path / "missing.pt")


def test_fresh_run_into_a_folder_with_checkpoints_is_refused(tiny_corpus, tmp_path):
    Trainer(make_config(max_steps=2, checkpoint_every=2), tiny_corpus, tmp_path / "exp", progress=False).fit()
    with pytest.raises(TTSError, match=r"already holds checkpoints .*checkpoint_00000002\.pt.*--resume"):
        Trainer(make_config(max_steps=4), tiny_corpus, tmp_path / "exp", progress=False)
    assert Trainer(make_config(max_steps=4), tiny_corpus, tmp_path / "exp", resume=True, progress=False).state.step == 2


def test_resume_with_a_different_model_is_refused(tiny_corpus, tmp_path):
    Trainer(make_config(max_steps=2, checkpoint_every=2), tiny_corpus, tmp_path / "exp", progress=False).fit()
    other = make_config(max_steps=4)
    other.model.tacotron2.attention = attention_config("forward", attention_dim=64)
    with pytest.raises(TTSError, match="different model"):
        Trainer(other, tiny_corpus, tmp_path / "exp", resume=True, progress=False)


def test_warm_start_ignoring_layers(tiny_corpus, tmp_path):
    Trainer(make_config(max_steps=2, checkpoint_every=2), tiny_corpus, tmp_path / "a", progress=False).fit()
    source = checkpoint.read(tmp_path / "a" / "checkpoint_00000002.pt").weights
    config = make_config(max_steps=1, warm_start=str(tmp_path / "a" / "checkpoint_00000002.pt"),
                         ignore_layers=["encoder.embedding"])
    trainer = Trainer(config, tiny_corpus, tmp_path / "b", progress=False)
    state = trainer.model.state_dict()
    assert torch.equal(state["decoder.mel_proj.weight"], source["decoder.mel_proj.weight"])
    assert not torch.equal(state["encoder.embedding.weight"], source["encoder.embedding.weight"])


def test_a_warm_start_into_a_wider_decoder_keeps_the_function_and_trains_the_new_units(tiny_corpus, tmp_path):
    """decoder_rnn_dim 128 → 192: the grown model's teacher-forced frames and stop logits are the
    narrow model's (float rounding apart), and its first update moves the zero weights from the new units."""
    Trainer(make_config(max_steps=2, checkpoint_every=2), tiny_corpus, tmp_path / "a", progress=False).fit()
    source = tmp_path / "a" / "checkpoint_00000002.pt"
    narrow = checkpoint.load(source).model
    d = tiny_config_dict()
    d["model"]["tacotron2"]["decoder_rnn_dim"] = 192
    d["train"].update(max_steps=1, checkpoint_every=1, warm_start=str(source))
    trainer = Trainer(config_from_dict(d), tiny_corpus, tmp_path / "b", progress=False)
    wide = trainer.model.eval()
    weights = wide.state_dict()
    assert weights["decoder.decoder_rnn.weight_hh"].shape == (4 * 192, 192)
    assert weights["decoder.mel_proj.weight"][:, 128:192].abs().sum() == 0
    assert weights["decoder.decoder_rnn.weight_hh"][:128, 128:].abs().sum() == 0
    narrow_weights = narrow.state_dict()
    assert torch.equal(weights["decoder.decoder_rnn.weight_ih"][192:320],      # the old forget-gate rows
                       narrow_weights["decoder.decoder_rnn.weight_ih"][128:256])
    assert weights["decoder.decoder_rnn.weight_ih"][320:384].abs().sum() > 0   # the new ones: fresh
    batch = next(iter(batch_loader(trainer.val_set, trainer.config.data, 2, 2000, 0, shuffle=False)))
    with torch.no_grad():
        a, b = narrow(batch), wide(batch)
    assert torch.allclose(a.mel_after, b.mel_after, atol=1e-5)
    assert torch.allclose(a.stop_logits, b.stop_logits, atol=1e-5)

    trainer.fit()
    after = checkpoint.read(tmp_path / "b" / "checkpoint_00000001.pt").weights
    assert after["decoder.mel_proj.weight"][:, 128:192].abs().sum() > 0


def test_freezing_the_encoder_and_decoder_trains_only_the_postnet(tiny_corpus, tmp_path):
    """Frozen weights and their BatchNorm statistics stay as loaded; only the postnet moves."""
    Trainer(make_config(max_steps=2, checkpoint_every=2), tiny_corpus, tmp_path / "a", progress=False).fit()
    start = checkpoint.read(tmp_path / "a" / "checkpoint_00000002.pt").weights
    config = make_config(max_steps=3, checkpoint_every=3, warm_start=str(tmp_path / "a" / "checkpoint_00000002.pt"),
                         freeze=["encoder", "decoder"])
    Trainer(config, tiny_corpus, tmp_path / "b", progress=False).fit()
    end = checkpoint.read(tmp_path / "b" / "checkpoint_00000003.pt").weights
    moved = {name for name in start if not torch.equal(start[name], end[name])}
    assert moved and all(name.startswith("postnet.") for name in moved)
    assert "encoder.convs.0.norm.running_mean" not in moved
    assert any(name.startswith("postnet.") and name.endswith("running_mean") for name in moved)

    with pytest.raises(TTSError, match=r"'train.freeze': no parameter lies under the module path 'encoderr' "
                                       r"\(the model's top-level modules: decoder, encoder, postnet\)"):
        Trainer(make_config(max_steps=1, freeze=["encoderr"]), tiny_corpus, tmp_path / "c", progress=False)
    with pytest.raises(TTSError, match="freezes every parameter"):
        Trainer(make_config(max_steps=1, freeze=["encoder", "decoder", "postnet"]), tiny_corpus, tmp_path / "d",
                progress=False)


def test_a_frozen_path_holds_whole_modules_only(tiny_corpus, tmp_path):
    """``decoder.attention`` freezes the attention, not ``decoder.attention_rnn`` beside it; a
    path that only begins a module's name (``decoder.attent``) names nothing."""
    trainer = Trainer(make_config(max_steps=1, freeze=["decoder.attention"]), tiny_corpus, tmp_path / "a", progress=False)
    learning = {name for name, parameter in trainer.model.named_parameters() if parameter.requires_grad}
    assert not any(name.startswith("decoder.attention.") for name in learning)
    assert any(name.startswith("decoder.attention_rnn.") for name in learning)
    with pytest.raises(TTSError, match=r"no parameter lies under the module path 'decoder.attent' "):
        Trainer(make_config(max_steps=1, freeze=["decoder.attent"]), tiny_corpus, tmp_path / "b", progress=False)


def test_oversampling_lengthens_the_training_epoch_only(tiny_corpus, tmp_path):
    plain = Trainer(make_config(max_steps=1), tiny_corpus, tmp_path / "a", progress=False)
    d = tiny_config_dict()
    d["train"].update(max_steps=1)
    d["data"] = {**d.get("data", {}), "oversample": [{"prefix": "TINY-000", "times": 4}]}
    trainer = Trainer(config_from_dict(d), tiny_corpus, tmp_path / "b", progress=False)
    under = trainer.oversampled["TINY-000"]
    assert under >= 2 and len(trainer.train_set) == len(plain.train_set) + 3 * under
    assert len(trainer.val_set) == len(plain.val_set)


def test_lr_scales_move_each_prefix_at_its_own_rate(tiny_corpus, tmp_path):
    """Adam's first update moves a weight by about its group's rate, so one update from a warm start
    shows each group's rate: the decoder at a tenth, its prenet (the longer prefix) at a half."""
    Trainer(make_config(max_steps=2, checkpoint_every=2), tiny_corpus, tmp_path / "a", progress=False).fit()
    start = checkpoint.read(tmp_path / "a" / "checkpoint_00000002.pt").weights
    scales = [{"prefix": "decoder", "scale": 0.1}, {"prefix": "decoder.prenet", "scale": 0.5}]
    config = make_config(max_steps=1, checkpoint_every=1, warm_start=str(tmp_path / "a" / "checkpoint_00000002.pt"),
                         lr_scales=scales, freeze=["postnet"])
    trainer = Trainer(config, tiny_corpus, tmp_path / "b", progress=False)
    assert [group["lr"] for group in trainer.optimizer.param_groups] == pytest.approx([2e-3, 1e-3, 2e-4])
    trainer.fit()
    end = checkpoint.read(tmp_path / "b" / "checkpoint_00000001.pt").weights

    def largest_move(prefix: str) -> float:
        return max(float((end[n] - start[n]).abs().max()) for n in start
                   if n.startswith(prefix) and start[n].is_floating_point() and "running" not in n)

    encoder, prenet = largest_move("encoder."), largest_move("decoder.prenet.")
    rest = max(largest_move(f"decoder.{m}") for m in ("attention_rnn", "decoder_rnn", "mel_proj", "stop_proj"))
    assert largest_move("postnet.") == 0
    assert prenet / encoder == pytest.approx(0.5, rel=0.05)
    assert rest / encoder == pytest.approx(0.1, rel=0.05)

    with pytest.raises(TTSError, match=r"'train.lr_scales': no parameter lies under the module path 'decodr'"):
        Trainer(make_config(max_steps=1, lr_scales=[{"prefix": "decodr"}]), tiny_corpus, tmp_path / "c", progress=False)
    with pytest.raises(TTSError, match=r"no trainable parameter is left under 'postnet' \(train.freeze holds them"):
        Trainer(make_config(max_steps=1, freeze=["postnet"], lr_scales=[{"prefix": "postnet", "scale": 0.1}]),
                tiny_corpus, tmp_path / "d", progress=False)


def test_anchors_pull_each_step_back_toward_the_warm_start(tiny_corpus, tmp_path):
    """One update with ``train.anchors`` is the same update without them, then each anchored
    weight moved ``lr · strength`` of its way back to the warm start; the rest is untouched, the
    distance is logged, and the warm-start values survive a resume exactly."""
    Trainer(make_config(max_steps=2, checkpoint_every=2), tiny_corpus, tmp_path / "a", progress=False).fit()
    warm = str(tmp_path / "a" / "checkpoint_00000002.pt")
    start = checkpoint.read(warm).weights
    Trainer(make_config(max_steps=1, checkpoint_every=1, warm_start=warm), tiny_corpus, tmp_path / "free",
            progress=False).fit()
    anchors = [{"prefix": "encoder", "strength": 100.0}]
    Trainer(make_config(max_steps=1, checkpoint_every=1, warm_start=warm, anchors=anchors), tiny_corpus,
            tmp_path / "pulled", progress=False).fit()
    free = checkpoint.read(tmp_path / "free" / "checkpoint_00000001.pt").weights
    pulled = checkpoint.read(tmp_path / "pulled" / "checkpoint_00000001.pt").weights
    moved = [n for n in start if n.startswith("encoder.") and "running" not in n and start[n].is_floating_point()
             and not torch.equal(free[n], start[n])]
    assert moved
    for name in moved:  # lr 2e-3 x strength 100: a fifth of the way back
        torch.testing.assert_close(pulled[name], free[name] - 0.2 * (free[name] - start[name]))
    for name in (n for n in start if n.startswith("decoder.")):
        torch.testing.assert_close(pulled[name], free[name], rtol=0, atol=0)
    records = [json.loads(x) for x in (tmp_path / "pulled" / "metrics.jsonl").read_text().splitlines()]
    assert 0 < records[0]["anchor_distance"] < 2e-3

    config = make_config(max_steps=4, checkpoint_every=2, warm_start=warm, anchors=anchors)
    Trainer(config, tiny_corpus, tmp_path / "whole", progress=False).fit()
    Trainer(make_config(max_steps=2, checkpoint_every=2, warm_start=warm, anchors=anchors), tiny_corpus,
            tmp_path / "resumed", progress=False).fit()
    Trainer(config, tiny_corpus, tmp_path / "resumed", resume=True, progress=False).fit()
    whole, resumed = (checkpoint.read(tmp_path / run / "checkpoint_00000004.pt").weights for run in ("whole", "resumed"))
    for name in whole:
        torch.testing.assert_close(resumed[name], whole[name], rtol=1e-6, atol=1e-7)


def test_anchors_refuse_what_cannot_pull(tiny_corpus, tmp_path):
    Trainer(make_config(max_steps=2, checkpoint_every=2), tiny_corpus, tmp_path / "a", progress=False).fit()
    warm = str(tmp_path / "a" / "checkpoint_00000002.pt")
    with pytest.raises(TTSError, match=r"would move past its warm-start value \(lr 0.002 × strength 500 ≥ 1\); "
                                       r"lower the strength below 500"):
        Trainer(make_config(max_steps=1, warm_start=warm, anchors=[{"prefix": "encoder", "strength": 500.0}]),
                tiny_corpus, tmp_path / "b", progress=False)
    with pytest.raises(TTSError, match=r"no trained parameter lies under 'postnet' \(a wrong module path, or "
                                       r"train.freeze holds them\)"):
        Trainer(make_config(max_steps=1, warm_start=warm, freeze=["postnet"], anchors=[{"prefix": "postnet"}]),
                tiny_corpus, tmp_path / "c", progress=False)
    with pytest.raises(TTSError, match=r"was trained without train.anchors; start a new run from it"):
        Trainer(make_config(max_steps=4, warm_start=warm, anchors=[{"prefix": "encoder"}]), tiny_corpus,
                tmp_path / "a", resume=True, progress=False)


def adversarial_config(**train):
    d = tiny_config_dict()
    d["train"].update(train)
    d["loss"] = {"adversarial": {"weight": 1.0, "feature_matching_weight": 2.0, "start_step": 2,
                                 "segment_frames": 16, "channels": 4}}
    return config_from_dict(d)


def test_matching_segments_cut_the_same_frames_inside_each_length():
    frames = torch.arange(30.0).expand(2, 3, 30)  # each value is its frame's index
    real, fake = matching_segments(frames, frames + 1000, torch.tensor([7, 30]), frames=16)
    assert real.shape == fake.shape == (2, 1, 3, 7)  # the shortest item bounds the segment
    assert torch.equal(fake - real, torch.full_like(real, 1000.0))
    starts = real[:, 0, 0, 0]
    assert torch.equal(real[:, 0, 0], starts[:, None] + torch.arange(7.0)) and starts[0] == 0


def test_the_adversarial_term_trains_a_discriminator_and_resumes_exactly(tiny_corpus, tmp_path):
    """The discriminator learns from step 1, the model's loss gains 1 · adversarial + 2 · feature
    matching from step 2 (0-based) on; the discriminator's state resumes with the run."""
    Trainer(adversarial_config(max_steps=4, checkpoint_every=2), tiny_corpus, tmp_path / "a", progress=False).fit()
    Trainer(adversarial_config(max_steps=2, checkpoint_every=2), tiny_corpus, tmp_path / "b", progress=False).fit()
    Trainer(adversarial_config(max_steps=4, checkpoint_every=2), tiny_corpus, tmp_path / "b", resume=True,
            progress=False).fit()
    records = {r["step"]: r for r in map(json.loads, (tmp_path / "a" / "metrics.jsonl").read_text().splitlines())
               if "split" not in r}
    for step, record in records.items():
        assert record["discriminator"] > 0 and record["adversarial"] > 0 and record["feature_matching"] > 0
        base = record["mel"] + record["mel_postnet"] + record["stop"] + record["guided_attention"]
        added = record["adversarial"] + 2 * record["feature_matching"] if step > 2 else 0.0
        assert record["loss"] == pytest.approx(base + added, rel=1e-4), step
    a, b = losses(tmp_path / "a"), losses(tmp_path / "b")
    assert sorted(b) == [1, 2, 3, 4] and all(a[s] == pytest.approx(b[s], rel=1e-6, abs=1e-7) for s in a)
    saved = checkpoint.read(tmp_path / "a" / "checkpoint_00000004.pt")
    assert {"discriminator", "optimizer_d", "scaler_d"} <= set(saved.training)
    assert not any("discriminator" in name for name in saved.weights)  # the release weights are the model's alone

    Trainer(make_config(max_steps=2, checkpoint_every=2), tiny_corpus, tmp_path / "c", progress=False).fit()
    with pytest.raises(TTSError, match="trained without loss.adversarial; start a new run from it with train.warm_start"):
        Trainer(adversarial_config(max_steps=4), tiny_corpus, tmp_path / "c", resume=True, progress=False).fit()


def test_gradual_reduction_schedule(tiny_corpus, tmp_path):
    d = tiny_config_dict()
    d["model"]["tacotron2"].update(reduction_factor=3, max_reduction_factor=3)
    d["train"].update(max_steps=4, r_schedule=[{"step": 0, "r": 3, "max_frames_per_batch": 2000},
                                               {"step": 2, "r": 2, "max_frames_per_batch": 1500}])
    Trainer(config_from_dict(d), tiny_corpus, tmp_path / "exp", progress=False).fit()
    records = [json.loads(x) for x in (tmp_path / "exp" / "metrics.jsonl").read_text().splitlines()]
    assert [r["r"] for r in records if "split" not in r] == [3, 3, 2, 2]
    # the checkpoint synthesizes with the r it ended on, not the config's starting r
    assert Synthesizer.from_checkpoint(tmp_path / "exp" / "checkpoint_00000004.pt").model.reduction_factor == 2


def test_config_errors_name_the_key(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"model": {"tacotron2": {"attention": {"kindd": "forward"}}}}))
    with pytest.raises(ConfigError, match="unknown config key 'model.tacotron2.attention.kindd'"):
        load_config(bad)
    with pytest.raises(ConfigError, match="'train.max_steps' must be int"):
        load_config(None, ["train.max_steps=lots"])
    bad.write_text("model: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    forward = load_config(ROOT / "configs/tacotron2.yaml", ["model.tacotron2.attention.kind=forward"])
    assert forward.model.tacotron2.attention.kind == "forward"


def test_train_cli_errors_are_one_line(tmp_path, tiny_corpus):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"trian": {}}))
    out = subprocess.run([sys.executable, "-m", "tts.cli", "train", "--config", str(cfg), "--data", str(tiny_corpus),
                          "--out", str(tmp_path / "e")], capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.startswith("error: unknown config key 'trian'")
    cfg.write_text(yaml.safe_dump({"audio": {"n_mels": 64}}))
    out = subprocess.run([sys.executable, "-m", "tts.cli", "train", "--config", str(cfg), "--data", str(tiny_corpus),
                          "--out", str(tmp_path / "e")], capture_output=True, text=True)
    assert out.returncode == 2 and "no features" in out.stderr and out.stderr.count("\n") == 1


def test_lr_schedules():
    noam = lr_multiplier(ScheduleConfig(kind="noam", warmup_steps=100), 1e-3)
    assert noam(0) == pytest.approx(0.01) and noam(99) == pytest.approx(1.0) and noam(399) == pytest.approx(0.5)
    exp = lr_multiplier(ScheduleConfig(kind="exponential", decay_rate=0.5, decay_steps=10, min_lr=1e-5), 1e-3)
    assert exp(10) == pytest.approx(0.5) and exp(10_000) == pytest.approx(0.01)
    step = lr_multiplier(ScheduleConfig(kind="step", step_size=5, gamma=0.1, min_lr=0.0), 1e-3)
    assert step(4) == 1.0 and step(5) == pytest.approx(0.1)


def test_ddp_two_cpu_processes(tiny_corpus, tmp_path):
    overrides = ["train.max_steps=3", "train.checkpoint_every=3", "train.validate_every=3", "data.num_workers=0",
                 "data.max_frames_per_batch=400"]
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump(tiny_config_dict()))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", "29533",
                          "-m", "tts.cli", "train", "--config", str(cfg), "--data", str(tiny_corpus),
                          "--out", str(tmp_path / "ddp"), "--no-progress", *overrides],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    exp = tmp_path / "ddp"
    assert (exp / "checkpoint_00000003.pt").is_file()
    assert "world size 2" in (exp / "train.log").read_text()
    assert sorted(losses(exp)) == [1, 2, 3]  # only rank 0 writes


def test_a_nan_in_the_data_never_reaches_a_checkpoint(tiny_corpus, tmp_path, caplog):
    import shutil

    import numpy as np

    corpus = tmp_path / "corpus"
    shutil.copytree(tiny_corpus, corpus, symlinks=True)
    config = make_config(max_steps=6, checkpoint_every=6, validate_every=6, max_nan_steps=6)
    mel_path = next((corpus / "features").glob("*/mels/TINY-0001.npy"))
    mel = np.load(mel_path)
    mel[3, 5] = np.nan
    np.save(mel_path, mel)
    trainer = Trainer(config, corpus, tmp_path / "exp", progress=False)
    trainer.fit()
    assert trainer.state.step == 6
    assert "non-finite features in TINY-0001; left out of the batch" in caplog.text
    for path in (tmp_path / "exp" / "checkpoint_00000006.pt", tmp_path / "exp" / "best.pt"):
        weights = checkpoint.read(path).weights
        assert all(bool(torch.isfinite(t).all()) for t in weights.values() if t.is_floating_point()), path


def test_a_non_finite_step_restores_the_batchnorm_statistics(tiny_corpus, tmp_path, monkeypatch):
    trainer = Trainer(make_config(max_steps=3, max_nan_steps=5), tiny_corpus, tmp_path / "exp", progress=False)
    original = trainer.criterion.forward
    stats_before = {}

    def poisoned(output, batch, step=0):
        terms = original(output, batch, step)
        if step == 1 and not stats_before:  # the second step's forward already moved the running statistics
            stats_before.update({i: s.clone() for i, s in enumerate(trainer._statistics_before_step)})
            terms["loss"] = terms["loss"] * float("nan")
        return terms

    monkeypatch.setattr(trainer.criterion, "forward", poisoned)
    after_skip = []
    optimizer_step = trainer._optimizer_step

    def record_skips(terms):
        grad_norm = optimizer_step(terms)
        if grad_norm is None:
            after_skip.extend(b.clone() for b in trainer._norm_statistics())
        return grad_norm

    monkeypatch.setattr(trainer, "_optimizer_step", record_skips)
    trainer.fit()
    assert trainer.state.nan_total == 1 and trainer.state.step == 3
    # the skipped step left the statistics as they were before its forward pass moved them
    assert len(after_skip) == len(stats_before) > 0
    assert all(torch.equal(a, stats_before[i]) for i, a in enumerate(after_skip))


def test_a_second_run_into_the_same_folder_is_refused(tiny_corpus, tmp_path):
    first = Trainer(make_config(max_steps=2), tiny_corpus, tmp_path / "exp", progress=False)
    with pytest.raises(TTSError, match=rf"{tmp_path / 'exp'} is in use by a training run \(pid {os.getpid()}"):
        Trainer(make_config(max_steps=2), tiny_corpus, tmp_path / "exp", progress=False)
    first.fit()  # the lock goes with the run
    Trainer(make_config(max_steps=4), tiny_corpus, tmp_path / "exp", resume=True, progress=False).fit()


def test_resume_rewrites_metrics_after_the_checkpoint_and_cleans_temp_files(tiny_corpus, tmp_path):
    Trainer(make_config(max_steps=4, checkpoint_every=2), tiny_corpus, tmp_path / "exp", progress=False).fit()
    exp = tmp_path / "exp"
    (exp / "checkpoint_00000004.pt").unlink()  # as if killed between steps 2 and 4's checkpoint
    with open(exp / "metrics.jsonl", "a") as fh:
        fh.write('{"step": 5, "loss": 1.0')  # and in the middle of a line
    (exp / ".checkpoint_00000006.pt.x1y2.tmp").write_bytes(b"half a checkpoint")
    Trainer(make_config(max_steps=4, checkpoint_every=2), tiny_corpus, exp, resume=True, progress=False).fit()
    steps = [json.loads(line)["step"] for line in (exp / "metrics.jsonl").read_text().splitlines() if '"val"' not in line]
    assert steps == [1, 2, 3, 4] and not list(exp.glob(".*.tmp"))
    # the sessions that made the run: the first from step 0, the resume from step 2; a session that
    # started after the checkpoint resumed from left nothing in it and is dropped
    sessions = [json.loads(line) for line in (exp / "sessions.jsonl").read_text().splitlines()]
    assert [s["step"] for s in sessions] == [0, 2]
    assert all(s["device"].startswith("cpu (") and s["torch"] == torch.__version__ for s in sessions)
    from tts.training.experiment import code_version

    assert all(s["commit"] == code_version() != "unknown" for s in sessions)  # the code that trained each session
    from tts.devices import NOTABLE_INSTRUCTIONS, cpu_instructions

    assert all(s["cpu_instructions"] == cpu_instructions() for s in sessions)  # bf16 numbers depend on them
    assert set(cpu_instructions()) <= set(NOTABLE_INSTRUCTIONS) and "avx2" in cpu_instructions()  # every CI CPU
    (exp / "checkpoint_00000004.pt").unlink()
    Trainer(make_config(max_steps=4, checkpoint_every=2), tiny_corpus, exp, resume=True, progress=False).fit()
    assert [json.loads(line)["step"] for line in (exp / "sessions.jsonl").read_text().splitlines()] == [0, 2]


def test_a_device_is_described_by_its_cpu_model_and_threads(monkeypatch):
    from tts.devices import describe_device

    model = next(line.partition(":")[2].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.startswith("model name"))
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    assert describe_device(torch.device("cpu")) == f"cpu ({model}, 1 thread)"
    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    assert describe_device(torch.device("cpu")) == f"cpu ({model}, 2 threads)"


def test_an_unwritable_folder_and_a_foreign_warm_start_are_one_line_errors(tiny_corpus, tmp_path):
    if os.geteuid() != 0:
        read_only = tmp_path / "ro"
        read_only.mkdir()
        read_only.chmod(0o500)
        with pytest.raises(TTSError, match="cannot write to the experiment folder"):
            Trainer(make_config(max_steps=1), tiny_corpus, read_only / "exp", progress=False)
    with pytest.raises(TTSError, match="cannot write to the experiment folder"):
        Trainer(make_config(max_steps=1), tiny_corpus, "/proc/tts-experiment", progress=False)
    d = tiny_config_dict()
    d["model"] = {"name": "transformer_tts", "transformer_tts": {
        "embedding_dim": 32, "d_model": 32, "heads": 2, "encoder_layers": 1, "decoder_layers": 1, "ffn_dim": 64,
        "decoder_prenet_dims": [32, 32], "postnet": {"layers": 2, "channels": 32}, "reduction_factor": 2}}
    d["train"].update(max_steps=2, checkpoint_every=2)
    Trainer(config_from_dict(d), tiny_corpus, tmp_path / "tf", progress=False).fit()
    with pytest.raises(TTSError, match="holds a transformer_tts model, this config trains tacotron2"):
        Trainer(make_config(max_steps=1, warm_start=str(tmp_path / "tf" / "checkpoint_00000002.pt"),
                            ignore_layers=["encoder.embedding"]), tiny_corpus, tmp_path / "warm", progress=False)


def test_kill_9_at_random_moments_then_resume_gives_the_same_weights(tiny_corpus, tmp_path):
    """SIGKILL (no chance to save) at random points, several times, each followed by --resume:
    at most one checkpoint interval is lost each time and the end is bit-identical."""
    import random

    cfg = tmp_path / "tiny.yaml"
    d = tiny_config_dict()
    d["train"].update(max_steps=12, checkpoint_every=2, validate_every=6, keep_last=3)
    cfg.write_text(yaml.safe_dump(d))
    command = [sys.executable, "-m", "tts.cli", "train", "--config", str(cfg), "--data", str(tiny_corpus),
               "--no-progress", "--out"]
    subprocess.run(command + [str(tmp_path / "clean")], check=True, capture_output=True)
    command.append(str(tmp_path / "killed"))
    metrics = tmp_path / "killed" / "metrics.jsonl"

    def steps_logged() -> int:
        """Complete training lines in metrics.jsonl (a half-written last line does not count)."""
        lines = metrics.read_text().split("\n")[:-1] if metrics.is_file() else []
        return sum('"val"' not in line for line in lines)

    # Kills are placed by progress, not by wall time, so a fast CI machine cannot finish first:
    # wait until a randomly chosen step is logged, then kill a random fraction of a step later.
    rng, kills = random.Random(7), 0
    while not (tmp_path / "killed" / "checkpoint_00000012.pt").is_file():
        resume = ["--resume"] if list((tmp_path / "killed").glob("checkpoint_*.pt")) else []
        proc = subprocess.Popen(command + resume, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if kills < 3:
            target = min(steps_logged() + rng.randint(1, 3), 9)
            deadline = time.monotonic() + 300
            while steps_logged() < target and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.15))
            proc.kill()
            kills += proc.wait() == -signal.SIGKILL
        else:
            assert proc.wait(timeout=300) == 0
    clean = checkpoint.read(tmp_path / "clean" / "checkpoint_00000012.pt").weights
    killed = checkpoint.read(tmp_path / "killed" / "checkpoint_00000012.pt").weights
    assert kills == 3 and all(torch.equal(clean[k], killed[k]) for k in clean)
    steps = [json.loads(x)["step"] for x in (tmp_path / "killed" / "metrics.jsonl").read_text().splitlines()
             if '"val"' not in x]
    assert steps == list(range(1, 13))  # no duplicated or half-written lines


def test_a_full_disk_during_training_is_one_error_naming_the_last_good_checkpoint(tiny_corpus, tmp_path, monkeypatch):
    trainer = Trainer(make_config(max_steps=4, checkpoint_every=2), tiny_corpus, tmp_path / "exp", progress=False)
    original = torch.save

    def fills_up(payload, fh, *args, **kwargs):
        if payload.get("step") == 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(payload, fh, *args, **kwargs)

    monkeypatch.setattr(torch, "save", fills_up)
    with pytest.raises(TTSError, match=r"cannot write .*(best|checkpoint_00000004).pt \(No space left on device\); the last "
                                       r"good checkpoint is .*checkpoint_00000002.pt"):
        trainer.fit()
    assert checkpoint.read(tmp_path / "exp" / "checkpoint_00000002.pt").step == 2


def test_report_reads_a_metrics_file_cut_short(tiny_experiment, tmp_path):
    import shutil

    from tts.evaluation.report import build_report

    exp = tmp_path / "exp"
    shutil.copytree(tiny_experiment, exp)
    with open(exp / "metrics.jsonl", "a") as fh:
        fh.write('{"step": 5, "loss": 1.')
    assert "losses.png" in build_report(exp).read_text()


@pytest.mark.parametrize("rank", [0, 1])
def test_a_shared_cache_is_made_by_the_main_process_before_the_others_read_it(rank, monkeypatch):
    """main_first: with several processes the main one makes the cache, then all meet at a barrier,
    then the others call the same maker (which finds the cache made); alone, no barrier."""
    from tts.training import run

    events: list[str] = []
    monkeypatch.setattr(run.dist, "barrier", lambda: events.append("barrier"))
    training = object.__new__(run.TrainingRun)
    training.is_main, training.world_size = rank == 0, 2
    assert training.main_first(lambda: events.append("make") or "cache") == "cache"
    assert events == (["make", "barrier"] if rank == 0 else ["barrier", "make"])
    events.clear()
    training.is_main, training.world_size = True, 1
    training.main_first(lambda: events.append("make"))
    assert events == ["make"]


@pytest.mark.parametrize("has_bf16", [False, True])
def test_bf16_training_warns_where_the_cpu_would_emulate_it(has_bf16, tiny_corpus, tmp_path, monkeypatch):
    import tts.training.run as run

    monkeypatch.setattr(run, "computes_bf16", lambda device: has_bf16)
    Trainer(make_config(max_steps=1, checkpoint_every=1, validate_every=1, amp="bf16"), tiny_corpus,
            tmp_path / "exp", progress=False).fit()
    warned = "train.amp=bf16 on cpu" in (tmp_path / "exp" / "train.log").read_text()
    assert warned is not has_bf16
