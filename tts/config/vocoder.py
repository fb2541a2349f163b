"""Neural vocoder settings: the generator's architecture and how it is trained."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tts.config.schema import bounded, bounded_list


@dataclass
class HiFiGANConfig:
    """HiFi-GAN (Kong et al. 2020): the generator (``configs/hifigan_v1.yaml`` … ``v3`` hold the
    paper's three; the upsampling rates must multiply to ``audio.hop_length``)."""

    upsample_initial_channel: int = bounded(512, 2)
    upsample_rates: list[int] = bounded_list([8, 8, 2, 2], 1)
    upsample_kernel_sizes: list[int] = bounded_list([16, 16, 4, 4], 1)
    resblock: Literal["1", "2"] = "1"
    resblock_kernel_sizes: list[int] = bounded_list([3, 7, 11], 1)
    resblock_dilations: list[list[int]] = field(default_factory=lambda: [[1, 3, 5], [1, 3, 5], [1, 3, 5]])


@dataclass
class VocosConfig:
    """Vocos (Siuzdak 2023): the mel → a 7-tap convolution → ``layers`` ConvNeXt blocks of width
    ``dim`` at the frame rate (a depthwise convolution of ``kernel`` taps, odd, then a pointwise MLP
    ``hidden`` wide) → per frame the log magnitude and the phase of every STFT bin → the inverse
    STFT of the audio settings' ``n_fft``, ``hop_length`` and window. All of its cost is at the
    frame rate, none at the sample rate. The defaults are the paper's (13.5M parameters)."""

    dim: int = bounded(512, 8)
    hidden: int = bounded(1536, 8)
    layers: int = bounded(8, 1)
    kernel: int = bounded(7, 1)


@dataclass
class DiscriminatorConfig:
    """The discriminators that train every generator kind: HiFi-GAN's (Kong et al. 2020)
    multi-period discriminator over ``periods`` and, with ``multi_scale``, its three multi-scale
    ones (``channels``: their widest layer, the paper's 1024; the other layers scale with it);
    and a multi-resolution discriminator (Jang et al. 2021, UnivNet; Vocos's choice) with one
    sub-discriminator per FFT size in ``resolutions`` (hop a quarter of it), ``resolution_channels``
    wide, which judges magnitude spectrograms."""

    periods: list[int] = bounded_list([2, 3, 5, 7, 11], 2)
    channels: int = bounded(1024, 16)
    multi_scale: bool = True
    resolutions: list[int] = bounded_list([], 64)
    resolution_channels: int = bounded(32, 1)


@dataclass
class VocoderConfig:
    """Training a neural vocoder: random segments of ``segment_frames`` mel frames and the matching
    audio, ``batch_size`` at a time (``num_workers`` loader processes); AdamW(``lr``, ``betas``) for
    generator and discriminators, the learning rate multiplied by ``lr_decay`` every
    ``lr_decay_every`` steps; the generator's loss is adversarial + ``feature_weight`` · feature
    matching + ``mel_weight`` · mel L1 (+ ``stft_weight`` · a multi-resolution STFT loss: spectral
    convergence and log-magnitude L1 at FFT sizes 512, 1024 and 2048; + ``phase_weight`` · the
    anti-wrapping phase losses of APNet at the audio's FFT size and hop, for a target whose phases
    are the mel's own: a teacher's waveform). ``mels``: the feature
    cache's (ground truth), or the teacher-forced mels of ``acoustic_checkpoint`` (fine-tuning on
    what the acoustic model really produces, Shen et al. 2018). ``teacher``: a vocoder to distil (``hifigan`` or another
    pretrained name, or a vocoder checkpoint): the generator then learns the teacher's waveforms
    of the same mels instead of the recordings. ``waveform_weight``: an L1 term between generated
    and target waveforms (a teacher's waveform is a deterministic function of the mel, so it can be
    matched sample by sample; 0 with recordings). ``adversarial_start``: updates of the generator
    alone on the reconstruction terms before the discriminators join (a warm-up that skips their
    cost). ``train_utterances``: train on the first N utterances of the training split only (0:
    all), e.g. to bound the teacher's one-off vocoding of them."""

    kind: Literal["hifigan", "vocos"] = "hifigan"
    hifigan: HiFiGANConfig = field(default_factory=HiFiGANConfig)
    vocos: VocosConfig = field(default_factory=VocosConfig)
    discriminators: DiscriminatorConfig = field(default_factory=DiscriminatorConfig)
    segment_frames: int = bounded(32, 2)
    batch_size: int = bounded(16, 1)
    num_workers: int = bounded(2, 0)
    lr: float = bounded(2e-4, 0.0, low_open=True)
    betas: list[float] = bounded_list([0.8, 0.99], 0.0, 1.0, high_open=True)
    lr_decay: float = bounded(0.999, 0.0, 1.0, low_open=True)
    lr_decay_every: int = bounded(1000, 1)
    mel_weight: float = bounded(45.0, 0.0)
    feature_weight: float = bounded(2.0, 0.0)
    n_val_utterances: int = bounded(16, 1)
    mels: Literal["ground_truth", "teacher_forced"] = "ground_truth"
    acoustic_checkpoint: str = ""
    teacher: str = ""
    waveform_weight: float = bounded(0.0, 0.0)
    adversarial_start: int = bounded(0, 0)
    stft_weight: float = bounded(0.0, 0.0)
    phase_weight: float = bounded(0.0, 0.0)
    train_utterances: int = bounded(0, 0)
