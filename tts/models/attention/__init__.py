"""Attention mechanisms behind one interface (see :mod:`tts.models.attention.base`)."""

from tts.models.attention.base import Attention, AttentionState, available, build_attention, masked_softmax
from tts.models.attention.content import ContentAttention, LuongConcatAttention, LuongDotAttention, LuongGeneralAttention
from tts.models.attention.discrete import HardAttention, LuongLocalMAttention, LuongLocalPAttention
from tts.models.attention.location import HybridAttention, LocationAttention, LocationSensitiveAttention
from tts.models.attention.monotonic import (
                                          DynamicConvolutionAttention,
                                          ForwardAttention,
                                          GMMAttention,
                                          StepwiseMonotonicAttention,
)

__all__ = [
    "Attention", "ContentAttention", "DynamicConvolutionAttention", "ForwardAttention", "GMMAttention",
    "HardAttention", "HybridAttention", "LocationAttention", "LocationSensitiveAttention", "LuongConcatAttention",
    "LuongDotAttention", "LuongGeneralAttention", "LuongLocalMAttention", "LuongLocalPAttention", "AttentionState",
    "StepwiseMonotonicAttention", "available", "build_attention", "masked_softmax",
]
