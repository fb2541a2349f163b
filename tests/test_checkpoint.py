"""The checkpoint module owns the format: one writer, one reader, a loaded bundle, upgrades."""

import pytest
import torch
import yaml
from conftest import tiny_config_dict

from tts import checkpoint
from tts.config import config_from_dict, load_config, to_dict
from tts.errors import TTSError
from tts.models import build_model
from tts.text import SymbolInventory


@pytest.fixture
def saved(tmp_path):
    config = config_from_dict(tiny_config_dict())
    model = build_model(config.model, len(SymbolInventory()), config.audio)
    path = checkpoint.save(tmp_path / "c.pt", model, config, SymbolInventory(), 7, training={"state": {"step": 7}})
    return path, model, config


def test_load_returns_a_runnable_bundle(saved):
    path, model, config = saved
    loaded = checkpoint.load(path)
    assert loaded.step == 7 and loaded.config == config and loaded.audio == config.audio
    assert loaded.inventory.symbols == SymbolInventory().symbols and not loaded.model.training
    for name, tensor in model.state_dict().items():
        assert torch.equal(loaded.model.state_dict()[name], tensor), name
    assert checkpoint.read(path).training == {"state": {"step": 7}}


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_a_written_checkpoint_has_the_permissions_of_any_new_file(saved, tmp_path, umask):
    """The atomic write goes through a private temporary file; the result must not stay private."""
    import os

    _, model, config = saved
    previous = os.umask(umask)
    try:
        path = checkpoint.save(tmp_path / "shared.pt", model, config, SymbolInventory(), 1)
        (tmp_path / "plain").touch()
    finally:
        os.umask(previous)
    assert path.stat().st_mode & 0o777 == (tmp_path / "plain").stat().st_mode & 0o777 == 0o666 & ~umask


def test_the_writer_records_the_reduction_factor_in_force(saved, tmp_path):
    _, model, config = saved
    model.set_reduction_factor(1)
    path = checkpoint.save(tmp_path / "r1.pt", model, config, SymbolInventory(), 8)
    assert config.model.tacotron2.reduction_factor == 2  # the caller's config is left alone
    assert checkpoint.read(path).config.model.tacotron2.reduction_factor == 1
    assert checkpoint.load(path).model.reduction_factor == 1


def version_2_config(config) -> dict:
    """``config`` as format 2 wrote it: one flat attention section with every mechanism's settings,
    ``postnet_*`` fields, Griffin-Lim's settings under ``audio`` and ``inference.griffin_lim_iters``."""
    old = to_dict(config)
    section = old["model"]["tacotron2"]
    section.update({f"postnet_{k}": v for k, v in section.pop("postnet").items()})
    attention = section["attention"]
    attention.update({"location_filters": attention.pop("filters"), "location_kernel": attention.pop("kernel"),
                      "transition_agent": False, "gmm_mixtures": 5, "dca_prior_length": 11, "local_window": 4,
                      "gumbel_temperature": [1.0, 0.3], "sigmoid_noise": 2.0})
    old["model"]["transformer_tts"].update(
        {f"postnet_{k}": v for k, v in old["model"]["transformer_tts"].pop("postnet").items()})
    griffin_lim = old["inference"].pop("griffin_lim")
    old["inference"]["griffin_lim_iters"] = griffin_lim.pop("iterations")
    old["audio"].update({f"griffin_lim_{k}": v for k, v in griffin_lim.items()})
    return old


def test_version_2_files_are_upgraded(saved, tmp_path):
    path, model, config = saved
    old = version_2_config(config)
    old["audio"]["griffin_lim_momentum"] = 0.5
    torch.save({"format": "tts-checkpoint", "version": 2, "kind": "acoustic", "model": model.state_dict(),
                "config": old, "symbols": SymbolInventory().to_dict(), "step": 3}, tmp_path / "v2.pt")
    contents = checkpoint.read(tmp_path / "v2.pt")
    assert contents.config.inference.griffin_lim.momentum == 0.5
    assert contents.config.model.tacotron2.postnet == config.model.tacotron2.postnet
    assert contents.config.model.tacotron2.attention == config.model.tacotron2.attention  # others' settings dropped
    assert checkpoint.load(tmp_path / "v2.pt").model.state_dict().keys() == model.state_dict().keys()


@pytest.mark.parametrize("stored", [True, False])
def test_prenet_dropout_moves_from_the_model_to_the_decoding_settings(saved, tmp_path, stored):
    """Checkpoints and saved run configs from before inference.prenet_dropout keep meaning what they meant."""
    path, model, config = saved
    old = to_dict(config)
    old["model"]["tacotron2"]["prenet_dropout_at_inference"] = stored
    del old["inference"]["prenet_dropout"]
    torch.save({"format": "tts-checkpoint", "version": 3, "kind": "acoustic", "model": model.state_dict(),
                "config": old, "symbols": SymbolInventory().to_dict(), "step": 3}, tmp_path / "old.pt")
    assert checkpoint.read(tmp_path / "old.pt").config.inference.prenet_dropout is stored
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(old))
    assert load_config(tmp_path / "old.yaml").inference.prenet_dropout is stored


def test_the_bundled_model_is_current_and_keeps_its_release_settings():
    from tts.checkpoint import PRETRAINED, VERSION

    assert torch.load(PRETRAINED, weights_only=True)["version"] == VERSION
    contents = checkpoint.read_bundled()
    attention = contents.config.model.tacotron2.attention
    assert (attention.kind, attention.prior_length, attention.dynamic_kernel) == ("dynamic_convolution", 11, 21)
    assert contents.config.inference.attention_window == [1, 2]
    assert contents.config.inference.griffin_lim.iterations == 64


def test_version_1_files_are_upgraded(saved, tmp_path):
    path, model, config = saved
    old = version_2_config(config)
    old["audio"]["griffin_lim_iters"] = old["inference"]["griffin_lim_iters"] + 1
    del old["inference"]
    torch.save({"format": "tts-checkpoint", "version": 1, "model": model.state_dict(), "config": old,
                "symbols": SymbolInventory().to_dict(), "model_name": "tacotron2", "step": 3,
                "optimizer": {"o": 1}, "scheduler": {}, "scaler": {}, "train_state": {"step": 3}, "rng": {}},
               tmp_path / "v1.pt")
    contents = checkpoint.read(tmp_path / "v1.pt")
    assert contents.config.inference.griffin_lim.iterations == 65 and contents.step == 3
    assert contents.training == {"optimizer": {"o": 1}, "scheduler": {}, "scaler": {}, "state": {"step": 3}, "rng": {}}


@pytest.mark.parametrize("field, value, message", [
    ("step", "abc", "its step is 'abc'"), ("config", "a string", "incompatible version"),
    ("model", {"w": "not a tensor"}, "weights are not a mapping of tensors"), ("version", 9, "version 9"),
])
def test_corrupt_fields_are_one_line_errors(saved, tmp_path, field, value, message):
    path, _, _ = saved
    payload = torch.load(path, weights_only=True)
    payload[field] = value
    torch.save(payload, tmp_path / "bad.pt")
    with pytest.raises(TTSError, match=message):
        checkpoint.read(tmp_path / "bad.pt")


def test_non_finite_weights_are_refused(saved, tmp_path):
    path, _, _ = saved
    payload = torch.load(path, weights_only=True)
    payload["model"]["decoder.mel_proj.weight"][0, 0] = float("nan")
    torch.save(payload, tmp_path / "nan.pt")
    with pytest.raises(TTSError, match=r"NaN or infinite weights \(1 tensors, e.g. decoder.mel_proj.weight\)"):
        checkpoint.load(tmp_path / "nan.pt")


def test_export_strips_training_state_and_checks_its_destination(saved, tmp_path):
    path, _, _ = saved
    release = checkpoint.export(path, tmp_path / "release.pt")
    contents = checkpoint.read(release)
    assert contents.training is None and contents.step == 7
    assert all(t.dtype == torch.float16 for t in contents.weights.values() if t.is_floating_point())
    for bad in (tmp_path, tmp_path / "release"):
        with pytest.raises(TTSError, match="ending in .pt"):
            checkpoint.export(path, bad)
    with pytest.raises(TTSError, match="is a folder"):
        checkpoint.read(tmp_path)


def test_export_of_several_checkpoints_averages_their_weights(saved, tmp_path):
    path, model, config = saved
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(1.0)
    later = checkpoint.save(tmp_path / "d.pt", model, config, SymbolInventory(), 9)
    mean = checkpoint.read(checkpoint.export([path, later], tmp_path / "mean.pt", half=False))
    first, second = checkpoint.read(path).weights, checkpoint.read(later).weights
    assert mean.step == 9 and mean.training is None
    for name, tensor in mean.weights.items():
        if tensor.is_floating_point():
            torch.testing.assert_close(tensor, (first[name] + second[name]) / 2)
    weighted = checkpoint.read(checkpoint.export([path, later, later], tmp_path / "weighted.pt", half=False))
    for name, tensor in weighted.weights.items():  # listed twice, the later one weighs 2/3 (a WiSE-FT blend)
        if tensor.is_floating_point():
            torch.testing.assert_close(tensor, (first[name] + 2 * second[name]) / 3)
    settings = tiny_config_dict()
    settings["model"]["tacotron2"]["attention"]["kind"] = "content"
    other = config_from_dict(settings)
    stranger = checkpoint.save(tmp_path / "e.pt", build_model(other.model, len(SymbolInventory()), other.audio),
                               other, SymbolInventory(), 3)
    with pytest.raises(TTSError, match="is not the same model as .*c.pt: average checkpoints of one model"):
        checkpoint.export([path, stranger], tmp_path / "bad.pt")
    assert not (tmp_path / "bad.pt").exists()


def test_export_stores_the_inference_settings_it_is_given_and_checks_them(saved, tmp_path):
    path, _, _ = saved
    release = checkpoint.export(path, tmp_path / "windowed.pt", inference={"attention_window": [1, 2]})
    settings = checkpoint.read(release).config.inference
    assert settings.attention_window == [1, 2]
    assert settings.max_decoder_steps == checkpoint.read(path).config.inference.max_decoder_steps
    with pytest.raises(TTSError, match="inference.attention_window"):
        checkpoint.export(path, tmp_path / "bad.pt", inference={"attention_window": [1]})
    with pytest.raises(TTSError, match="inference.no_such_key"):
        checkpoint.export(path, tmp_path / "bad.pt", inference={"no_such_key": 1})
    assert not (tmp_path / "bad.pt").exists()
