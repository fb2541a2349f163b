"""How a trained model is run, and the one place those settings are resolved."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from tts.config.schema import bounded, replaced


@dataclass
class GriffinLimConfig:
    """The accelerated Griffin-Lim vocoder (Nenov et al. 2023): ``iterations`` phase updates with
    ``momentum`` α, ``lookahead`` β and ``relaxation`` γ (γ = 1 is fast Griffin-Lim, Perraudin et
    al. 2013), on the linear magnitude raised to ``power``."""

    iterations: int = bounded(64, 1, 10000)
    momentum: float = bounded(0.99, 0.0, 1.0, high_open=True)
    lookahead: float = bounded(1.1, 0.0, 2.0, high_open=True)
    relaxation: float = bounded(1.25, 0.0, 1.5, low_open=True, high_open=True)
    power: float = bounded(1.2, 0.0, 10.0, low_open=True)


#: the most decoder steps any setting may ask for (about 40 minutes of speech at r = 2): a bound, so
#: that no setting can ask for memory the machine does not have
MAX_DECODER_STEPS = 100_000


@dataclass
class InferenceConfig:
    """Decoding limits, the attention window, batching and the Griffin-Lim vocoder's settings.
    Saved in every checkpoint; command-line flags override it through :func:`resolve_inference`.

    An item stops when its stop probability exceeds ``stop_threshold`` or after
    ``min(max_decoder_steps, ceil(text_length · max_frames_per_token / r))`` steps. Safety nets
    (off by default) ignore the stop token before ``ceil(text_length · min_frames_per_token / r)``
    steps, and, with ``stop_after_last_token``, until the alignment's peak has reached the last
    spoken token.
    ``attention_window = [back, ahead]`` keeps attention within that many tokens around the
    previous step's peak, with any mechanism; ``first_token_steps`` holds it on the first token
    for that many steps (a corpus whose features begin with a lead-in silence, e.g. 0.15 s = 6
    steps at r = 2: the silence is made on the first token, whose sound then follows it, instead of
    the attention moving on during the silence and the first phone going unsaid). Every setting is
    bounded (a pause of at most 10 s, a step limit of at most :data:`MAX_DECODER_STEPS`, ...), so
    that none asks for unbounded memory. Synthesis splits each text into sentences (unless
    ``split_sentences`` is off: then a text is said in one go), batches ``batch_size`` of them
    and joins the sentences of one text with ``sentence_pause`` seconds of silence. ``vocoder``
    turns the mels into sound: a name of the vocoder catalogue (:mod:`tts.vocoders.catalogue`;
    empty: its default; Griffin-Lim takes the ``griffin_lim`` settings) or the path of a vocoder
    checkpoint. ``prenet_dropout`` keeps the decoder prenet's dropout on while decoding (Shen et al.
    2018; NVIDIA/tacotron2 never turns it off): the decoder then leans on the text rather than on its
    own previous frame, which decides whether a model trained on a short budget reads at all
    (docs/attention_study/second_edition.md); its masks come from a generator seeded with
    ``noise_seed`` when a batch starts, so the same texts in the same batches give the same audio.
    """

    stop_threshold: float = bounded(0.5, 0.0, 1.0)
    max_decoder_steps: int = bounded(2000, 1, MAX_DECODER_STEPS)
    max_frames_per_token: float = bounded(20.0, 0.0, 1000.0, low_open=True)
    min_frames_per_token: float = bounded(0.0, 0.0, 1000.0)
    stop_after_last_token: bool = False
    attention_window: Optional[list[int]] = field(default=None, metadata={"range": (0, 10_000, False, False),
                                                                          "length": (2, 0), "order": None})
    first_token_steps: int = bounded(0, 0, 1000)
    batch_size: int = bounded(8, 1, 1024)
    split_sentences: bool = True
    sentence_pause: float = bounded(0.25, 0.0, 10.0)
    vocoder: str = ""
    prenet_dropout: bool = False
    noise_seed: int = bounded(0, 0, 2**31 - 1)
    griffin_lim: GriffinLimConfig = field(default_factory=GriffinLimConfig)


def resolve_inference(stored: InferenceConfig, changes: Mapping[str, Any] | None = None) -> InferenceConfig:
    """The settings a run uses: ``stored`` (a checkpoint's, or a config's) with ``changes`` (dotted
    keys, e.g. ``{"stop_threshold": 0.4, "griffin_lim.iterations": 32}``; ``None`` values are
    left out) applied and checked like a config file. The one place overrides are applied: the
    result travels down as it is."""
    given = {key: value for key, value in (changes or {}).items() if value is not None}
    return replaced(stored, "inference", given) if given else stored
