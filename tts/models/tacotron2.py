"""Tacotron2 (Shen et al. 2018) with pluggable attention and reduction factor r.

text ids ``(B, T_text)`` → embedding → conv blocks → BiLSTM → memory ``(B, T_text, D_enc)``;
the decoder runs one step per r frames: prenet(previous frame) → attention LSTM → attention →
decoder LSTM → r mel frames + a stop logit; a postnet adds a residual to the whole mel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from tts.config import AudioConfig, Tacotron2Config
from tts.models.attention import AttentionState, build_attention
from tts.models.decoding import AutoregressiveTTS, StepAttention
from tts.models.layers import ConvBlock, Gain, Postnet, Prenet, xavier_uniform, zoneout
from tts.models.outputs import ModelOutput
from tts.models.recurrent import LSTMSteps, lstm_bias, lstm_update, step_product
from tts.models.registry import register_model


class Encoder(nn.Module):
    """ids ``(B, T_text)`` → memory ``(B, T_text, encoder_lstm_dim)``."""

    def __init__(self, n_symbols: int, c: Tacotron2Config):
        super().__init__()
        self.mask_padding = c.mask_padding
        self.embedding = nn.Embedding(n_symbols, c.embedding_dim, padding_idx=0 if c.mask_padding else None)
        dims = [c.embedding_dim] + [c.encoder_conv_channels] * c.encoder_conv_layers
        self.convs = nn.ModuleList(ConvBlock(a, b, c.encoder_kernel_size, c.encoder_dropout)
                                   for a, b in zip(dims[:-1], dims[1:]))
        self.lstm = nn.LSTM(dims[-1], c.encoder_lstm_dim // 2, batch_first=True, bidirectional=True)

    def xavier_initialization(self) -> None:
        """NVIDIA/tacotron2's: Xavier-uniform convolutions (ReLU gain) and embeddings uniform in
        ±√3·√(2 / (n_symbols + dim)); the LSTM and BatchNorm keep PyTorch's."""
        xavier_uniform([(conv.conv, "relu") for conv in self.convs])
        with torch.no_grad():
            embedding = self.embedding.weight
            bound = math.sqrt(3.0) * math.sqrt(2.0 / (embedding.shape[0] + embedding.shape[1]))
            embedding.uniform_(-bound, bound)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """ids ``(B, T_text)``, mask ``(B, T_text)`` → memory ``(B, T_text, encoder_lstm_dim)``."""
        lengths = mask.sum(dim=1)
        x = self.embedding(ids).transpose(1, 2)
        for conv in self.convs:
            x = conv(x, mask if self.mask_padding else None)
        packed = pack_padded_sequence(x.transpose(1, 2), lengths.cpu(), batch_first=True, enforce_sorted=False)
        memory, _ = pad_packed_sequence(self.lstm(packed)[0], batch_first=True, total_length=ids.shape[1])
        return memory


LSTMState = tuple[torch.Tensor, torch.Tensor]


@dataclass
class DecoderState:
    """The decoder between steps: each LSTM's ``(h, c)`` (``(B, H_att)``, ``(B, H_dec)``), the last
    context ``(B, D_enc)`` and the attention's state."""

    attention_rnn: LSTMState
    decoder_rnn: LSTMState
    context: torch.Tensor
    attention: AttentionState

    def tensors(self) -> dict[str, torch.Tensor]:
        """The state as named tensors (:class:`tts.models.decoding.TensorState`)."""
        (att_h, att_c), (dec_h, dec_c) = self.attention_rnn, self.decoder_rnn
        own = {"attention_rnn.h": att_h, "attention_rnn.c": att_c, "decoder_rnn.h": dec_h, "decoder_rnn.c": dec_c,
               "context": self.context}
        return own | {f"attention.{name}": value for name, value in self.attention.tensors().items()}


class Decoder(nn.Module):
    """Autoregressive decoder producing r frames per step (the frame and stop heads are its last layers)."""

    def __init__(self, n_mels: int, c: Tacotron2Config, max_r: int):
        super().__init__()
        memory_dim = c.encoder_lstm_dim
        self.prenet = Prenet(n_mels, c.prenet_dims, c.prenet_dropout, c.prenet_bias)
        self.attention_rnn = nn.LSTMCell(c.prenet_dims[-1] + memory_dim, c.attention_rnn_dim)
        self.attention = build_attention(c.attention, c.attention_rnn_dim, memory_dim)
        self.decoder_rnn = nn.LSTMCell(c.attention_rnn_dim + memory_dim, c.decoder_rnn_dim)
        self.zoneout = c.zoneout
        self.rnn_dropout = nn.Dropout(c.rnn_dropout)
        self.mel_proj = nn.Linear(c.decoder_rnn_dim + memory_dim, n_mels * max_r)
        self.stop_proj = nn.Linear(c.decoder_rnn_dim + memory_dim, 1)
        self.lstm_steps = LSTMSteps()

    def xavier_initialization(self) -> None:
        """NVIDIA/tacotron2's: Xavier-uniform prenet and frame projection (gain 1), stop projection
        (sigmoid gain) and the attention's own layers; the LSTMs keep PyTorch's."""
        roles: list[tuple[nn.Module | torch.Tensor, Gain]] = [(layer, "linear") for layer in self.prenet.layers]
        xavier_uniform(roles + [(self.mel_proj, "linear"), (self.stop_proj, "sigmoid")])
        self.attention.xavier_initialization()

    def init_state(self, memory: torch.Tensor, mask: torch.Tensor) -> DecoderState:
        """The state before the first step."""
        batch = memory.shape[0]
        zeros = memory.new_zeros
        att_dim, dec_dim = self.attention_rnn.hidden_size, self.decoder_rnn.hidden_size
        return DecoderState((zeros(batch, att_dim), zeros(batch, att_dim)), (zeros(batch, dec_dim), zeros(batch, dec_dim)),
                            zeros(batch, memory.shape[2]), self.attention.init_state(memory, mask))

    def step(self, prenet_out: torch.Tensor, state: DecoderState,
             window: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, DecoderState]:
        """One decoder step: prenet output ``(B, P)`` → hidden ``(B, D_dec + D_enc)``, weights ``(B, T_text)``.
        The LSTM cells run as :class:`~tts.models.recurrent.LSTMSteps` makes them for this batch."""
        batch = prenet_out.shape[0]
        attention_rnn, decoder_rnn = self.lstm_steps(self.attention_rnn, batch), self.lstm_steps(self.decoder_rnn, batch)
        att_hc = attention_rnn(torch.cat([prenet_out, state.context], dim=-1), state.attention_rnn)
        att_h, att_c = zoneout(att_hc, state.attention_rnn, self.zoneout, self.training)
        att_h = self.rnn_dropout(att_h)
        context, weights, att_state = self.attention(att_h, state.attention, window)
        dec_hc = decoder_rnn(torch.cat([att_h, context], dim=-1), state.decoder_rnn)
        dec_h, dec_c = zoneout(dec_hc, state.decoder_rnn, self.zoneout, self.training)
        dec_h = self.rnn_dropout(dec_h)
        new_state = DecoderState((att_h, att_c), (dec_h, dec_c), context, att_state)
        return torch.cat([dec_h, context], dim=-1), weights, new_state

    def forward(self, memory: torch.Tensor, mask: torch.Tensor,
                inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher forcing: the same function as :meth:`step` at every step, ordered for speed.
        inputs ``(B, T_steps, n_mels)`` → hidden ``(B, T_steps, D_dec + D_enc)``, alignments
        ``(B, T_steps, T_text)``.

        With the input frames known, the attention chain (attention LSTM + attention) never reads
        the decoder LSTM, so it runs first over all steps, then the decoder LSTM. Every input
        projection that does not depend on the recurrence (the prenet's share of the attention
        LSTM, all of the decoder LSTM's input) is one matrix product over all steps, and each
        loop reads only its recurrent weights, as :func:`~tts.models.recurrent.step_product` with
        one weight gradient per loop.
        """
        batch, steps = inputs.shape[:2]
        prenet_out = self.prenet(inputs)                                    # (B, T_steps, P)
        state = self.init_state(memory, mask)
        rnn = self.attention_rnn
        prenet_weight, context_weight = rnn.weight_ih.split([prenet_out.shape[2], memory.shape[2]], dim=1)
        prenet_gates = F.linear(prenet_out, prenet_weight, lstm_bias(rnn)).unbind(1)  # T_steps × (B, 4 H_att)
        from_context, from_hidden = step_product(context_weight, batch), step_product(rnn.weight_hh, batch)
        (h, c), context, attention_state = state.attention_rnn, state.context, state.attention
        queries, contexts, alignments = [], [], []
        for t in range(steps):
            hc = lstm_update(prenet_gates[t] + from_context(context) + from_hidden(h), c)
            h, c = zoneout(hc, (h, c), self.zoneout, self.training)
            h = self.rnn_dropout(h)
            context, weights, attention_state = self.attention(h, attention_state)
            queries.append(h)
            contexts.append(context)
            alignments.append(weights)
        contexts_all = torch.stack(contexts, dim=1)                          # (B, T_steps, D_enc)
        rnn = self.decoder_rnn
        input_gates = F.linear(torch.cat([torch.stack(queries, dim=1), contexts_all], dim=-1),
                               rnn.weight_ih, lstm_bias(rnn)).unbind(1)   # T_steps × (B, 4 H_dec)
        from_hidden = step_product(rnn.weight_hh, batch)
        h, c = state.decoder_rnn
        hidden = []
        for t in range(steps):
            hc = lstm_update(input_gates[t] + from_hidden(h), c)
            h, c = zoneout(hc, (h, c), self.zoneout, self.training)
            h = self.rnn_dropout(h)
            hidden.append(h)
        return torch.cat([torch.stack(hidden, dim=1), contexts_all], dim=-1), torch.stack(alignments, dim=1)


@register_model("tacotron2")
class Tacotron2(AutoregressiveTTS):
    """``forward(batch) → ModelOutput`` (teacher forcing); ``inference(ids, lengths) → InferenceOutput``."""

    def __init__(self, config: Tacotron2Config, n_symbols: int, audio: AudioConfig | None = None,
                 go_frame: str = "zeros"):
        super().__init__(n_symbols, audio, config.reduction_factor, config.max_reduction_factor, go_frame)
        self.config, self.mask_padding = config, config.mask_padding
        self.encoder = Encoder(n_symbols, config)
        self.decoder = Decoder(self.n_mels, config, self.max_r)
        self.postnet = Postnet(self.n_mels, config.postnet)
        if config.initialization == "xavier":
            self.xavier_initialization()

    def xavier_initialization(self) -> None:
        """NVIDIA/tacotron2's initialization, each part its own (:meth:`Encoder.xavier_initialization`, ...)."""
        self.encoder.xavier_initialization()
        self.decoder.xavier_initialization()
        self.postnet.xavier_initialization()

    @property
    def memory_dim(self) -> int:
        return self.config.encoder_lstm_dim

    @property
    def attention_name(self) -> str:
        return self.config.attention.kind

    @property
    def mel_head(self) -> nn.Module:
        return self.decoder.mel_proj

    @property
    def stop_head(self) -> nn.Module:
        return self.decoder.stop_proj

    def encode_tokens(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.encoder(ids, mask)

    def init_decoder(self, memory: torch.Tensor, mask: torch.Tensor) -> DecoderState:
        return self.decoder.init_state(memory, mask)

    def decoder_step(self, frame: torch.Tensor, state: DecoderState,
                     window: torch.Tensor | None) -> tuple[torch.Tensor, StepAttention, DecoderState]:
        hidden, weights, state = self.decoder.step(self.decoder.prenet(frame), state, window)
        return hidden, StepAttention(weights), state

    def state_from_tensors(self, tensors: dict[str, torch.Tensor]) -> DecoderState:
        attention = self.decoder.attention.state_class.from_tensors(
            {name.removeprefix("attention."): value for name, value in tensors.items() if name.startswith("attention.")})
        return DecoderState((tensors["attention_rnn.h"], tensors["attention_rnn.c"]),
                            (tensors["decoder_rnn.h"], tensors["decoder_rnn.c"]), tensors["context"], attention)

    def grown_weights(self, weights: dict[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], list[str]]:
        """A narrower decoder LSTM widened to ``decoder_rnn_dim`` without changing what the model
        computes (Net2Net-style, Chen et al. 2016): the old units keep their weights, the new units
        keep this model's fresh input and recurrent weights, and every weight *from* a new unit (into
        the old units' gates and into the frame and stop heads) starts at zero, so the new units
        learn from the first update while the outputs are at first exactly the old model's."""
        name = "decoder.decoder_rnn"
        old = weights.get(f"{name}.weight_hh")
        wide = self.config.decoder_rnn_dim
        if old is None or old.shape[1] >= wide or old.shape[0] != 4 * old.shape[1]:
            return weights, []
        narrow = old.shape[1]
        own = self.state_dict()
        grown = dict(weights)
        for suffix in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            source, target = weights[f"{name}.{suffix}"], own[f"{name}.{suffix}"].clone()
            for gate in range(4):  # PyTorch's gate blocks: input, forget, cell, output
                rows, old_rows = slice(gate * wide, gate * wide + narrow), slice(gate * narrow, (gate + 1) * narrow)
                if suffix == "weight_hh":
                    target[rows, :narrow] = source[old_rows]
                    target[rows, narrow:] = 0.0
                else:
                    target[rows] = source[old_rows]
            grown[f"{name}.{suffix}"] = target
        for head in ("decoder.mel_proj.weight", "decoder.stop_proj.weight"):
            source = weights[head]   # (out, narrow + D_enc): [decoder hidden, context]
            target = source.new_zeros(source.shape[0], wide + source.shape[1] - narrow)
            target[:, :narrow], target[:, wide:] = source[:, :narrow], source[:, narrow:]
            grown[head] = target
        return grown, [f"decoder_rnn {narrow} → {wide} units (new units' outgoing weights zero)"]

    def forward(self, batch) -> ModelOutput:
        """Teacher forcing on a :class:`tts.data.Batch`."""
        memory, mask = self.encode(batch.ids, batch.text_lengths, batch.speakers, batch.speaker_vectors)
        hidden, alignments = self.decoder(memory, mask, self.decoder_inputs(batch.mels))
        mel_before = self.unfold_frames(hidden)
        return ModelOutput(mel_before, self.refine(mel_before, batch.mel_lengths),
                           self.stop_head(hidden).squeeze(-1), alignments)
