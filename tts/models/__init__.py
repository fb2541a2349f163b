"""Acoustic models behind one interface: ``forward(batch) -> ModelOutput``,
``inference(ids, lengths, **limits) -> InferenceOutput``."""

from torch import nn

from tts.config import ModelConfig
from tts.errors import TTSError
from tts.models.outputs import InferenceOutput, ModelOutput
from tts.models.tacotron2 import Tacotron2
from tts.models.transformer_tts import TransformerTTS

MODELS = ("tacotron2", "transformer_tts")


def build_model(config: ModelConfig, n_symbols: int, n_mels: int) -> nn.Module:
    """The model named ``config.name`` with its sizes from the config."""
    if config.name == "tacotron2":
        return Tacotron2(config.tacotron2, n_symbols, n_mels)
    if config.name == "transformer_tts":
        return TransformerTTS(config.transformer_tts, n_symbols, n_mels)
    raise TTSError(f"unknown model '{config.name}' (choose one of {', '.join(MODELS)})")


__all__ = ["InferenceOutput", "MODELS", "ModelOutput", "Tacotron2", "TransformerTTS", "build_model"]
