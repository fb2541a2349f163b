"""HiFi-GAN (Kong et al. 2020, "HiFi-GAN: Generative Adversarial Networks for Efficient and High
Fidelity Speech Synthesis"): the generator and its two discriminators.

Generator: log-mel ``(B, n_mels, T)`` → a 7-tap convolution → per upsampling stage a transposed
convolution (rate u, kernel k) and a multi-receptive-field fusion (the mean of residual blocks
with several kernel sizes and dilations) → a 7-tap convolution → tanh → waveform
``(B, 1, T · prod(u))``; the product of the rates is the hop length. ResBlock1 (V1, V2) stacks
two convolutions per dilation, ResBlock2 (V3) one. Discriminators: multi-period (the waveform
folded into ``(T / p, p)`` for p in 2, 3, 5, 7, 11, 2-D convolutions along time) and
multi-scale (raw, ×2 and ×4 average-pooled, grouped 1-D convolutions), and UnivNet's
multi-resolution one (magnitude spectrograms at several FFT sizes, 2-D convolutions) that Vocos
trains with; each returns its logits and every layer's feature map for the feature-matching loss.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import spectral_norm, weight_norm

from tts.config import AudioConfig, HiFiGANConfig
from tts.errors import TTSError
from tts.vocoders.base import NeuralVocoder

LRELU_SLOPE = 0.1


def _padding(kernel: int, dilation: int = 1) -> int:
    return (kernel * dilation - dilation) // 2


class ResBlock(nn.Module):
    """Residual block of dilated convolutions: per dilation ``x + conv(lrelu(x))`` (ResBlock2) or
    ``x + conv₂(lrelu(conv₁(lrelu(x))))`` (ResBlock1, the second convolution undilated)."""

    def __init__(self, channels: int, kernel: int, dilations: list[int], two_convolutions: bool):
        super().__init__()
        self.dilated = nn.ModuleList(weight_norm(nn.Conv1d(channels, channels, kernel, dilation=d,
                                                           padding=_padding(kernel, d))) for d in dilations)
        self.plain = nn.ModuleList(weight_norm(nn.Conv1d(channels, channels, kernel, padding=_padding(kernel)))
                                   for _ in dilations) if two_convolutions else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, conv in enumerate(self.dilated):
            y = conv(F.leaky_relu(x, LRELU_SLOPE))
            if self.plain is not None:
                y = self.plain[i](F.leaky_relu(y, LRELU_SLOPE))
            x = x + y
        return x


class HiFiGANGenerator(NeuralVocoder):
    """HiFi-GAN's generator (a :class:`NeuralVocoder`: :meth:`generate` is the raw network)."""

    def __init__(self, config: HiFiGANConfig, audio: AudioConfig):
        super().__init__(audio)
        c = config
        hop = 1
        for rate in c.upsample_rates:
            hop *= rate
        if hop != audio.hop_length:
            raise TTSError(f"vocoder.hifigan.upsample_rates multiply to {hop}, not audio.hop_length {audio.hop_length}")
        if len(c.upsample_kernel_sizes) != len(c.upsample_rates) or len(c.resblock_dilations) != len(
                c.resblock_kernel_sizes):
            raise TTSError("vocoder.hifigan: one kernel size per upsampling rate and one dilation list per "
                           "resblock kernel size")
        self.config = c
        self.conv_pre = weight_norm(nn.Conv1d(audio.n_mels, c.upsample_initial_channel, 7, padding=3))
        self.ups = nn.ModuleList()
        self.resblocks = nn.ModuleList()
        channels = c.upsample_initial_channel
        for rate, kernel in zip(c.upsample_rates, c.upsample_kernel_sizes):
            self.ups.append(weight_norm(nn.ConvTranspose1d(channels, channels // 2, kernel, rate,
                                                           padding=(kernel - rate) // 2)))
            channels //= 2
            self.resblocks.append(nn.ModuleList(
                ResBlock(channels, k, d, c.resblock == "1") for k, d in zip(c.resblock_kernel_sizes, c.resblock_dilations)))
        self.conv_post = weight_norm(nn.Conv1d(channels, 1, 7, padding=3))
        for module in self.modules():
            if isinstance(module, (nn.Conv1d, nn.ConvTranspose1d)):
                nn.init.normal_(module.weight, 0.0, 0.01)

    def generate(self, mel: torch.Tensor) -> torch.Tensor:
        """log-mel ``(B, n_mels, T)`` → waveform ``(B, 1, T · hop)`` in (-1, 1)."""
        x = self.conv_pre(mel)
        for up, blocks in zip(self.ups, self.resblocks):
            assert isinstance(blocks, nn.ModuleList)
            x = up(F.leaky_relu(x, LRELU_SLOPE))
            x = torch.stack([block(x) for block in blocks]).mean(dim=0)
        return torch.tanh(self.conv_post(F.leaky_relu(x)))

    @property
    def context_frames(self) -> int:
        """An upper bound of the receptive field's radius in mel frames: the first convolution's,
        then per upsampling stage its transposed convolution's and its widest residual block's, in
        that stage's samples divided by the samples per frame there (V1: 14 of a measured 13)."""
        c = self.config
        radius, per_frame = 3.0, 1
        widest = max(sum(d * (k - 1) // 2 + ((k - 1) // 2 if c.resblock == "1" else 0) for d in dilations)
                     for k, dilations in zip(c.resblock_kernel_sizes, c.resblock_dilations))
        for rate, kernel in zip(c.upsample_rates, c.upsample_kernel_sizes):
            radius += kernel / (2 * rate * per_frame)
            per_frame *= rate
            radius += widest / per_frame
        return math.ceil(radius + 3 / per_frame)

    def for_inference(self) -> "HiFiGANGenerator":
        """Eval mode with the weight-norm parametrizations folded into plain weights: the same
        outputs, faster (the state dict no longer loads into a fresh generator)."""
        for module in self.modules():
            if parametrize.is_parametrized(module, "weight"):
                parametrize.remove_parametrizations(module, "weight")
        return self.eval()


def _scaled(channels: int, widest: int) -> int:
    """A layer width of the paper's discriminators (widest layer 1024) for another widest width."""
    return max(1, channels * widest // 1024)


def discriminator_stack(convs: nn.ModuleList, post: nn.Module,
                        x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """A discriminator's layers: each convolution then a leaky ReLU, the last convolution bare;
    returns the flattened logits and every layer's output (for feature matching)."""
    features = []
    for conv in convs:
        x = F.leaky_relu(conv(x), LRELU_SLOPE)
        features.append(x)
    x = post(x)
    features.append(x)
    return x.flatten(1), features


class PeriodDiscriminator(nn.Module):
    """The waveform folded into ``(T / p, p)``; 2-D convolutions (5 × 1, stride 3 × 1) along time."""

    def __init__(self, period: int, widest: int = 1024):
        super().__init__()
        self.period = period
        channels = [1] + [_scaled(c, widest) for c in (32, 128, 512, 1024)]
        self.convs = nn.ModuleList(weight_norm(nn.Conv2d(a, b, (5, 1), (3, 1), padding=(2, 0)))
                                   for a, b in zip(channels[:-1], channels[1:]))
        self.convs.append(weight_norm(nn.Conv2d(channels[-1], channels[-1], (5, 1), 1, padding=(2, 0))))
        self.post = weight_norm(nn.Conv2d(channels[-1], 1, (3, 1), 1, padding=(1, 0)))

    def forward(self, wav: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """wav ``(B, 1, T)`` → logits ``(B, N)`` and feature maps."""
        batch, channels, length = wav.shape
        if length % self.period:
            wav = F.pad(wav, (0, self.period - length % self.period), "reflect")
        return discriminator_stack(self.convs, self.post, wav.view(batch, channels, -1, self.period))


class ScaleDiscriminator(nn.Module):
    """Grouped 1-D convolutions over the waveform at one scale."""

    def __init__(self, spectral: bool = False, widest: int = 1024):
        super().__init__()
        norm = spectral_norm if spectral else weight_norm
        layers = [(1, 128, 15, 1, 1), (128, 128, 41, 2, 4), (128, 256, 41, 2, 16), (256, 512, 41, 4, 16),
                  (512, 1024, 41, 4, 16), (1024, 1024, 41, 1, 16), (1024, 1024, 5, 1, 1)]
        convs = []
        for a, b, k, s, g in layers:
            a, b = (a if a == 1 else _scaled(a, widest)), _scaled(b, widest)
            convs.append(norm(nn.Conv1d(a, b, k, s, groups=math.gcd(g, math.gcd(a, b)), padding=(k - 1) // 2)))
        self.convs = nn.ModuleList(convs)
        self.post = norm(nn.Conv1d(_scaled(1024, widest), 1, 3, 1, padding=1))

    def forward(self, wav: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """wav ``(B, 1, T)`` → logits ``(B, N)`` and feature maps."""
        return discriminator_stack(self.convs, self.post, wav)


class ResolutionDiscriminator(nn.Module):
    """UnivNet's (Jang et al. 2021) sub-discriminator of one resolution: the magnitude spectrogram
    (``n_fft``, hop ``n_fft / 4``, Hann window of ``n_fft``) as an image ``(B, 1, T_frames, F)``;
    2-D convolutions (3 × 9, frequency stride 2) across time and frequency."""

    window: torch.Tensor

    def __init__(self, n_fft: int, channels: int = 32):
        super().__init__()
        self.n_fft = n_fft
        self.register_buffer("window", torch.hann_window(n_fft), persistent=False)
        self.convs = nn.ModuleList([weight_norm(nn.Conv2d(1, channels, (3, 9), padding=(1, 4)))])
        self.convs.extend(weight_norm(nn.Conv2d(channels, channels, (3, 9), (1, 2), padding=(1, 4)))
                          for _ in range(3))
        self.convs.append(weight_norm(nn.Conv2d(channels, channels, (3, 3), padding=(1, 1))))
        self.post = weight_norm(nn.Conv2d(channels, 1, (3, 3), padding=(1, 1)))

    def forward(self, wav: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """wav ``(B, 1, T)`` → logits ``(B, N)`` and feature maps (the spectrogram is taken in float32
        whatever the autocast)."""
        with torch.autocast(wav.device.type, enabled=False):
            spectrum = torch.stft(wav.squeeze(1).float(), self.n_fft, self.n_fft // 4, window=self.window,
                                  return_complex=True).abs()
        return discriminator_stack(self.convs, self.post, spectrum.transpose(1, 2).unsqueeze(1))


class Discriminators(nn.Module):
    """The multi-period discriminator over ``periods``, the three multi-scale ones (with
    ``multi_scale``) and one multi-resolution sub-discriminator per FFT size in ``resolutions``:
    ``forward(wav (B, 1, T))`` → a list of (logits, feature maps), one per sub-discriminator."""

    def __init__(self, periods: list[int], widest: int = 1024, multi_scale: bool = True,
                 resolutions: list[int] | None = None, resolution_channels: int = 32):
        super().__init__()
        self.periods = nn.ModuleList(PeriodDiscriminator(p, widest) for p in periods)
        self.scales = nn.ModuleList([ScaleDiscriminator(True, widest), ScaleDiscriminator(False, widest),
                                     ScaleDiscriminator(False, widest)] if multi_scale else [])
        self.pool = nn.AvgPool1d(4, 2, padding=2)
        self.resolutions = nn.ModuleList(ResolutionDiscriminator(n, resolution_channels) for n in resolutions or [])

    def forward(self, wav: torch.Tensor) -> list[tuple[torch.Tensor, list[torch.Tensor]]]:
        outputs = [d(wav) for d in self.periods]
        x = wav
        for i, d in enumerate(self.scales):
            if i:
                x = self.pool(x)
            outputs.append(d(x))
        return outputs + [d(wav) for d in self.resolutions]


def discriminator_loss(real: list, fake: list) -> torch.Tensor:
    """Least-squares GAN: ``Σ mean((1 − D(x))²) + mean(D(G(s))²)``."""
    return torch.stack([torch.mean((1 - r[0]) ** 2) + torch.mean(f[0] ** 2) for r, f in zip(real, fake)]).sum()


def generator_adversarial_loss(fake: list) -> torch.Tensor:
    """``Σ mean((1 − D(G(s)))²)``."""
    return torch.stack([torch.mean((1 - f[0]) ** 2) for f in fake]).sum()


def feature_matching_loss(real: list, fake: list) -> torch.Tensor:
    """``Σ mean |D_l(x) − D_l(G(s))|`` over every layer of every sub-discriminator."""
    return torch.stack([torch.mean(torch.abs(r_map.detach() - f_map)) for r, f in zip(real, fake)
                        for r_map, f_map in zip(r[1], f[1])]).sum()
