"""The neural vocoders a :class:`~tts.config.VocoderConfig` can name, built from it."""

from __future__ import annotations

from torch import nn

from tts.config import AudioConfig, VocoderConfig
from tts.vocoders.base import Vocoder
from tts.vocoders.hifigan import Discriminators, HiFiGANGenerator
from tts.vocoders.vocos import VocosGenerator


def build_vocoder(config: VocoderConfig, audio: AudioConfig) -> Vocoder:
    """The generator ``config.kind`` names, for mels made with ``audio``."""
    if config.kind == "hifigan":
        return HiFiGANGenerator(config.hifigan, audio)
    if config.kind == "vocos":
        return VocosGenerator(config.vocos, audio)
    raise ValueError(f"unknown vocoder kind {config.kind!r}")  # the config's Literal rules it out


def build_discriminators(config: VocoderConfig) -> nn.Module:
    """The discriminators that train a generator of any kind (``vocoder.discriminators``)."""
    d = config.discriminators
    return Discriminators(d.periods, d.channels, d.multi_scale, d.resolutions, d.resolution_channels)
