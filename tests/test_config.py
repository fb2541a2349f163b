"""Config values are checked at load: enumerated options, ranges and cross-field rules name the key."""

import pytest

from tts.config import ATTENTION_KINDS, InferenceConfig, load_config, resolve_inference
from tts.errors import ConfigError
from tts.models.attention import available


@pytest.mark.parametrize("override, message", [
    ("optim.lr=-1", "'optim.lr' must be > 0, got -1"),
    ("audio.hop_length=0", "'audio.hop_length' must be >= 1, got 0"),
    ("audio.sample_rate=-22050", "'audio.sample_rate' must be >= 1000"),
    ("audio.n_mels=0", "'audio.n_mels' must be >= 1"),
    ("audio.win_length=2048", "'audio.win_length' (2048) must not exceed n_fft (1024)"),
    ("audio.fmax=20000", "'audio.fmax' (20000) must lie above fmin"),
    ("train.checkpoint_every=0", "'train.checkpoint_every' must be >= 1"),
    ("model.name=wavenet", "'model.name' must be one of tacotron2, transformer_tts, got 'wavenet'"),
    ("model.tacotron2.attention.kind=nope", "'model.tacotron2.attention.kind' must be one of content,"),
    ("text.mode=ipa", "'text.mode' must be one of phoneme, char, mixed"),
    ("loss.mel_loss=huber", "'loss.mel_loss' must be one of mse, l1"),
    ("train.amp=fp8", "'train.amp' must be one of auto, off, bf16, fp16"),
    ("optim.schedule.kind=noam", "'optim.schedule.warmup_steps' must be > 0 for the noam schedule"),
    ("inference.attention_window=[-3,-3]", "'inference.attention_window' must be >= 0"),
    ("inference.attention_window=[1]", "'inference.attention_window' must hold 2 values, got 1 ([1])"),
    ("inference.griffin_lim.iterations=-3", "'inference.griffin_lim.iterations' must be >= 1"),
    ("inference.stop_threshold=2", "'inference.stop_threshold' must be >= 0 and <= 1, got 2"),
    ("train.max_steps=1e30", "'train.max_steps' must be int, got '1e30'"),
    ("model.tacotron2.postnet.layers=0", "'model.tacotron2.postnet.layers' must be >= 1"),
    ("model.tacotron2.prenet_dropout=1.0", "'model.tacotron2.prenet_dropout' must be >= 0 and < 1"),
    ("optim.betas=[0.9,1.5]", "'optim.betas' must be >= 0 and < 1"),
    ("optim.betas=[0.9]", "'optim.betas' must hold 2 values, got 1 ([0.9])"),
    ("model.tacotron2.prenet_dims=[]", "'model.tacotron2.prenet_dims' must hold at least 1 value(s), got []"),
    ("audio.log_floor=.nan", "'audio.log_floor' must be > 0 and < 1"),
    ("train.lr_scales=[{prefix: decoder, scale: 0}]", "'train.lr_scales[0].scale' must be > 0, got 0"),
    ("train.lr_scales=[{scale: 0.1}]", "'train.lr_scales[0].prefix' must name a parameter-name prefix"),
    ("train.lr_scales=[{prefix: decoder}, {prefix: decoder, scale: 2}]",
     "'train.lr_scales' names a prefix more than once (decoder)"),
    ("train.anchors=[{prefix: encoder, strength: 0}]", "'train.anchors[0].strength' must be > 0, got 0"),
    ("train.anchors=[{strength: 10}]", "'train.anchors[0].prefix' must name a parameter-name prefix"),
    ("train.anchors=[{prefix: encoder}]",
     "'train.anchors' pulls parameters back toward the warm start's; set train.warm_start too"),
    ("data.oversample=[{prefix: SHT, times: 0}]", "'data.oversample[0].times' must be >= 1, got 0"),
    ("data.oversample=[{times: 4}]", "'data.oversample[0].prefix' must name an utterance-id prefix"),
    ("data.oversample=[{prefix: SHT}, {prefix: SHT, times: 2}]", "'data.oversample' names a prefix more than once (SHT)"),
])
def test_bad_values_name_the_key(override, message):
    with pytest.raises(ConfigError, match="config key " + __import__("re").escape(message)):
        load_config(None, [override])


@pytest.mark.parametrize("temperature, message", [
    ("[1.0, 0.0]", "must be > 0, got [1.0, 0.0]"),
    ("[0.0, 0.3]", "must be > 0, got [0.0, 0.3]"),
    ("[0.3, 1.0]", "must not increase from value to value (from high to low), got [0.3, 1.0]"),
    ("[1.0, 0.5, 0.3]", "must hold 2 values, got 3 ([1.0, 0.5, 0.3])"),
    ("[1.0]", "must hold 2 values, got 1 ([1.0])"),
])
def test_a_hard_attention_temperature_schedule_that_would_crash_is_refused_at_load(temperature, message):
    """These loaded before and failed in training (a math domain error, a division by zero, too
    many values to unpack)."""
    with pytest.raises(ConfigError, match=__import__("re").escape(f"'model.tacotron2.attention.temperature' {message}")):
        load_config(None, ["model.tacotron2.attention.kind=hard", f"model.tacotron2.attention.temperature={temperature}"])
    constant = load_config(None, ["model.tacotron2.attention.kind=hard", "model.tacotron2.attention.temperature=[0.5, 0.5]"])
    assert constant.model.tacotron2.attention.temperature == [0.5, 0.5]


def test_acoustic_only_training_keys_are_refused_in_a_vocoder_config_by_the_schema():
    from tts.config import VocoderExperimentConfig, config_from_dict, to_dict

    with pytest.raises(ConfigError, match=r"config key 'train.grad_accum' applies to acoustic models only"):
        load_config(None, ["train.grad_accum=2"], VocoderExperimentConfig)
    saved = to_dict(VocoderExperimentConfig())  # a saved vocoder config lists every key at its default: it loads
    assert config_from_dict(saved, VocoderExperimentConfig).train.grad_accum == 1
    assert load_config(None, ["train.grad_accum=2"]).train.grad_accum == 2  # an acoustic model may


def test_attention_names_are_the_registry():
    assert sorted(ATTENTION_KINDS) == available()


def test_each_mechanism_reads_only_its_own_settings():
    with pytest.raises(ConfigError, match=r"unknown config key 'model.tacotron2.attention.mixtures' \(valid keys "
                                          r"here: attention_dim, filters, kernel, kind, start_on_first_token\)"):
        load_config(None, ["model.tacotron2.attention.mixtures=3"])  # a GMM setting; the default is location-sensitive
    config = load_config(None, ["model.tacotron2.attention.kind=gmm", "model.tacotron2.attention.mixtures=3"])
    assert config.model.tacotron2.attention.mixtures == 3
    assert not hasattr(config.model.tacotron2.attention, "filters")


def test_overrides_are_resolved_once_and_checked_like_a_file():
    stored = InferenceConfig(stop_threshold=0.3)
    settings = resolve_inference(stored, {"max_decoder_steps": 5, "attention_window": (1, 2),
                                          "griffin_lim.iterations": 7, "batch_size": None})
    assert (settings.max_decoder_steps, settings.attention_window, settings.griffin_lim.iterations) == (5, [1, 2], 7)
    assert settings.stop_threshold == 0.3 and settings.batch_size == stored.batch_size  # None: not given
    assert resolve_inference(stored, {}) is stored
    with pytest.raises(ConfigError, match="'inference.max_decoder_steps' must be >= 1 and <= 100000, got 0"):
        resolve_inference(settings, {"max_decoder_steps": 0})
    with pytest.raises(ConfigError, match="unknown config key 'inference.speed'"):
        resolve_inference(settings, {"speed": 2})


def test_exponent_floats_without_a_dot_are_floats():
    """YAML 1.1 reads 5e-4 as a string; a float key takes it as the number, and only numbers."""
    config = load_config(None, ["optim.lr=5e-4", "inference.griffin_lim.relaxation=1E0"])
    assert config.optim.lr == 5e-4 and config.inference.griffin_lim.relaxation == 1.0
    with pytest.raises(ConfigError, match="'optim.lr' must be float, got 'fast'"):
        load_config(None, ["optim.lr=fast"])
    with pytest.raises(ConfigError, match="'inference.griffin_lim.relaxation' must be > 0 and < 1.5, got '2e0'"):
        load_config(None, ["inference.griffin_lim.relaxation=2e0"])


@pytest.mark.parametrize("path", ["configs/tacotron2.yaml", "configs/tacotron2_nvidia.yaml",
                                  "configs/tacotron2_small.yaml", "configs/attention_study.yaml",
                                  "configs/attention_study_v2.yaml"])
def test_every_mechanism_is_one_line_away_in_every_tacotron2_config(path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for kind in ATTENTION_KINDS:
        config = load_config(root / path, [f"model.tacotron2.attention.kind={kind}"])
        assert config.model.tacotron2.attention.kind == kind


def test_a_bare_off_is_the_choice_off_not_a_boolean():
    assert load_config(None, ["train.amp=off"]).train.amp == "off"  # YAML 1.1 reads off as False
    with pytest.raises(ConfigError, match="'train.amp' must be one of auto, off, bf16, fp16, got True"):
        load_config(None, ["train.amp=yes"])


def test_the_study_transformer_arm_differs_from_its_variants_only_in_alpha():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "configs" / "attention_study_v2_transformer.yaml"
    learned = load_config(path)
    fixed = load_config(path, ["model.transformer_tts.positional_alpha_learned=false"])
    assert learned.model.transformer_tts.positional_alpha_learned is True
    assert fixed.model.transformer_tts.positional_alpha_learned is False
    tacotron2 = load_config(path.with_name("attention_study_v2.yaml"))
    # the same data budget as the Tacotron2 arm: updates, batch and validation points
    assert (learned.train.max_steps, learned.data.max_frames_per_batch, learned.train.validate_every) == (
        tacotron2.train.max_steps, tacotron2.data.max_frames_per_batch, tacotron2.train.validate_every)
