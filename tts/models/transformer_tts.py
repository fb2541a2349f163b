"""Transformer-TTS (Li et al. 2019, "Neural Speech Synthesis with Transformer Network").

ids ``(B, T_text)`` → embedding → 3 conv blocks → linear → x + α·PE → N self-attention layers
→ memory ``(B, T_text, d)``. The decoder takes the previous frame of each step through a
2-layer prenet and a linear projection, adds α·PE (its own trainable α), and runs N layers of
causal self-attention, encoder-decoder attention and a feed-forward block; linear heads give
r mel frames and a stop logit per step; a postnet refines the mel. Inference caches keys and
values per layer, so each step costs one position, not the whole prefix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, cast

import torch
from torch import nn

from tts.config import AudioConfig, TransformerTTSConfig
from tts.errors import TTSError
from tts.models.decoding import AutoregressiveTTS, StepAttention
from tts.models.layers import ConvBlock, Postnet, Prenet
from tts.models.outputs import ModelOutput
from tts.models.registry import register_model


class ScaledPositionalEncoding(nn.Module):
    """``x + α · PE`` with a scalar α, trainable (Li et al. 2019) or fixed (``learned=False``, the
    original Transformer's); the sinusoid table grows on demand."""

    table: torch.Tensor
    alpha: torch.Tensor

    def __init__(self, d_model: int, alpha: float = 1.0, dropout: float = 0.1, initial_length: int = 1024,
                 learned: bool = True):
        super().__init__()
        self.d_model = d_model
        if learned:
            self.alpha = nn.Parameter(torch.tensor(float(alpha)))
        else:
            self.register_buffer("alpha", torch.tensor(float(alpha)))
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("table", self._table(initial_length), persistent=False)

    def _table(self, length: int) -> torch.Tensor:
        return self.sinusoid(torch.arange(length))

    def sinusoid(self, positions: torch.Tensor) -> torch.Tensor:
        """The encoding of ``positions`` ``(T,)``: ``(T, d)``, sines on even and cosines on odd features."""
        div = torch.exp(torch.arange(0, self.d_model, 2, dtype=torch.float32, device=positions.device)
                        * (-math.log(10000.0) / self.d_model))
        angles = positions.float()[:, None] * div
        return torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1).flatten(1)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """x ``(B, T, d)``; positions start at ``offset`` (for cached decoding)."""
        end = offset + x.shape[1]
        if end > self.table.shape[0]:
            self.table = self._table(max(end, 2 * self.table.shape[0])).to(x.device)
        return self.dropout(x + self.alpha * self.table[offset:end].to(x.dtype))

    def at(self, x: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
        """One decoding step: x ``(B, 1, d)`` at ``position`` ``()`` (a tensor, so that an exported
        step computes its own encoding)."""
        return self.dropout(x + self.alpha * self.sinusoid(position.reshape(1)).to(x.dtype))


class MultiHeadAttention(nn.Module):
    """Multi-head attention returning per-head weights; optional key/value cache for decoding."""

    def __init__(self, d_model: int, heads: int, dropout: float):
        super().__init__()
        if d_model % heads:
            raise TTSError(f"d_model {d_model} is not divisible by {heads} heads")
        self.heads, self.d_head = heads, d_model // heads
        self.q, self.k, self.v, self.out = (nn.Linear(d_model, d_model) for _ in range(4))
        self.dropout = nn.Dropout(dropout)

    def split(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, T, d) → (B, H, T, d_head)``."""
        return x.view(x.shape[0], x.shape[1], self.heads, self.d_head).transpose(1, 2)

    def forward(self, query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """query ``(B, T_q, d)``; keys/values already split ``(B, H, T_k, d_head)``; mask broadcastable
        to ``(B, H, T_q, T_k)``, True where attending is allowed. Returns ``(B, T_q, d)`` and weights
        ``(B, H, T_q, T_k)``."""
        q = self.split(self.q(query))
        scores = q @ keys.transpose(-1, -2) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        context = (self.dropout(weights) @ values).transpose(1, 2).reshape(query.shape[0], query.shape[1], -1)
        return self.out(context), weights

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.split(self.k(x)), self.split(self.v(x))


class FeedForward(nn.Sequential):
    def __init__(self, d_model: int, ffn_dim: int, dropout: float):
        super().__init__(nn.Linear(d_model, ffn_dim), nn.ReLU(), nn.Dropout(dropout), nn.Linear(ffn_dim, d_model))


class _Residual(nn.Module):
    """``x + f(x)`` with layer norm before (pre-norm) or after (post-norm)."""

    def __init__(self, d_model: int, dropout: float, norm_first: bool):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: torch.Tensor, fn) -> tuple[torch.Tensor, torch.Tensor | None]:
        out = fn(self.norm(x) if self.norm_first else x)
        out, weights = out if isinstance(out, tuple) else (out, None)
        y = x + self.dropout(out)
        return (y if self.norm_first else self.norm(y)), weights


class EncoderLayer(nn.Module):
    def __init__(self, c: TransformerTTSConfig):
        super().__init__()
        self.attention = MultiHeadAttention(c.d_model, c.heads, c.dropout)
        self.ffn = FeedForward(c.d_model, c.ffn_dim, c.dropout)
        self.res1, self.res2 = (_Residual(c.d_model, c.dropout, c.norm_first) for _ in range(2))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x, _ = self.res1(x, lambda h: self.attention(h, *self.attention.project(h), mask))
        x, _ = self.res2(x, self.ffn)
        return x


class DecoderLayer(nn.Module):
    def __init__(self, c: TransformerTTSConfig):
        super().__init__()
        self.self_attention = MultiHeadAttention(c.d_model, c.heads, c.dropout)
        self.cross_attention = MultiHeadAttention(c.d_model, c.heads, c.dropout)
        self.ffn = FeedForward(c.d_model, c.ffn_dim, c.dropout)
        self.res1, self.res2, self.res3 = (_Residual(c.d_model, c.dropout, c.norm_first) for _ in range(3))

    def forward(self, x: torch.Tensor, self_kv: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
                self_mask: torch.Tensor | None,
                memory_kv: tuple[torch.Tensor, torch.Tensor], memory_mask: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """x ``(B, T_q, d)`` → ``(B, T_q, d)`` and cross-attention weights ``(B, H, T_q, T_text)``."""
        x, _ = self.res1(x, lambda h: self.self_attention(h, *self_kv(h), self_mask))
        x, weights = self.res2(x, lambda h: self.cross_attention(h, *memory_kv, memory_mask))
        x, _ = self.res3(x, self.ffn)
        return x, weights


@dataclass
class DecoderState:
    """Free-running decoder state: the positions decoded so far ``()`` (long), the memory's
    cross-attention keys/values per layer ``(B, H, T_text, d_head)`` and mask ``(B, 1, 1, T_text)``,
    and either per-layer self-attention key/value caches ``(B, H, t, d_head)`` (empty before the first
    step) or (uncached) every step's input and window so far."""

    step: torch.Tensor
    memory_kv: list[tuple[torch.Tensor, torch.Tensor]]
    memory_mask: torch.Tensor
    caches: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)
    inputs: list[torch.Tensor] = field(default_factory=list)              # uncached: (B, 1, d) per step
    windows: list[torch.Tensor] = field(default_factory=list)             # uncached: (B, 1, 1, T_text) per step

    def tensors(self) -> dict[str, torch.Tensor]:
        """The cached decoder's state as named tensors (:class:`tts.models.decoding.TensorState`)."""
        if self.inputs:
            raise TTSError("an uncached Transformer-TTS decoder state is no set of tensors: decode with kv_cache on")
        named = {"step": self.step, "memory_mask": self.memory_mask}
        for i, ((memory_k, memory_v), (k, v)) in enumerate(zip(self.memory_kv, self.caches)):
            named |= {f"memory_kv.{i}.k": memory_k, f"memory_kv.{i}.v": memory_v, f"cache.{i}.k": k, f"cache.{i}.v": v}
        return named


@register_model("transformer_tts")
class TransformerTTS(AutoregressiveTTS):
    """``forward(batch) → ModelOutput``; ``inference(ids, lengths) → InferenceOutput``.

    ``ModelOutput.alignments`` and ``InferenceOutput.alignments`` are the mean of the
    ``guided_heads`` (what the guided attention loss sees and the attention window follows);
    ``attention_heads`` holds every layer and head ``(B, L, H, T_steps, T_text)``. With
    ``kv_cache = False`` inference recomputes the whole prefix every step (it exists to test the cache).
    """

    def __init__(self, config: TransformerTTSConfig, n_symbols: int, audio: AudioConfig | None = None,
                 go_frame: str = "zeros"):
        super().__init__(n_symbols, audio, config.reduction_factor, config.max_reduction_factor, go_frame)
        c = config
        self.config = c
        self.kv_cache = True
        self.embedding = nn.Embedding(n_symbols, c.embedding_dim, padding_idx=0)
        self.encoder_prenet = nn.ModuleList(
            ConvBlock(c.embedding_dim, c.embedding_dim, c.encoder_prenet_kernel_size, c.encoder_prenet_dropout)
            for _ in range(c.encoder_prenet_layers))
        self.encoder_projection = nn.Linear(c.embedding_dim, c.d_model)
        self.encoder_position = ScaledPositionalEncoding(c.d_model, c.positional_alpha, c.dropout,
                                                         learned=c.positional_alpha_learned)
        self.encoder_layers = nn.ModuleList(EncoderLayer(c) for _ in range(c.encoder_layers))
        self.encoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.decoder_prenet = Prenet(self.n_mels, c.decoder_prenet_dims, c.decoder_prenet_dropout)
        self.decoder_projection = nn.Linear(c.decoder_prenet_dims[-1], c.d_model)
        self.decoder_position = ScaledPositionalEncoding(c.d_model, c.positional_alpha, c.dropout,
                                                         learned=c.positional_alpha_learned)
        self.decoder_layers = nn.ModuleList(DecoderLayer(c) for _ in range(c.decoder_layers))
        self.decoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.mel_linear = nn.Linear(c.d_model, self.n_mels * self.max_r)
        self.stop_linear = nn.Linear(c.d_model, 1)
        self.postnet = Postnet(self.n_mels, c.postnet)
        layers = c.decoder_layers
        self.guided = [((layer + layers) % layers, h) for layer, h in c.guided_heads]
        if any(not 0 <= h < c.heads for _, h in self.guided):
            raise TTSError(f"guided_heads {c.guided_heads} name a head outside 0..{c.heads - 1}")

    @property
    def memory_dim(self) -> int:
        return self.config.d_model

    @property
    def attention_name(self) -> str:
        return f"{self.config.heads}-head encoder-decoder"

    def diagnostics(self) -> dict[str, float]:
        """The positional encodings' trainable scales."""
        return {f"alpha/{name}": float(position.alpha.detach())
                for name, position in (("encoder_position", self.encoder_position),
                                       ("decoder_position", self.decoder_position))}

    @property
    def decoder_stack(self) -> list[DecoderLayer]:
        """The decoder layers, typed."""
        return [cast(DecoderLayer, layer) for layer in self.decoder_layers]

    @property
    def mel_head(self) -> nn.Module:
        return self.mel_linear

    @property
    def stop_head(self) -> nn.Module:
        return self.stop_linear

    def guided_mean(self, heads: torch.Tensor) -> torch.Tensor:
        """Mean of the guided heads: ``(B, L, H, ...) → (B, ...)``."""
        return torch.stack([heads[:, layer, h] for layer, h in self.guided], dim=1).mean(dim=1)

    # ------------------------------------------------------------------ encoder
    def encode_tokens(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """ids ``(B, T_text)`` → memory ``(B, T_text, d)``."""
        x = self.embedding(ids).transpose(1, 2)
        for conv in self.encoder_prenet:
            x = conv(x, mask)
        x = self.encoder_position(self.encoder_projection(x.transpose(1, 2)))
        attend = mask[:, None, None, :]
        for layer in self.encoder_layers:
            x = layer(x, attend)
        return self.encoder_norm(x) * mask.unsqueeze(-1)

    def memory_kv(self, memory: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Cross-attention keys/values of every decoder layer, computed once per utterance."""
        return [layer.cross_attention.project(memory) for layer in self.decoder_stack]

    # ------------------------------------------------------------------ teacher forcing
    def forward(self, batch) -> ModelOutput:
        """Teacher forcing: the batch's ids ``(B, T_text)`` and mels ``(B, n_mels, T_mel)`` → mels before
        and after the postnet ``(B, n_mels, T_mel)``, stop logits ``(B, T_steps)``, the guided heads'
        mean ``(B, T_steps, T_text)`` and every encoder-decoder head ``(B, L, H, T_steps, T_text)``
        (``T_steps = T_mel / reduction_factor``)."""
        memory, mask = self.encode(batch.ids, batch.text_lengths, batch.speakers, batch.speaker_vectors)
        inputs = self.decoder_inputs(batch.mels)
        steps = inputs.shape[1]
        x = self.decoder_position(self.decoder_projection(self.decoder_prenet(inputs)))
        causal = torch.ones(steps, steps, dtype=torch.bool, device=x.device).tril()[None, None]
        memory_mask = mask[:, None, None, :]
        heads = []
        for layer, kv in zip(self.decoder_stack, self.memory_kv(memory)):
            x, weights = layer(x, layer.self_attention.project, causal, kv, memory_mask)
            heads.append(weights)
        hidden = self.decoder_norm(x)
        mel_before = self.unfold_frames(hidden)
        attention_heads = torch.stack(heads, dim=1)                    # (B, L, H, T_steps, T_text)
        return ModelOutput(mel_before, self.refine(mel_before, batch.mel_lengths),
                           self.stop_linear(hidden).squeeze(-1), self.guided_mean(attention_heads), attention_heads)

    # ------------------------------------------------------------------ free running
    def init_decoder(self, memory: torch.Tensor, mask: torch.Tensor) -> DecoderState:
        heads, d_head = self.config.heads, self.config.d_model // self.config.heads
        empty = memory.new_zeros(memory.shape[0], heads, 0, d_head)
        return DecoderState(torch.zeros((), dtype=torch.long, device=memory.device), self.memory_kv(memory),
                            mask[:, None, None, :], [(empty, empty)] * len(self.decoder_layers))

    def state_from_tensors(self, tensors: dict[str, torch.Tensor]) -> DecoderState:
        layers = range(len(self.decoder_layers))
        return DecoderState(tensors["step"], [(tensors[f"memory_kv.{i}.k"], tensors[f"memory_kv.{i}.v"]) for i in layers],
                            tensors["memory_mask"], [(tensors[f"cache.{i}.k"], tensors[f"cache.{i}.v"]) for i in layers])

    def decoder_step(self, frame: torch.Tensor, state: DecoderState,
                     window: torch.Tensor | None) -> tuple[torch.Tensor, StepAttention, DecoderState]:
        """One position: frame ``(B, n_mels)`` → hidden ``(B, d)``; ``window`` confines every
        encoder-decoder head of this step."""
        t = state.step
        cross_mask = state.memory_mask if window is None else (state.memory_mask & window[:, None, None, :])
        x = self.decoder_projection(self.decoder_prenet(frame[:, None]))       # (B, 1, d)
        if self.kv_cache:
            x = self.decoder_position.at(x, t)
        else:
            state.inputs.append(x)
            state.windows.append(cross_mask)
            x = self.decoder_position(torch.cat(state.inputs, dim=1))
            cross_mask = torch.cat(state.windows, dim=2)                       # (B, 1, t + 1, T_text)
        heads = []
        for i, (layer, kv) in enumerate(zip(self.decoder_stack, state.memory_kv)):
            if self.kv_cache:
                def self_kv(h: torch.Tensor, i: int = i, layer: DecoderLayer = layer) -> tuple[torch.Tensor, torch.Tensor]:
                    k, v = layer.self_attention.project(h)
                    cached_k, cached_v = state.caches[i]
                    state.caches[i] = (torch.cat([cached_k, k], dim=2), torch.cat([cached_v, v], dim=2))
                    return state.caches[i]
                x, weights = layer(x, self_kv, None, kv, cross_mask)
            else:
                steps = len(state.inputs)
                causal = torch.ones(steps, steps, dtype=torch.bool, device=x.device).tril()[None, None]
                x, weights = layer(x, layer.self_attention.project, causal, kv, cross_mask)
            heads.append(weights[:, :, -1])                                    # (B, H, T_text)
        state.step = state.step + 1
        step_heads = torch.stack(heads, dim=1)                                 # (B, L, H, T_text)
        return self.decoder_norm(x[:, -1]), StepAttention(self.guided_mean(step_heads), step_heads), state
