"""Tacotron2 (Shen et al. 2018) with pluggable attention and reduction factor r.

text ids ``(B, T_text)`` → embedding → conv blocks → BiLSTM → memory ``(B, T_text, D_enc)``;
the decoder runs one step per r frames: prenet(previous frame) → attention LSTM → attention →
decoder LSTM → r mel frames + a stop logit; a postnet adds a residual to the whole mel.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from tts.config import Tacotron2Config
from tts.errors import TTSError
from tts.models.attention import build_attention
from tts.models.decoding import StopTracker, finish_mel
from tts.models.layers import ConvBlock, Postnet, Prenet, sequence_mask, zoneout
from tts.models.outputs import InferenceOutput, ModelOutput


class Encoder(nn.Module):
    """ids ``(B, T_text)`` → memory ``(B, T_text, encoder_lstm_dim)``."""

    def __init__(self, n_symbols: int, c: Tacotron2Config):
        super().__init__()
        self.embedding = nn.Embedding(n_symbols, c.embedding_dim, padding_idx=0)
        dims = [c.embedding_dim] + [c.encoder_conv_channels] * c.encoder_conv_layers
        self.convs = nn.ModuleList(ConvBlock(a, b, c.encoder_kernel_size, c.encoder_dropout)
                                   for a, b in zip(dims[:-1], dims[1:]))
        self.lstm = nn.LSTM(dims[-1], c.encoder_lstm_dim // 2, batch_first=True, bidirectional=True)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        mask = sequence_mask(lengths, ids.shape[1])
        x = self.embedding(ids).transpose(1, 2)
        for conv in self.convs:
            x = conv(x, mask)
        packed = pack_padded_sequence(x.transpose(1, 2), lengths.cpu(), batch_first=True, enforce_sorted=False)
        memory, _ = pad_packed_sequence(self.lstm(packed)[0], batch_first=True, total_length=ids.shape[1])
        return memory


class Decoder(nn.Module):
    """Autoregressive decoder producing r frames per step."""

    def __init__(self, n_mels: int, c: Tacotron2Config):
        super().__init__()
        self.n_mels, self.r = n_mels, c.reduction_factor
        self.max_r = max(c.reduction_factor, c.max_reduction_factor)
        memory_dim = c.encoder_lstm_dim
        self.prenet = Prenet(n_mels, c.prenet_dims, c.prenet_dropout, c.prenet_dropout_at_inference)
        self.attention_rnn = nn.LSTMCell(c.prenet_dims[-1] + memory_dim, c.attention_rnn_dim)
        self.attention = build_attention(c.attention, c.attention_rnn_dim, memory_dim)
        self.decoder_rnn = nn.LSTMCell(c.attention_rnn_dim + memory_dim, c.decoder_rnn_dim)
        self.zoneout = c.zoneout
        self.rnn_dropout = nn.Dropout(c.rnn_dropout)
        self.mel_proj = nn.Linear(c.decoder_rnn_dim + memory_dim, n_mels * self.max_r)
        self.stop_proj = nn.Linear(c.decoder_rnn_dim + memory_dim, 1)

    def init_state(self, memory: torch.Tensor, mask: torch.Tensor) -> dict:
        batch = memory.shape[0]
        zeros = memory.new_zeros
        att_dim, dec_dim = self.attention_rnn.hidden_size, self.decoder_rnn.hidden_size
        return {"attention_rnn": (zeros(batch, att_dim), zeros(batch, att_dim)),
                "decoder_rnn": (zeros(batch, dec_dim), zeros(batch, dec_dim)),
                "context": zeros(batch, memory.shape[2]),
                "attention": self.attention.init_state(memory, mask)}

    def frames(self, hidden: torch.Tensor) -> torch.Tensor:
        """Decoder hidden ``(B, [T_steps,] D)`` → r mel frames per step ``(B, [T_steps,] r · n_mels)``: the
        first r of the projection's max_r frames (slicing the output keeps int8-quantized layers usable)."""
        return self.mel_proj(hidden)[..., : self.r * self.n_mels]

    def step(self, prenet_out: torch.Tensor, state: dict) -> tuple[torch.Tensor, torch.Tensor, dict]:
        """One decoder step: prenet output ``(B, P)`` → hidden ``(B, D_dec + D_enc)``, weights ``(B, T_text)``."""
        att_hc = self.attention_rnn(torch.cat([prenet_out, state["context"]], dim=-1), state["attention_rnn"])
        att_h, att_c = zoneout(att_hc, state["attention_rnn"], self.zoneout, self.training)
        att_h = self.rnn_dropout(att_h)
        context, weights, att_state = self.attention(att_h, state["attention"])
        dec_hc = self.decoder_rnn(torch.cat([att_h, context], dim=-1), state["decoder_rnn"])
        dec_h, dec_c = zoneout(dec_hc, state["decoder_rnn"], self.zoneout, self.training)
        dec_h = self.rnn_dropout(dec_h)
        new_state = {"attention_rnn": (att_h, att_c), "decoder_rnn": (dec_h, dec_c),
                     "context": context, "attention": att_state}
        return torch.cat([dec_h, context], dim=-1), weights, new_state

    def forward(self, memory: torch.Tensor, mask: torch.Tensor, mels: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Teacher forcing. mels ``(B, n_mels, T_mel)`` → mel ``(B, n_mels, T_mel)``,
        stop logits ``(B, T_steps)``, alignments ``(B, T_steps, T_text)``."""
        batch, _, t_mel = mels.shape
        if t_mel % self.r:
            raise TTSError(f"mel length {t_mel} is not a multiple of the reduction factor {self.r}")
        steps = t_mel // self.r
        # input of step t is the last frame of step t-1 (a zero "go" frame for t = 0)
        previous = mels[:, :, self.r - 1::self.r].transpose(1, 2)[:, :-1]
        inputs = torch.cat([mels.new_zeros(batch, 1, self.n_mels), previous], dim=1)
        prenet_out = self.prenet(inputs)                                  # (B, T_steps, P), all steps at once
        state = self.init_state(memory, mask)
        hidden, alignments = [], []
        for t in range(steps):
            h, weights, state = self.step(prenet_out[:, t], state)
            hidden.append(h)
            alignments.append(weights)
        hidden_seq = torch.stack(hidden, dim=1)                           # (B, T_steps, D)
        mel = self.frames(hidden_seq).reshape(batch, steps * self.r, self.n_mels).transpose(1, 2)
        return mel, self.stop_proj(hidden_seq).squeeze(-1), torch.stack(alignments, dim=1)


class Tacotron2(nn.Module):
    """``forward(batch) → ModelOutput`` (teacher forcing); ``inference(ids, lengths) → InferenceOutput``."""

    def __init__(self, config: Tacotron2Config, n_symbols: int, n_mels: int = 80):
        super().__init__()
        if config.reduction_factor < 1:
            raise TTSError(f"reduction_factor must be >= 1, got {config.reduction_factor}")
        self.config, self.n_symbols, self.n_mels = config, n_symbols, n_mels
        self.encoder = Encoder(n_symbols, config)
        self.decoder = Decoder(n_mels, config)
        self.postnet = Postnet(n_mels, config.postnet_channels, config.postnet_kernel_size,
                               config.postnet_layers, config.postnet_dropout)

    @property
    def reduction_factor(self) -> int:
        return self.decoder.r

    def set_reduction_factor(self, r: int) -> None:
        """Change r (gradual training); the frame projection is sized for ``max_reduction_factor``
        and step t uses its first r frames, so no parameter changes shape."""
        if not 1 <= r <= self.decoder.max_r:
            raise TTSError(f"reduction factor {r} outside 1..{self.decoder.max_r} "
                           f"(raise model.tacotron2.max_reduction_factor)")
        self.decoder.r = r

    def check_ids(self, ids: torch.Tensor, lengths: torch.Tensor) -> None:
        if ids.numel() == 0 or ids.shape[1] == 0 or bool((lengths <= 0).any()):
            raise TTSError("empty input: every item needs at least one token")
        if bool((ids < 0).any()) or bool((ids >= self.n_symbols).any()):
            raise TTSError(f"token ids outside the inventory [0, {self.n_symbols}): "
                           f"min {int(ids.min())}, max {int(ids.max())}")

    def encode(self, ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.check_ids(ids, lengths)
        return self.encoder(ids, lengths), sequence_mask(lengths, ids.shape[1])

    def forward(self, batch) -> ModelOutput:
        """Teacher forcing on a :class:`tts.data.Batch`."""
        memory, mask = self.encode(batch.ids, batch.text_lengths)
        mel_before, stop_logits, alignments = self.decoder(memory, mask, batch.mels)
        frame_mask = sequence_mask(batch.mel_lengths, mel_before.shape[2])
        mel_after = mel_before + self.postnet(mel_before, frame_mask)
        return ModelOutput(mel_before, mel_after, stop_logits, alignments)

    @torch.no_grad()
    def inference(self, ids: torch.Tensor, lengths: torch.Tensor | None = None, stop_threshold: float = 0.5,
                  max_decoder_steps: int = 2000, max_frames_per_token: float = 20.0,
                  attention_window: tuple[int, int] | None = None) -> InferenceOutput:
        """Batched free-running synthesis; each item stops on its own.

        ids ``(B, T_text)`` (or ``(T_text,)``), lengths ``(B,)``. An item ends when its stop
        probability exceeds ``stop_threshold`` or after ``min(max_decoder_steps,
        ceil(length · max_frames_per_token / r))`` steps (a warning names it). ``attention_window
        = (back, ahead)`` keeps attention within that many tokens around the previous peak.
        """
        if ids.dim() == 1:
            ids = ids.unsqueeze(0)
        if lengths is None:
            lengths = torch.full((ids.shape[0],), ids.shape[1], dtype=torch.long, device=ids.device)
        memory, mask = self.encode(ids, lengths)
        batch, r = ids.shape[0], self.decoder.r
        tracker = StopTracker(lengths, r, stop_threshold, max_decoder_steps, max_frames_per_token)
        state = self.decoder.init_state(memory, mask)
        frame = memory.new_zeros(batch, self.n_mels)
        mels, stops, alignments = [], [], []
        positions = torch.arange(ids.shape[1], device=ids.device)
        for t in range(tracker.max_steps):
            if attention_window is not None and t > 0:
                peak = alignments[-1].argmax(dim=1, keepdim=True)
                window = (positions >= peak - attention_window[0]) & (positions <= peak + attention_window[1])
                state["attention"]["mask"] = mask & window
            hidden, weights, state = self.decoder.step(self.decoder.prenet(frame), state)
            state["attention"]["mask"] = mask
            frames = self.decoder.frames(hidden).reshape(batch, r, self.n_mels)
            stop_prob = torch.sigmoid(self.decoder.stop_proj(hidden).squeeze(-1))
            mels.append(frames)
            stops.append(stop_prob)
            alignments.append(weights)
            frame = frames[:, -1]
            if tracker.update(t, stop_prob):
                break
        tracker.warn()
        mel = finish_mel(mels, self.postnet, tracker.frame_lengths)
        return InferenceOutput(mel, torch.stack(stops, dim=1), torch.stack(alignments, dim=1), tracker.frame_lengths,
                               tracker.hit_limit)

