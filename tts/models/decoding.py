"""Autoregressive decoding, written once for every acoustic model.

:class:`AutoregressiveTTS` is the base of Tacotron2 and Transformer-TTS. It owns what the two
share: input checks, the reduction factor, the teacher-forcing decoder inputs, the mel and
stop heads' use, the postnet residual, and the free-running loop (:func:`decode`) with per-item
stopping, step limits and the attention window. A model supplies only its encoder
(:meth:`~AutoregressiveTTS.encode_tokens`), its decoder state
(:meth:`~AutoregressiveTTS.init_decoder`) and one decoder step
(:meth:`~AutoregressiveTTS.decoder_step`), plus the modules ``mel_head``, ``stop_head`` and
``postnet``.

:func:`decode` asks only for what :class:`Decodable` lists, so a model exported to another
runtime (:mod:`tts.onnx`) runs the same loop. For that, a decoder state is also a set of named
tensors (:class:`TensorState`): ``tensors()`` lists them and the model's
``state_from_tensors`` rebuilds the state from them.
"""

from __future__ import annotations

import threading
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import torch
from torch import nn

from tts.audio.speaker_encoder import DIM as SPEAKER_VECTOR_DIM
from tts.config import AudioConfig, InferenceConfig, SpeakerConfig
from tts.errors import Cancelled, TTSError
from tts.models.layers import Postnet, prenet_noise, sequence_mask
from tts.models.outputs import InferenceOutput, ModelOutput

#: what :func:`decode` hands a listener after each step: the step's frames ``(B, r, n_mels)``
StepCallback = Callable[[torch.Tensor], None]


def stop_when(cancel: threading.Event, then: StepCallback | None = None) -> StepCallback:
    """An ``on_step`` that ends the decoding loop between two steps, raising :class:`Cancelled`,
    once ``cancel`` is set (and otherwise hands the step's frames to ``then``)."""
    def check(frames: torch.Tensor) -> None:
        if cancel.is_set():
            raise Cancelled("nobody waits for this synthesis any more")
        if then is not None:
            then(frames)

    return check


@dataclass
class StepAttention:
    """What one decoder step attended: ``alignment`` ``(B, T_text)`` (the weights the attention
    window follows) and, for multi-head models, every layer's heads ``(B, L, H, T_text)``."""

    alignment: torch.Tensor
    heads: torch.Tensor | None = None


@dataclass
class StepOutput:
    """One free-running step of every item: frames ``(B, r, n_mels)`` (before the postnet), stop
    probability ``(B,)``, what was attended and the decoder state after the step."""

    frames: torch.Tensor
    stop_prob: torch.Tensor
    attended: StepAttention
    state: Any


class TensorState(Protocol):
    """A decoder state as named tensors, for runtimes that pass tensors between steps (ONNX)."""

    def tensors(self) -> dict[str, torch.Tensor]:
        """Every tensor of the state by a stable name (the same names and ranks at every step)."""
        ...


class Decodable(Protocol):
    """What :func:`decode` needs of a model (an :class:`AutoregressiveTTS`, or an exported one)."""

    n_mels: int
    go_value: float
    mel_pad_value: float

    @property
    def reduction_factor(self) -> int: ...

    def encode(self, ids: torch.Tensor, lengths: torch.Tensor, speakers: torch.Tensor | None = None,
               speaker_vectors: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """ids ``(B, T_text)``, lengths ``(B,)`` (and a multi-speaker model's ``speakers (B,)`` or
        ``speaker_vectors (B, 256)``) → memory ``(B, T_text, D)`` and its mask ``(B, T_text)``."""
        ...

    def init_decoder(self, memory: torch.Tensor, mask: torch.Tensor) -> Any:
        """The decoder state before the first step, for memory ``(B, T_text, D)`` and mask ``(B, T_text)``."""
        ...

    def step(self, frame: torch.Tensor, state: Any, window: torch.Tensor | None) -> StepOutput:
        """The previous frame ``(B, n_mels)`` (the go frame first) → the step's ``r`` frames, stop
        probability and attention; ``window`` ``(B, T_text)`` bool, when given, is where attention may look."""
        ...

    def refine(self, mel_before: torch.Tensor, mel_lengths: torch.Tensor) -> torch.Tensor:
        """The decoder's frames ``(B, n_mels, T_mel)`` refined by the postnet (same shape)."""
        ...


def check_ids(ids: torch.Tensor, lengths: torch.Tensor, n_symbols: int) -> None:
    """Refuse an empty item or an id outside ``[0, n_symbols)`` (ids ``(B, T_text)``, lengths ``(B,)``)."""
    if ids.numel() == 0 or ids.shape[1] == 0 or bool((lengths <= 0).any()):
        raise TTSError("empty input: every item needs at least one token")
    if bool((ids < 0).any()) or bool((ids >= n_symbols).any()):
        raise TTSError(f"token ids outside the inventory [0, {n_symbols}): "
                       f"min {int(ids.min())}, max {int(ids.max())}")


class AutoregressiveTTS(nn.Module):
    """Base class: ``forward(batch) → ModelOutput`` is the model's own (teacher forcing);
    ``inference(ids, lengths, settings) → InferenceOutput`` is :func:`decode` for every model."""

    postnet: Postnet       # (mel (B, n_mels, T_mel), mask (B, T_mel) | None) → residual
    mask_padding = True    # False: the postnet runs over padded frames too (as NVIDIA/tacotron2)

    def __init__(self, n_symbols: int, audio: AudioConfig | None, reduction_factor: int, max_reduction_factor: int,
                 go_frame: str = "zeros"):
        super().__init__()
        audio = audio or AudioConfig()
        self.n_symbols, self.n_mels, self.mel_pad_value = n_symbols, audio.n_mels, audio.silence
        self.go_value = audio.silence if go_frame == "silence" else 0.0
        self.r = reduction_factor
        self.max_r = max(reduction_factor, max_reduction_factor)
        self.speaker_names: list[str] = []
        self.speaker_table: nn.Embedding | None = None
        self.speaker_projection: nn.Linear | None = None
        self.fixed_parameters: tuple[str, ...] = ()  # data, not learnt: training never updates them

    def set_speakers(self, speakers: SpeakerConfig) -> None:
        """Give the model a table of ``speakers.names`` (none: one speaker), each vector projected
        to :attr:`memory_dim` and added to every encoder output; before any training. A learned
        table (``vectors: table``), or one of d-vectors (``ge2e``) that training fills with each
        speaker's mean and never updates. The projection starts at zero, so a model warm-started
        from a single-speaker voice starts out saying exactly what that voice says, for every speaker."""
        self.speaker_names = list(speakers.names)
        if self.speaker_names:
            dim = SPEAKER_VECTOR_DIM if speakers.vectors == "ge2e" else speakers.embedding_dim
            self.speaker_table = nn.Embedding(len(self.speaker_names), dim)
            if speakers.vectors == "ge2e":
                self.speaker_table.weight.requires_grad_(False)
                self.fixed_parameters = ("speaker_table.weight",)
            self.speaker_projection = nn.Linear(dim, self.memory_dim)
            nn.init.zeros_(self.speaker_projection.weight)
            nn.init.zeros_(self.speaker_projection.bias)

    # ------------------------------------------------------------------ what a model supplies
    @property
    def mel_head(self) -> nn.Module:
        """Decoder hidden ``(…, D)`` → ``max_r · n_mels`` frames: a module the model assigns
        (``self.mel_head = nn.Linear(...)``), or a property that names one of its layers."""
        return self._assigned("mel_head")

    @property
    def stop_head(self) -> nn.Module:
        """Decoder hidden ``(…, D)`` → 1 stop logit (assigned, or a property, as :attr:`mel_head`)."""
        return self._assigned("stop_head")

    def _assigned(self, name: str) -> nn.Module:
        module = self._modules.get(name)
        if module is None:
            raise NotImplementedError(f"{type(self).__name__} assigns no {name}")
        return module

    @property
    def memory_dim(self) -> int:
        """The width D of the encoder's outputs (``memory (B, T_text, D)``)."""
        raise NotImplementedError

    def encode_tokens(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """ids ``(B, T_text)``, mask ``(B, T_text)`` → memory ``(B, T_text, D)``."""
        raise NotImplementedError

    def init_decoder(self, memory: torch.Tensor, mask: torch.Tensor) -> TensorState:
        """The decoder state before the first step (what the model's step understands, and its tensors)."""
        raise NotImplementedError

    def decoder_step(self, frame: torch.Tensor, state: Any,
                     window: torch.Tensor | None) -> tuple[torch.Tensor, StepAttention, Any]:
        """One free-running step: the previous frame ``(B, n_mels)`` (the go frame at step 0) → decoder
        hidden ``(B, D)``, what it attended and the new state. ``window`` ``(B, T_text)`` bool, when
        given, is where attention may go this step."""
        raise NotImplementedError

    def state_from_tensors(self, tensors: dict[str, torch.Tensor]) -> TensorState:
        """The decoder state whose ``tensors()`` are ``tensors``, stepping with plain modules (no
        CPU-specific weight layouts), so that a traced step exports (:mod:`tts.onnx`)."""
        raise NotImplementedError

    @property
    def attention_name(self) -> str:
        """The attention, in words (for logs and benchmarks)."""
        raise NotImplementedError

    def diagnostics(self) -> dict[str, float]:
        """Scalars worth plotting during training (TensorBoard tag → value); none by default."""
        return {}

    def grown_weights(self, weights: dict[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], list[str]]:
        """A smaller model's ``weights`` fitted into this model's wider layers so that it computes the
        same function (for a warm start that adds capacity), and what was grown, in words; layers this
        model cannot grow are returned as they are (the caller reports a shape mismatch)."""
        return weights, []

    def schedule(self, step: int) -> None:
        """Tell every submodule with a training schedule (e.g. hard attention's temperature) the step."""
        for module in self.modules():
            schedule = getattr(module, "schedule", None)
            if module is not self and callable(schedule):
                schedule(step)

    # ------------------------------------------------------------------ shared
    @property
    def reduction_factor(self) -> int:
        return self.r

    def set_reduction_factor(self, r: int) -> None:
        """Change r (gradual training); the frame projection is sized for ``max_reduction_factor``
        and step t uses its first r frames, so no parameter changes shape."""
        if not 1 <= r <= self.max_r:
            raise TTSError(f"reduction factor {r} outside 1..{self.max_r} (raise the model's max_reduction_factor)")
        self.r = r

    def encode(self, ids: torch.Tensor, lengths: torch.Tensor, speakers: torch.Tensor | None = None,
               speaker_vectors: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Checked ids ``(B, T_text)`` → memory ``(B, T_text, D)`` and mask ``(B, T_text)``; a
        multi-speaker model adds each item's speaker (``speakers (B,)``, indices into
        :attr:`speaker_names`) to its memory, or each item's own ``speaker_vectors`` ``(B, 256)``
        when given (training a ``ge2e`` model on its recordings' d-vectors)."""
        check_ids(ids, lengths, self.n_symbols)
        mask = sequence_mask(lengths, ids.shape[1])
        return self.add_speakers(self.encode_tokens(ids, mask), speakers, speaker_vectors), mask

    def add_speakers(self, memory: torch.Tensor, speakers: torch.Tensor | None,
                     vectors: torch.Tensor | None = None) -> torch.Tensor:
        """memory ``(B, T_text, D)`` with each item's speaker vector added: its row of the table
        (speakers ``(B,)``), or ``vectors`` ``(B, E)`` given as they are."""
        if self.speaker_table is None or self.speaker_projection is None:
            if speakers is not None or vectors is not None:
                raise TTSError("this model has one speaker: it takes no speaker")
            return memory
        if vectors is not None:
            if vectors.shape != (memory.shape[0], self.speaker_table.embedding_dim):
                raise TTSError(f"speaker vectors must be ({memory.shape[0]}, {self.speaker_table.embedding_dim}), "
                               f"got {tuple(vectors.shape)}")
            return memory + self.speaker_projection(vectors).unsqueeze(1).to(memory.dtype)
        if speakers is None:
            raise TTSError(f"this model speaks as {len(self.speaker_names)} speakers: choose one of "
                           f"{', '.join(self.speaker_names)}")
        if speakers.shape != (memory.shape[0],) or bool((speakers < 0).any()) or bool(
                (speakers >= len(self.speaker_names)).any()):
            raise TTSError(f"speakers must be one index in [0, {len(self.speaker_names)}) per item, "
                           f"got {speakers.tolist()}")
        return memory + self.speaker_projection(self.speaker_table(speakers)).unsqueeze(1).to(memory.dtype)

    def decoder_inputs(self, mels: torch.Tensor) -> torch.Tensor:
        """Teacher forcing: mels ``(B, n_mels, T_mel)`` → the input frame of every step
        ``(B, T_steps, n_mels)``: the "go" frame, then the last frame of each previous step."""
        if mels.shape[2] % self.r:
            raise TTSError(f"mel length {mels.shape[2]} is not a multiple of the reduction factor {self.r}")
        previous = mels[:, :, self.r - 1::self.r].transpose(1, 2)[:, :-1]
        return torch.cat([mels.new_full((mels.shape[0], 1, self.n_mels), self.go_value), previous], dim=1)

    def step(self, frame: torch.Tensor, state: Any, window: torch.Tensor | None) -> StepOutput:
        """One free-running step with its heads: :meth:`decoder_step`, then r frames and the stop
        probability of the step's hidden."""
        hidden, attended, state = self.decoder_step(frame, state, window)
        frames = self.frames(hidden).reshape(frame.shape[0], self.r, self.n_mels)
        return StepOutput(frames, torch.sigmoid(self.stop_head(hidden).squeeze(-1)), attended, state)

    def forward_by_steps(self, batch: Any) -> ModelOutput:
        """Teacher forcing on a :class:`tts.data.Batch` through :meth:`decoder_step`, one step at a
        time: the definition a model's own (faster) ``forward`` must equal, and teacher forcing for
        models whose layers the fast path cannot read (int8)."""
        memory, mask = self.encode(batch.ids, batch.text_lengths, batch.speakers, batch.speaker_vectors)
        state = self.init_decoder(memory, mask)
        hiddens, alignments, heads = [], [], []
        for frame in self.decoder_inputs(batch.mels).unbind(1):
            hidden, attended, state = self.decoder_step(frame, state, None)
            hiddens.append(hidden)
            alignments.append(attended.alignment)
            if attended.heads is not None:
                heads.append(attended.heads)
        hidden = torch.stack(hiddens, dim=1)                                     # (B, T_steps, D)
        mel_before = self.unfold_frames(hidden)
        return ModelOutput(mel_before, self.refine(mel_before, batch.mel_lengths), self.stop_head(hidden).squeeze(-1),
                           torch.stack(alignments, dim=1), torch.stack(heads, dim=3) if heads else None)

    def frames(self, hidden: torch.Tensor) -> torch.Tensor:
        """Decoder hidden ``(B, [T_steps,] D)`` → r mel frames per step ``(B, [T_steps,] r · n_mels)``: the
        first r of the head's max_r frames (slicing the output keeps int8-quantized heads usable)."""
        return self.mel_head(hidden)[..., : self.r * self.n_mels]

    def unfold_frames(self, hidden: torch.Tensor) -> torch.Tensor:
        """Decoder hidden of every step ``(B, T_steps, D)`` → mel ``(B, n_mels, T_steps · r)``."""
        batch, steps = hidden.shape[:2]
        return self.frames(hidden).reshape(batch, steps * self.r, self.n_mels).transpose(1, 2)

    @property
    def postnet_context_frames(self) -> int:
        """Mel frames on each side that reach one refined frame (for refining a mel in chunks)."""
        return self.postnet.context_frames

    def refine(self, mel_before: torch.Tensor, mel_lengths: torch.Tensor) -> torch.Tensor:
        """``mel_before + postnet(mel_before)`` ``(B, n_mels, T_mel)``; frames past each length are
        ignored (unless ``mask_padding`` is off)."""
        mask = sequence_mask(mel_lengths, mel_before.shape[2]) if self.mask_padding else None
        return mel_before + self.postnet(mel_before, mask)

    @torch.no_grad()
    def inference(self, ids: torch.Tensor, lengths: torch.Tensor | None = None,
                  settings: InferenceConfig | None = None, last_token: torch.Tensor | None = None,
                  on_step: StepCallback | None = None, speakers: torch.Tensor | None = None,
                  speaker_vectors: torch.Tensor | None = None) -> InferenceOutput:
        """Batched free-running synthesis (:func:`decode`) with ``settings`` (default:
        :class:`InferenceConfig`'s defaults), used as given."""
        return decode(self, ids, lengths, settings or InferenceConfig(), last_token, on_step, speakers,
                      speaker_vectors)


class StopTracker:
    """Tracks which items of a batch have stopped (see :class:`InferenceConfig` for the rules).

    An item stops when its stop probability exceeds ``threshold`` (after ``min_steps``, and with
    ``stop_after_last_token`` only once the alignment peak reached ``last_token``) or after
    ``min(max_decoder_steps, ceil(text_length · max_frames_per_token / r))`` steps.
    """

    def __init__(self, text_lengths: torch.Tensor, r: int, settings: InferenceConfig,
                 last_token: torch.Tensor | None = None):
        self.r, self.threshold = r, settings.stop_threshold
        limits = torch.ceil(text_lengths.float() * settings.max_frames_per_token / r).long()
        self.limits = torch.clamp(limits, 1, settings.max_decoder_steps)
        self.min_steps = torch.minimum(torch.ceil(text_lengths.float() * settings.min_frames_per_token / r).long(),
                                       self.limits)
        self.last_token = ((text_lengths - 1 if last_token is None else last_token)
                           if settings.stop_after_last_token else None)
        self.finished = torch.zeros_like(text_lengths, dtype=torch.bool)
        self.hit_limit = torch.zeros_like(self.finished)
        self.steps = torch.zeros_like(text_lengths)
        self.furthest = torch.zeros_like(text_lengths)

    @property
    def max_steps(self) -> int:
        return int(self.limits.max())

    def update(self, t: int, stop_prob: torch.Tensor, alignment: torch.Tensor) -> bool:
        """Record step ``t`` (0-based) with stop probabilities ``(B,)`` and the step's alignment
        ``(B, T_text)``; True when every item is done."""
        self.furthest = torch.maximum(self.furthest, alignment.argmax(dim=1))
        stopping = (stop_prob > self.threshold) & ((t + 1) >= self.min_steps)
        if self.last_token is not None:
            stopping &= self.furthest >= self.last_token
        at_limit = (t + 1) >= self.limits
        ending = ~self.finished & (stopping | at_limit)
        self.hit_limit |= ending & at_limit & ~stopping
        self.steps = torch.where(ending, torch.full_like(self.steps, t + 1), self.steps)
        self.finished |= ending
        return bool(self.finished.all())

    @property
    def frame_lengths(self) -> torch.Tensor:
        return self.steps * self.r


def attention_window(alignment: torch.Tensor, text_mask: torch.Tensor, back: int, ahead: int) -> torch.Tensor:
    """Where attention may go next: ``back`` tokens behind to ``ahead`` tokens ahead of each item's
    peak in ``alignment`` ``(B, T_text)``, within ``text_mask``. Returns ``(B, T_text)`` bool."""
    positions = torch.arange(alignment.shape[1], device=alignment.device)
    peak = alignment.argmax(dim=1, keepdim=True)
    return text_mask & (positions >= peak - back) & (positions <= peak + ahead)


@torch.no_grad()
def decode(model: Decodable, ids: torch.Tensor, lengths: torch.Tensor | None,
           settings: InferenceConfig, last_token: torch.Tensor | None = None,
           on_step: StepCallback | None = None, speakers: torch.Tensor | None = None,
           speaker_vectors: torch.Tensor | None = None) -> InferenceOutput:
    """The free-running loop: ids ``(B, T_text)`` (or ``(T_text,)``), lengths ``(B,)`` → mel, stop
    probabilities, alignments and lengths; each item stops on its own (:class:`StopTracker`;
    ``hit_limit`` marks the items its step limit ended). With ``settings.attention_window = [back, ahead]``
    every step after the first may attend only around the previous step's peak; the first
    ``settings.first_token_steps`` steps attend only the first token. ``last_token``
    ``(B,)`` is each item's last spoken token (default: its last token), for
    ``settings.stop_after_last_token``. ``on_step``, when given, hears each step's frames
    ``(B, r, n_mels)`` (before the postnet) as they come (streaming synthesis listens here).
    ``speakers`` ``(B,)``: each item's speaker, for a multi-speaker model; or ``speaker_vectors``
    ``(B, 256)``, each item's d-vector, for one whose speakers are d-vectors."""
    if ids.dim() == 1:
        ids = ids.unsqueeze(0)
    if lengths is None:
        lengths = torch.full((ids.shape[0],), ids.shape[1], dtype=torch.long, device=ids.device)
    memory, mask = model.encode(ids, lengths, speakers, speaker_vectors)
    tracker = StopTracker(lengths, model.reduction_factor, settings, last_token)
    with ExitStack() as noise:
        if settings.prenet_dropout:
            if not isinstance(model, nn.Module):
                raise TTSError("inference.prenet_dropout=true needs the PyTorch model; ONNX graphs decode "
                               "with the prenet's dropout off (set inference.prenet_dropout=false)")
            noise.enter_context(prenet_noise(model, settings.noise_seed, ids.device))
        return _decode_steps(model, memory, mask, settings, tracker, on_step)


def _decode_steps(model: Decodable, memory: torch.Tensor, mask: torch.Tensor, settings: InferenceConfig,
                  tracker: StopTracker, on_step: StepCallback | None) -> InferenceOutput:
    """:func:`decode`'s loop, from the encoder's ``memory`` ``(B, T_text, D_enc)`` and its mask on."""
    batch = memory.shape[0]
    state = model.init_decoder(memory, mask)
    frame = memory.new_full((batch, model.n_mels), model.go_value)
    first_token = mask & (torch.arange(mask.shape[1], device=mask.device) == 0)
    window = first_token if settings.first_token_steps > 0 else None
    frames, stops, alignments, heads = [], [], [], []
    for t in range(tracker.max_steps):
        step = model.step(frame, state, window)
        step_frames, stop_prob, attended, state = step.frames, step.stop_prob, step.attended, step.state
        frames.append(step_frames)
        stops.append(stop_prob)
        alignments.append(attended.alignment)
        if attended.heads is not None:
            heads.append(attended.heads)
        frame = step_frames[:, -1]
        if t + 1 < settings.first_token_steps:
            window = first_token
        elif settings.attention_window is not None:
            window = attention_window(attended.alignment, mask, *settings.attention_window)
        else:
            window = None
        done = tracker.update(t, stop_prob, attended.alignment)
        if on_step is not None:
            on_step(step_frames)
        if done:
            break
    mel_before = torch.cat(frames, dim=1).transpose(1, 2)                       # (B, n_mels, T_mel)
    mel = model.refine(mel_before, tracker.frame_lengths)
    mel = mel.masked_fill(~sequence_mask(tracker.frame_lengths, mel.shape[2]).unsqueeze(1), model.mel_pad_value)
    return InferenceOutput(mel, torch.stack(stops, dim=1), torch.stack(alignments, dim=1), tracker.frame_lengths,
                           tracker.hit_limit, torch.stack(heads, dim=3) if heads else None)
