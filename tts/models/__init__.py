"""Acoustic models behind one interface: ``forward(batch) -> ModelOutput``,
``inference(ids, lengths, settings) -> InferenceOutput`` (the shared decoding driver)."""

from tts.models.decoding import AutoregressiveTTS, StepAttention, decode
from tts.models.outputs import InferenceOutput, ModelOutput
from tts.models.registry import build_model, model_class, register_model, registered_models
from tts.models.tacotron2 import Tacotron2
from tts.models.transformer_tts import TransformerTTS

__all__ = ["AutoregressiveTTS", "InferenceOutput", "ModelOutput", "StepAttention", "Tacotron2", "TransformerTTS",
           "build_model", "decode", "model_class", "register_model", "registered_models"]
