"""Vocoders behind one interface (:class:`Vocoder`): Griffin-Lim, and neural vocoders beside it;
:mod:`tts.vocoders.catalogue` names them. The classes are imported on first use, so that reading
the catalogue (e.g. for ``tts --help``) does not import torch."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tts.vocoders.base import MEL_FIELDS, NeuralVocoder, Vocoder
    from tts.vocoders.griffin_lim import GriffinLim
    from tts.vocoders.hifigan import HiFiGANGenerator
    from tts.vocoders.registry import build_discriminators, build_vocoder
    from tts.vocoders.vocos import VocosGenerator

_HOMES = {"MEL_FIELDS": "base", "NeuralVocoder": "base", "Vocoder": "base", "GriffinLim": "griffin_lim",
          "HiFiGANGenerator": "hifigan", "build_discriminators": "registry", "build_vocoder": "registry",
          "VocosGenerator": "vocos"}
__all__ = ["GriffinLim", "HiFiGANGenerator", "MEL_FIELDS", "NeuralVocoder", "Vocoder", "VocosGenerator",
           "build_discriminators", "build_vocoder"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
