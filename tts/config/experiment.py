"""A whole run's configuration, composed of every part's section, and its YAML loader.

A run writes the exact config it used (``config.yaml``) next to its checkpoints, and every
checkpoint carries it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tts.config.audio import AudioConfig
from tts.config.data import DataConfig
from tts.config.inference import InferenceConfig
from tts.config.model import ModelConfig
from tts.config.schema import apply_overrides, build, read_yaml, scoped, write_yaml
from tts.config.text import TextConfig
from tts.config.training import LossConfig, OptimConfig, TrainConfig
from tts.config.upgrade import upgrade_acoustic
from tts.config.vocoder import VocoderConfig
from tts.errors import ConfigError


@dataclass
class ExperimentConfig:
    """Everything an acoustic model's run needs; saved verbatim next to its checkpoints and inside them."""

    audio: AudioConfig = field(default_factory=AudioConfig)
    text: TextConfig = field(default_factory=TextConfig)
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    loss: LossConfig = field(default_factory=LossConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    inference: InferenceConfig = field(default_factory=InferenceConfig)


@dataclass
class VocoderExperimentConfig:
    """A vocoder run: the audio settings its mels are made with, the training loop's settings (the
    keys :class:`~tts.config.TrainConfig` declares for acoustic models only are refused) and the
    vocoder; saved next to its checkpoints and inside them."""

    audio: AudioConfig = field(default_factory=AudioConfig)
    train: TrainConfig = scoped(TrainConfig, "vocoder")
    vocoder: VocoderConfig = field(default_factory=VocoderConfig)


Config = TypeVar("Config", ExperimentConfig, VocoderExperimentConfig)


def config_from_dict(data: dict[str, Any] | None, schema: type[Config] = ExperimentConfig) -> Config:  # type: ignore[assignment]
    """Build a config (an :class:`ExperimentConfig`, or the ``schema`` given) from nested dicts;
    unknown keys are errors."""
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"a config must be a mapping, got {type(data).__name__}")
    return build(schema, data or {})


def load_config(path: str | Path | None = None, overrides: list[str] | None = None,
                schema: type[Config] = ExperimentConfig) -> Config:  # type: ignore[assignment]
    """Read a YAML config (or the defaults when ``path`` is None) and apply ``key.path=value``
    overrides; ``schema``: :class:`ExperimentConfig` (acoustic models) or :class:`VocoderExperimentConfig`."""
    data: dict[str, Any] = {}
    if path is not None:
        data = read_yaml(path)
        if ("vocoder" in data) != (schema is VocoderExperimentConfig):
            raise ConfigError(f"config file {path} is a vocoder config: train it with 'tts train-vocoder'"
                              if "vocoder" in data else
                              f"config file {path} is an acoustic model config; 'tts train-vocoder' takes a "
                              f"vocoder config (configs/hifigan_v1.yaml, _v2, _v3)")
    if schema is ExperimentConfig:
        upgrade_acoustic(data)
    apply_overrides(data, overrides or [])
    return config_from_dict(data, schema)


def save_config(config: ExperimentConfig | VocoderExperimentConfig, path: str | Path) -> None:
    """Write the config as YAML (loadable by :func:`load_config`)."""
    write_yaml(config, path)
