"""Vocoders behind one interface (:class:`Vocoder`): Griffin-Lim, and neural vocoders beside it."""

from tts.vocoders.base import MEL_FIELDS, Vocoder
from tts.vocoders.griffin_lim import GriffinLim

__all__ = ["GriffinLim", "MEL_FIELDS", "Vocoder"]
