"""What acoustic models return: one structure for teacher forcing, one for inference."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class ModelOutput:
    """Teacher-forced output.

    mel_before / mel_after ``(B, n_mels, T_mel)``; stop_logits ``(B, T_steps)`` with
    ``T_steps = T_mel / r``; alignments ``(B, T_steps, T_text)``; attention_heads, for multi-head
    models, every layer and head ``(B, L, H, T_steps, T_text)``.
    """

    mel_before: torch.Tensor
    mel_after: torch.Tensor
    stop_logits: torch.Tensor
    alignments: torch.Tensor
    attention_heads: torch.Tensor | None = None


@dataclass
class InferenceOutput:
    """Free-running output; everything past an item's ``lengths`` is padding.

    mel ``(B, n_mels, T_mel)``; stop_probs ``(B, T_steps)``; alignments ``(B, T_steps, T_text)``;
    lengths ``(B,)`` in frames; hit_limit ``(B,)`` True where the step limit ended the item;
    attention_heads as in :class:`ModelOutput`.
    """

    mel: torch.Tensor
    stop_probs: torch.Tensor
    alignments: torch.Tensor
    lengths: torch.Tensor
    hit_limit: torch.Tensor
    attention_heads: torch.Tensor | None = None
