"""Acoustic model settings: which model, its sizes, and the parts the models share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tts.config.attention import AttentionConfig
from tts.config.schema import bounded, bounded_list
from tts.errors import ConfigError


@dataclass
class PostnetConfig:
    """The residual convolutional postnet: ``layers`` 1-D convolutions of ``channels`` channels."""

    layers: int = bounded(5, 1)
    channels: int = bounded(512, 1)
    kernel_size: int = bounded(5, 1)
    dropout: float = bounded(0.5, 0.0, 1.0, high_open=True)


@dataclass
class FrameDecoderConfig:
    """What every autoregressive model shares: ``reduction_factor`` frames per decoder step;
    ``max_reduction_factor`` (0 = ``reduction_factor``) sizes the frame projection so gradual
    training can switch r up to that value without changing any parameter shape; the postnet."""

    reduction_factor: int = bounded(1, 1)
    max_reduction_factor: int = bounded(0, 0)
    postnet: PostnetConfig = field(default_factory=PostnetConfig)


@dataclass
class Tacotron2Config(FrameDecoderConfig):
    """Sizes of every Tacotron2 block (defaults: NVIDIA/tacotron2, 28M parameters).

    ``mask_padding`` zeroes padded positions after every encoder and postnet layer and keeps the
    padding symbol's embedding at zero, so an item's output does not depend on its batch; off, the
    layers run over the padding as NVIDIA/tacotron2's do. ``initialization``: PyTorch's defaults,
    or NVIDIA's (Xavier-uniform with per-layer gains, uniform embeddings).
    """

    embedding_dim: int = bounded(512, 1)
    encoder_conv_layers: int = bounded(3, 0)
    encoder_conv_channels: int = bounded(512, 1)
    encoder_kernel_size: int = bounded(5, 1)
    encoder_dropout: float = bounded(0.5, 0.0, 1.0, high_open=True)
    encoder_lstm_dim: int = bounded(512, 2)
    prenet_dims: list[int] = bounded_list([256, 256], 1, min_length=1)
    prenet_dropout: float = bounded(0.5, 0.0, 1.0, high_open=True)
    prenet_bias: bool = True
    attention_rnn_dim: int = bounded(1024, 1)
    decoder_rnn_dim: int = bounded(1024, 1)
    rnn_dropout: float = bounded(0.1, 0.0, 1.0, high_open=True)
    zoneout: float = bounded(0.0, 0.0, 1.0, high_open=True)
    mask_padding: bool = True
    initialization: Literal["pytorch", "xavier"] = "pytorch"
    attention: AttentionConfig = field(default_factory=lambda: AttentionConfig.variants["location_sensitive"]())


@dataclass
class TransformerTTSConfig(FrameDecoderConfig):
    """Transformer-TTS (Li et al. 2019); defaults are the paper's sizes (6+6 layers, 8 heads, d 512).

    ``guided_heads`` lists ``[layer, head]`` pairs of encoder-decoder attention (negative layers
    count from the end) that the guided attention loss is applied to. ``positional_alpha`` scales
    the positional encodings of encoder and decoder, learned from there (the paper's) or fixed
    (``positional_alpha_learned: false``).
    """

    embedding_dim: int = bounded(512, 1)
    encoder_prenet_layers: int = bounded(3, 0)
    encoder_prenet_kernel_size: int = bounded(5, 1)
    encoder_prenet_dropout: float = bounded(0.1, 0.0, 1.0, high_open=True)
    d_model: int = bounded(512, 1)
    heads: int = bounded(8, 1)
    encoder_layers: int = bounded(6, 1)
    decoder_layers: int = bounded(6, 1)
    ffn_dim: int = bounded(2048, 1)
    dropout: float = bounded(0.1, 0.0, 1.0, high_open=True)
    norm_first: bool = True
    decoder_prenet_dims: list[int] = bounded_list([256, 256], 1, min_length=1)
    decoder_prenet_dropout: float = bounded(0.5, 0.0, 1.0, high_open=True)
    positional_alpha: float = 1.0
    positional_alpha_learned: bool = True
    postnet: PostnetConfig = field(default_factory=lambda: PostnetConfig(channels=256))
    guided_heads: list[list[int]] = field(default_factory=lambda: [[-1, 0], [-1, 1], [-2, 0], [-2, 1]])


ModelName = Literal["tacotron2", "transformer_tts"]


@dataclass
class SpeakerConfig:
    """The speakers of a multi-speaker model: ``names`` in the order of its table (empty: one
    speaker, no table; training fills them from a multi-speaker corpus's speaker field), each a
    vector that a linear layer adds to every encoder output (ESPnet's
    ``spk_embed_integration_type: add``). ``vectors``: ``table``, a learned ``embedding_dim``
    vector per speaker; or ``ge2e``, external d-vectors from an offline speaker encoder (256 numbers;
    ``embedding_dim`` does not apply): training gives each utterance its recording's own, and the
    table holds each speaker's mean, which synthesis uses."""

    names: list[str] = field(default_factory=list)
    embedding_dim: int = bounded(64, 1)
    vectors: Literal["table", "ge2e"] = "table"

    def __post_init__(self) -> None:
        repeated = sorted({name for name in self.names if self.names.count(name) > 1})
        if repeated or any(not isinstance(name, str) or not name.strip() for name in self.names):
            raise ConfigError.for_key("names", f"must be distinct, non-empty names (repeated: {', '.join(repeated)})"
                                      if repeated else "must be non-empty names")


@dataclass
class ModelConfig:
    """Which acoustic model to build (``tacotron2`` or ``transformer_tts``) and its sizes.
    ``go_frame`` is the decoder's input before the first frame: all zeros (a loud frame in
    log-mel terms, as in NVIDIA/tacotron2) or silence (``audio.silence``)."""

    name: ModelName = "tacotron2"
    go_frame: Literal["zeros", "silence"] = "zeros"
    speakers: SpeakerConfig = field(default_factory=SpeakerConfig)
    tacotron2: Tacotron2Config = field(default_factory=Tacotron2Config)
    transformer_tts: TransformerTTSConfig = field(default_factory=TransformerTTSConfig)

    @property
    def active(self) -> Tacotron2Config | TransformerTTSConfig:
        """The section of the model named by ``name``."""
        section: Tacotron2Config | TransformerTTSConfig = getattr(self, self.name)
        return section
