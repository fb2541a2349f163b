"""The model registry: config names (:data:`tts.config.ModelName`) → model classes.

A model class takes ``(section_config, n_symbols, audio, go_frame)`` and derives from
:class:`~tts.models.decoding.AutoregressiveTTS`; ``@register_model("name")`` makes it buildable.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from tts.config import AudioConfig, ModelConfig
from tts.errors import TTSError
from tts.models.decoding import AutoregressiveTTS

M = TypeVar("M", bound=type[AutoregressiveTTS])
_MODELS: dict[str, Callable[..., AutoregressiveTTS]] = {}


def register_model(name: str) -> Callable[[M], M]:
    """Class decorator registering an acoustic model under ``name``."""
    def wrap(cls: M) -> M:
        _MODELS[name] = cls
        return cls

    return wrap


def registered_models() -> list[str]:
    return sorted(_MODELS)


def model_class(name: str) -> Callable[..., AutoregressiveTTS]:
    if name not in _MODELS:
        raise TTSError(f"unknown model '{name}' (choose one of {', '.join(registered_models())})")
    return _MODELS[name]


def build_model(config: ModelConfig, n_symbols: int, audio: AudioConfig | None = None) -> AutoregressiveTTS:
    """The model named ``config.name``, sized by its section of the config, for ``n_symbols``
    input symbols and the mel definition of ``audio`` (default: :class:`AudioConfig`), with the
    speaker table of ``config.speakers``."""
    model = model_class(config.name)(config.active, n_symbols, audio or AudioConfig(), config.go_frame)
    model.set_speakers(config.speakers)
    return model
