"""Training losses: masked mel reconstruction, weighted stop-token BCE, guided attention, and the
multi-resolution STFT and phase losses of waveforms."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from tts.config import GuidedAttentionConfig, LossConfig
from tts.models.layers import decoder_steps, sequence_mask
from tts.models.outputs import ModelOutput


def masked_mel_loss(prediction: torch.Tensor, target: torch.Tensor, lengths: torch.Tensor, kind: str = "mse",
                    reduction: str = "real_frames") -> torch.Tensor:
    """prediction/target ``(B, n_mels, T_mel)``, lengths ``(B,)``. ``real_frames``: the mean over
    real frames and mel bins; ``padded`` (NVIDIA/tacotron2): predictions past each length set to 0,
    then the mean over the whole padded tensor."""
    mask = sequence_mask(lengths, target.shape[2]).unsqueeze(1)
    if reduction == "padded":
        prediction = prediction.masked_fill(~mask, 0.0)
        return F.mse_loss(prediction, target) if kind == "mse" else F.l1_loss(prediction, target)
    mask = mask.to(prediction.dtype)
    error = (prediction - target) ** 2 if kind == "mse" else (prediction - target).abs()
    return (error * mask).sum() / (mask.sum() * target.shape[1])


def stop_token_loss(logits: torch.Tensor, frame_targets: torch.Tensor, mel_lengths: torch.Tensor,
                    pos_weight: float, reduction: str = "real_frames") -> torch.Tensor:
    """Weighted BCE of the stop logits ``(B, T_steps)``; frame_targets ``(B, T_mel)`` are 1 from
    each item's last frame on, and step s (frames ``[s·r, s·r + r)``) is a stop step if it holds
    the last frame. ``real_frames``: the mean over steps with real frames; ``padded``
    (NVIDIA/tacotron2): logits past each length set to 1000, the mean over every step."""
    r = frame_targets.shape[1] // logits.shape[1]
    targets = frame_targets[:, r - 1::r]
    mask = sequence_mask(decoder_steps(mel_lengths, r), logits.shape[1])
    weight = torch.tensor(pos_weight, device=logits.device, dtype=logits.dtype)
    if reduction == "padded":
        return F.binary_cross_entropy_with_logits(logits.masked_fill(~mask, 1e3), targets, pos_weight=weight)
    loss = F.binary_cross_entropy_with_logits(logits, targets, pos_weight=weight, reduction="none")
    mask = mask.to(logits.dtype)
    return (loss * mask).sum() / mask.sum()


def guided_attention_weights(text_lengths: torch.Tensor, step_lengths: torch.Tensor, t_steps: int, t_text: int,
                             sigma: float) -> torch.Tensor:
    """Tachibana et al. (2017) penalty ``W[t, n] = 1 − exp(−(n/N − t/T)² / 2σ²)``, zero on padding.

    Returns ``(B, T_steps, T_text)``.
    """
    t = torch.arange(t_steps, device=text_lengths.device).view(1, -1, 1) / step_lengths.view(-1, 1, 1)
    n = torch.arange(t_text, device=text_lengths.device).view(1, 1, -1) / text_lengths.view(-1, 1, 1)
    weights = 1.0 - torch.exp(-((n - t) ** 2) / (2 * sigma ** 2))
    mask = sequence_mask(step_lengths, t_steps).unsqueeze(2) & sequence_mask(text_lengths, t_text).unsqueeze(1)
    return weights * mask


def guided_attention_loss(alignments: torch.Tensor, text_lengths: torch.Tensor, step_lengths: torch.Tensor,
                          sigma: float = 0.4) -> torch.Tensor:
    """Mean penalty of attention mass away from the diagonal. alignments ``(B, T_steps, T_text)``."""
    weights = guided_attention_weights(text_lengths, step_lengths, alignments.shape[1], alignments.shape[2], sigma)
    return (alignments * weights).sum() / step_lengths.sum()


def guided_attention_scale(config: GuidedAttentionConfig, step: int) -> float:
    """Weight of the guided attention term at a training step (0 when disabled or past ``until_step``)."""
    if not config.enabled or (config.until_step and step >= config.until_step):
        return 0.0
    return config.weight * config.decay ** step


class TTSLoss(nn.Module):
    """All loss terms for a :class:`ModelOutput` against a :class:`tts.data.Batch`.

    Returns a dict with ``loss`` (the weighted total) and each term: ``mel``, ``mel_postnet``,
    ``stop`` and ``guided_attention``.
    """

    def __init__(self, config: LossConfig):
        super().__init__()
        self.config = config

    def forward(self, output: ModelOutput, batch, step: int = 0) -> dict[str, torch.Tensor]:
        """Each term as a scalar for the teacher-forced ``output`` of ``batch`` (mels ``(B, n_mels,
        T_mel)``, alignments ``(B, T_mel / r, T_text)``); ``step``, the update, sets the guided-attention weight."""
        c = self.config
        terms = {
            "mel": masked_mel_loss(output.mel_before, batch.mels, batch.mel_lengths, c.mel_loss, c.reduction),
            "mel_postnet": masked_mel_loss(output.mel_after, batch.mels, batch.mel_lengths, c.mel_loss, c.reduction),
            "stop": stop_token_loss(output.stop_logits, batch.stop_targets, batch.mel_lengths, c.stop_pos_weight,
                                    c.reduction),
        }
        total = terms["mel"] + terms["mel_postnet"] + c.stop_weight * terms["stop"]
        scale = guided_attention_scale(c.guided_attention, step)
        r = batch.mels.shape[2] // output.stop_logits.shape[1]
        step_lengths = decoder_steps(batch.mel_lengths, r)
        terms["guided_attention"] = guided_attention_loss(output.alignments.float(), batch.text_lengths, step_lengths,
                                                          c.guided_attention.sigma)
        if scale > 0:
            total = total + scale * terms["guided_attention"]
        terms["loss"] = total
        return terms



def multi_resolution_stft_loss(fake: torch.Tensor, real: torch.Tensor,
                               resolutions: tuple[tuple[int, int], ...] = ((512, 128), (1024, 256), (2048, 512))
                               ) -> torch.Tensor:
    """Waveforms ``(B, T_wav)``: per (FFT size, hop) the spectral convergence ``‖|S| − |Ŝ|‖ / ‖|S|‖``
    plus the L1 of the log magnitudes (Yamamoto et al. 2020), summed over the resolutions."""
    total = fake.new_zeros(())
    for n_fft, hop in resolutions:
        window = torch.hann_window(n_fft, device=fake.device)
        fake_mag, real_mag = (torch.stft(w, n_fft, hop, window=window, return_complex=True).abs().clamp(min=1e-5)
                              for w in (fake, real))
        total = total + torch.linalg.norm(real_mag - fake_mag) / torch.linalg.norm(real_mag) \
            + F.l1_loss(fake_mag.log(), real_mag.log())
    return total


def phase_loss(fake: torch.Tensor, real: torch.Tensor, n_fft: int, hop: int) -> torch.Tensor:
    """Waveforms ``(B, T_wav)``: how far ``fake``'s STFT phases are from ``real``'s, as the three
    anti-wrapping phase losses of APNet (Ai & Ling 2023): the instantaneous phase, the group delay
    (its difference along frequency) and the instantaneous angular frequency (along time), summed.

    Each difference Δ enters as ``½ |e^{iφ} − e^{iψ}|² = 1 − cos Δ`` of the two phasors (so it wraps
    by itself), the phasors shrunk toward 0 below a ten-thousandth of ``real``'s peak magnitude so
    that it stays smooth where a magnitude vanishes (where APNet's wrapped ``|Δ|`` is not); averaged
    over the bins with ``real``'s magnitude as weights: the phases of bins one cannot hear count
    little. 0 for equal waveforms; each term 1 on average for independent phases, 2 at most."""
    window = torch.hann_window(n_fft, device=fake.device)
    fake_spec, real_spec = (torch.stft(w, n_fft, hop, window=window, return_complex=True) for w in (fake, real))
    weight = real_spec.abs()
    floor = 1e-4 * weight.amax().clamp(min=1e-8)

    def phasor(spec: torch.Tensor) -> torch.Tensor:
        return spec / torch.sqrt(spec.real ** 2 + spec.imag ** 2 + floor ** 2)

    fake_unit, real_unit = phasor(fake_spec), phasor(real_spec)

    def distance(a: torch.Tensor, b: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """Weighted mean of ½ |a − b|² (1 − cos(arg a − arg b) for unit phasors a, b; shape of w)."""
        return (0.5 * (a - b).abs().square() * w).sum() / w.sum().clamp(min=1e-8)

    instantaneous = distance(fake_unit, real_unit, weight)
    group_delay = distance(fake_unit[:, 1:] * fake_unit[:, :-1].conj(), real_unit[:, 1:] * real_unit[:, :-1].conj(),
                           torch.sqrt(weight[:, 1:] * weight[:, :-1]))
    frequency = distance(fake_unit[..., 1:] * fake_unit[..., :-1].conj(), real_unit[..., 1:] * real_unit[..., :-1].conj(),
                         torch.sqrt(weight[..., 1:] * weight[..., :-1]))
    return instantaneous + group_delay + frequency
