"""Typed configuration, one module per section (each part's settings in one place), loaded
strictly from YAML: unknown keys, wrong types and out-of-range values are errors naming the key.

The sections live at the ground floor, beside the loader, because the checkpoint format and the
feature cache (below the training layer) hold the whole experiment's config.
"""

from tts.config.attention import ATTENTION_KINDS, AttentionConfig, attention_config
from tts.config.audio import MEL_FIELDS, AudioConfig
from tts.config.data import DataConfig
from tts.config.experiment import ExperimentConfig, VocoderExperimentConfig, config_from_dict, load_config, save_config
from tts.config.inference import GriffinLimConfig, InferenceConfig, resolve_inference
from tts.config.model import (
                              FrameDecoderConfig,
                              ModelConfig,
                              PostnetConfig,
                              SpeakerConfig,
                              Tacotron2Config,
                              TransformerTTSConfig,
)
from tts.config.schema import apply_overrides, bounded, build, choices, parse_override, replaced, to_dict
from tts.config.text import TextConfig
from tts.config.training import (
                              AdversarialConfig,
                              GuidedAttentionConfig,
                              LossConfig,
                              OptimConfig,
                              ReductionStage,
                              ScheduleConfig,
                              ScheduledSamplingConfig,
                              TrainConfig,
)
from tts.config.vocoder import DiscriminatorConfig, HiFiGANConfig, VocoderConfig, VocosConfig

__all__ = [
    "ATTENTION_KINDS", "AdversarialConfig", "AttentionConfig", "AudioConfig", "DataConfig", "DiscriminatorConfig",
    "ExperimentConfig", "FrameDecoderConfig", "GriffinLimConfig", "GuidedAttentionConfig", "HiFiGANConfig",
    "InferenceConfig", "LossConfig", "MEL_FIELDS", "ModelConfig", "OptimConfig", "PostnetConfig", "ReductionStage",
    "ScheduleConfig", "ScheduledSamplingConfig", "SpeakerConfig", "Tacotron2Config", "TextConfig", "TrainConfig",
    "TransformerTTSConfig", "VocoderConfig", "VocoderExperimentConfig", "VocosConfig", "apply_overrides",
    "attention_config", "bounded", "build", "choices", "config_from_dict", "load_config", "parse_override",
    "replaced", "resolve_inference", "save_config", "to_dict",
]
