"""The neural vocoders a :class:`~tts.config.VocoderConfig` can name, built from it."""

from __future__ import annotations

from torch import nn

from tts.config import AudioConfig, VocoderConfig
from tts.vocoders.base import Vocoder
from tts.vocoders.hifigan import Discriminators, HiFiGANGenerator


def build_vocoder(config: VocoderConfig, audio: AudioConfig) -> Vocoder:
    """The generator ``config.kind`` names, for mels made with ``audio``."""
    if config.kind == "hifigan":
        return HiFiGANGenerator(config.hifigan, audio)
    raise ValueError(f"unknown vocoder kind {config.kind!r}")  # the config's Literal rules it out


def build_discriminators(config: VocoderConfig) -> nn.Module:
    """The discriminators that train ``config.kind``'s generator."""
    if config.kind == "hifigan":
        return Discriminators(config.hifigan.discriminator_periods, config.hifigan.discriminator_channels)
    raise ValueError(f"unknown vocoder kind {config.kind!r}")
