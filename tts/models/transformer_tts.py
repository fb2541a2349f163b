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

import torch
from torch import nn

from tts.config import TransformerTTSConfig
from tts.errors import TTSError
from tts.models.decoding import StopTracker, finish_mel
from tts.models.layers import ConvBlock, Postnet, Prenet, sequence_mask
from tts.models.outputs import InferenceOutput, ModelOutput
Cache = dict[str, torch.Tensor]


class ScaledPositionalEncoding(nn.Module):
    """``x + α · PE`` with a trainable scalar α; the sinusoid table grows on demand."""

    def __init__(self, d_model: int, alpha: float = 1.0, dropout: float = 0.1, initial_length: int = 1024):
        super().__init__()
        self.d_model = d_model
        self.alpha = nn.Parameter(torch.tensor(float(alpha)))
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("table", self._table(initial_length), persistent=False)

    def _table(self, length: int) -> torch.Tensor:
        position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
        div = torch.exp(torch.arange(0, self.d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / self.d_model))
        table = torch.zeros(length, self.d_model)
        table[:, 0::2] = torch.sin(position * div)
        table[:, 1::2] = torch.cos(position * div)
        return table

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """x ``(B, T, d)``; positions start at ``offset`` (for cached decoding)."""
        end = offset + x.shape[1]
        if end > self.table.shape[0]:
            self.table = self._table(max(end, 2 * self.table.shape[0])).to(x.device)
        return self.dropout(x + self.alpha * self.table[offset:end].to(x.dtype))


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

    def forward(self, x: torch.Tensor, self_kv: tuple[torch.Tensor, torch.Tensor], self_mask: torch.Tensor | None,
                memory_kv: tuple[torch.Tensor, torch.Tensor], memory_mask: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """x ``(B, T_q, d)`` → ``(B, T_q, d)`` and cross-attention weights ``(B, H, T_q, T_text)``."""
        x, _ = self.res1(x, lambda h: self.self_attention(h, *self_kv(h), self_mask))
        x, weights = self.res2(x, lambda h: self.cross_attention(h, *memory_kv, memory_mask))
        x, _ = self.res3(x, self.ffn)
        return x, weights


class TransformerTTS(nn.Module):
    """``forward(batch) → ModelOutput``; ``inference(ids, lengths) → InferenceOutput``.

    ``ModelOutput.alignments`` is the mean of the ``guided_heads`` (what the guided attention loss
    sees); ``attention_heads`` holds every layer and head ``(B, L, H, T_steps, T_text)``.
    """

    def __init__(self, config: TransformerTTSConfig, n_symbols: int, n_mels: int = 80):
        super().__init__()
        c = config
        self.config, self.n_symbols, self.n_mels = c, n_symbols, n_mels
        self.r, self.max_r = c.reduction_factor, max(c.reduction_factor, c.max_reduction_factor)
        self.embedding = nn.Embedding(n_symbols, c.embedding_dim, padding_idx=0)
        self.encoder_prenet = nn.ModuleList(
            ConvBlock(c.embedding_dim, c.embedding_dim, c.encoder_prenet_kernel_size, c.encoder_prenet_dropout)
            for _ in range(c.encoder_prenet_layers))
        self.encoder_projection = nn.Linear(c.embedding_dim, c.d_model)
        self.encoder_position = ScaledPositionalEncoding(c.d_model, c.positional_alpha, c.dropout)
        self.encoder_layers = nn.ModuleList(EncoderLayer(c) for _ in range(c.encoder_layers))
        self.encoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.decoder_prenet = Prenet(n_mels, c.decoder_prenet_dims, c.decoder_prenet_dropout)
        self.decoder_projection = nn.Linear(c.decoder_prenet_dims[-1], c.d_model)
        self.decoder_position = ScaledPositionalEncoding(c.d_model, c.positional_alpha, c.dropout)
        self.decoder_layers = nn.ModuleList(DecoderLayer(c) for _ in range(c.decoder_layers))
        self.decoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.mel_linear = nn.Linear(c.d_model, n_mels * self.max_r)
        self.stop_linear = nn.Linear(c.d_model, 1)
        self.postnet = Postnet(n_mels, c.postnet_channels, c.postnet_kernel_size, c.postnet_layers, c.postnet_dropout)
        layers = c.decoder_layers
        self.guided = [((l + layers) % layers, h) for l, h in c.guided_heads]
        if any(not 0 <= h < c.heads for _, h in self.guided):
            raise TTSError(f"guided_heads {c.guided_heads} name a head outside 0..{c.heads - 1}")

    @property
    def reduction_factor(self) -> int:
        return self.r

    def set_reduction_factor(self, r: int) -> None:
        if not 1 <= r <= self.max_r:
            raise TTSError(f"reduction factor {r} outside 1..{self.max_r} (raise max_reduction_factor)")
        self.r = r

    def frames(self, hidden: torch.Tensor) -> torch.Tensor:
        """Decoder output ``(B, [T_steps,] d)`` → the first r of max_r frames ``(B, [T_steps,] r · n_mels)``."""
        return self.mel_linear(hidden)[..., : self.r * self.n_mels]

    # ------------------------------------------------------------------ encoder
    def encode(self, ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """ids ``(B, T_text)`` → memory ``(B, T_text, d)``, mask ``(B, T_text)``."""
        if ids.numel() == 0 or ids.shape[1] == 0 or bool((lengths <= 0).any()):
            raise TTSError("empty input: every item needs at least one token")
        if bool((ids < 0).any()) or bool((ids >= self.n_symbols).any()):
            raise TTSError(f"token ids outside the inventory [0, {self.n_symbols}): "
                           f"min {int(ids.min())}, max {int(ids.max())}")
        mask = sequence_mask(lengths, ids.shape[1])
        x = self.embedding(ids).transpose(1, 2)
        for conv in self.encoder_prenet:
            x = conv(x, mask)
        x = self.encoder_position(self.encoder_projection(x.transpose(1, 2)))
        attend = mask[:, None, None, :]
        for layer in self.encoder_layers:
            x = layer(x, attend)
        return self.encoder_norm(x) * mask.unsqueeze(-1), mask

    def memory_kv(self, memory: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Cross-attention keys/values of every decoder layer, computed once per utterance."""
        return [layer.cross_attention.project(memory) for layer in self.decoder_layers]

    # ------------------------------------------------------------------ teacher forcing
    def forward(self, batch) -> ModelOutput:
        memory, mask = self.encode(batch.ids, batch.text_lengths)
        batch_size, _, t_mel = batch.mels.shape
        if t_mel % self.r:
            raise TTSError(f"mel length {t_mel} is not a multiple of the reduction factor {self.r}")
        steps = t_mel // self.r
        previous = batch.mels[:, :, self.r - 1::self.r].transpose(1, 2)[:, :-1]
        inputs = torch.cat([batch.mels.new_zeros(batch_size, 1, self.n_mels), previous], dim=1)
        x = self.decoder_position(self.decoder_projection(self.decoder_prenet(inputs)))
        causal = torch.ones(steps, steps, dtype=torch.bool, device=x.device).tril()[None, None]
        memory_mask = mask[:, None, None, :]
        heads = []
        for layer, kv in zip(self.decoder_layers, self.memory_kv(memory)):
            x, weights = layer(x, layer.self_attention.project, causal, kv, memory_mask)
            heads.append(weights)
        hidden = self.decoder_norm(x)
        mel_before = self.frames(hidden).reshape(batch_size, steps * self.r, self.n_mels).transpose(1, 2)
        frame_mask = sequence_mask(batch.mel_lengths, t_mel)
        mel_after = mel_before + self.postnet(mel_before, frame_mask)
        attention_heads = torch.stack(heads, dim=1)                    # (B, L, H, T_steps, T_text)
        guided = torch.stack([attention_heads[:, l, h] for l, h in self.guided], dim=1).mean(dim=1)
        return ModelOutput(mel_before, mel_after, self.stop_linear(hidden).squeeze(-1), guided, attention_heads)

    # ------------------------------------------------------------------ inference
    @torch.no_grad()
    def inference(self, ids: torch.Tensor, lengths: torch.Tensor | None = None, stop_threshold: float = 0.5,
                  max_decoder_steps: int = 2000, max_frames_per_token: float = 20.0,
                  attention_window: tuple[int, int] | None = None, use_cache: bool = True) -> InferenceOutput:
        """Batched autoregressive synthesis with per-layer key/value caches (``use_cache=False``
        recomputes the whole prefix every step; it exists to test the cache). Each item stops on its
        own; ``alignments`` is each item's most diagonal encoder-decoder head. ``attention_window =
        (back, ahead)`` keeps every encoder-decoder head within that many tokens around the previous
        step's peak of the guided heads (their mean), the heads trained to be the alignment."""
        if ids.dim() == 1:
            ids = ids.unsqueeze(0)
        if lengths is None:
            lengths = torch.full((ids.shape[0],), ids.shape[1], dtype=torch.long, device=ids.device)
        memory, mask = self.encode(ids, lengths)
        batch, r = ids.shape[0], self.r
        tracker = StopTracker(lengths, r, stop_threshold, max_decoder_steps, max_frames_per_token)
        memory_kv = self.memory_kv(memory)
        memory_mask = mask[:, None, None, :]
        caches: list[tuple[torch.Tensor, torch.Tensor] | None] = [None] * len(self.decoder_layers)
        frame = memory.new_zeros(batch, 1, self.n_mels)
        inputs: list[torch.Tensor] = []
        step_masks: list[torch.Tensor] = []                               # uncached: every position's window
        mels, stops, step_heads = [], [], []
        positions = torch.arange(ids.shape[1], device=ids.device)
        step_mask = memory_mask                                           # (B, 1, 1, T_text)
        for t in range(tracker.max_steps):
            if attention_window is not None and t > 0:
                peak = torch.stack([step_heads[-1][:, l, h] for l, h in self.guided]).mean(0).argmax(1, keepdim=True)
                window = (positions >= peak - attention_window[0]) & (positions <= peak + attention_window[1])
                step_mask = (mask & window)[:, None, None, :]
            x = self.decoder_projection(self.decoder_prenet(frame))
            if use_cache:
                x = self.decoder_position(x, offset=t)
                cross_mask = step_mask
            else:
                inputs.append(x)
                step_masks.append(step_mask)
                x = self.decoder_position(torch.cat(inputs, dim=1))
                cross_mask = torch.cat(step_masks, dim=2)                 # (B, 1, t + 1, T_text)
            heads = []
            for i, (layer, kv) in enumerate(zip(self.decoder_layers, memory_kv)):
                if use_cache:
                    def self_kv(h, i=i, layer=layer):
                        k, v = layer.self_attention.project(h)
                        if caches[i] is not None:
                            k, v = torch.cat([caches[i][0], k], dim=2), torch.cat([caches[i][1], v], dim=2)
                        caches[i] = (k, v)
                        return k, v
                    x, weights = layer(x, self_kv, None, kv, cross_mask)
                else:
                    causal = torch.ones(t + 1, t + 1, dtype=torch.bool, device=x.device).tril()[None, None]
                    x, weights = layer(x, layer.self_attention.project, causal, kv, cross_mask)
                heads.append(weights[:, :, -1])                           # (B, H, T_text)
            hidden = self.decoder_norm(x[:, -1])
            frames = self.frames(hidden).reshape(batch, r, self.n_mels)
            stop_prob = torch.sigmoid(self.stop_linear(hidden).squeeze(-1))
            mels.append(frames)
            stops.append(stop_prob)
            step_heads.append(torch.stack(heads, dim=1))                  # (B, L, H, T_text)
            frame = frames[:, -1:]
            if tracker.update(t, stop_prob):
                break
        tracker.warn()
        mel = finish_mel(mels, self.postnet, tracker.frame_lengths)
        attention_heads = torch.stack(step_heads, dim=3)                  # (B, L, H, T_steps, T_text)
        alignments = most_diagonal_head(attention_heads, tracker.steps, lengths)
        return InferenceOutput(mel, torch.stack(stops, dim=1), alignments, tracker.frame_lengths, tracker.hit_limit,
                               attention_heads)


def most_diagonal_head(heads: torch.Tensor, step_lengths: torch.Tensor, text_lengths: torch.Tensor) -> torch.Tensor:
    """Per item, the (layer, head) whose attention is most diagonal: highest focus rate times the
    correlation between step and peak position. heads ``(B, L, H, T_steps, T_text)`` → ``(B, T_steps, T_text)``."""
    from tts.analysis.metrics import attention_report

    chosen = []
    for b in range(heads.shape[0]):
        steps, n = int(step_lengths[b]), int(text_lengths[b])
        flat = heads[b].flatten(0, 1)                                     # (L*H, T_steps, T_text)
        scores = []
        for h in range(flat.shape[0]):
            report = attention_report(flat[h, :steps, :n].float().cpu().numpy())
            scores.append(report.focus_rate * max(report.diagonal_correlation, 0.0))
        chosen.append(flat[int(torch.tensor(scores).argmax())])
    return torch.stack(chosen)
