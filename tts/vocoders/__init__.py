"""Vocoders behind one interface (:class:`Vocoder`): Griffin-Lim, and neural vocoders beside it."""

from tts.vocoders.base import MEL_FIELDS, NeuralVocoder, Vocoder
from tts.vocoders.griffin_lim import GriffinLim
from tts.vocoders.hifigan import HiFiGANGenerator
from tts.vocoders.registry import build_discriminators, build_vocoder
from tts.vocoders.vocos import VocosGenerator

__all__ = ["GriffinLim", "HiFiGANGenerator", "MEL_FIELDS", "NeuralVocoder", "Vocoder", "VocosGenerator",
           "build_discriminators", "build_vocoder"]
