"""Vocoders behind one interface (:class:`Vocoder`): Griffin-Lim, and neural vocoders beside it."""

from tts.vocoders.base import MEL_FIELDS, Vocoder
from tts.vocoders.griffin_lim import GriffinLim
from tts.vocoders.hifigan import HiFiGANGenerator
from tts.vocoders.registry import build_discriminators, build_vocoder

__all__ = ["GriffinLim", "HiFiGANGenerator", "MEL_FIELDS", "Vocoder", "build_discriminators", "build_vocoder"]
