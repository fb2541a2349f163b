"""The one vocoder interface: log-mel ``(B, n_mels, T_mel)`` → waveforms, batched, with the
audio settings the vocoder was built for."""

from __future__ import annotations

import hashlib

import torch
from torch import nn

from tts.config import MEL_FIELDS, AudioConfig
from tts.digest import update_with_state
from tts.errors import TTSError

__all__ = ["MEL_FIELDS", "NeuralVocoder", "Vocoder"]

#: a natural-log mel magnitude above this (e^12 ≈ 160,000 on a [-1, 1] waveform scale) is not one
MAX_LOG_MEL = 12.0


class Vocoder(nn.Module):
    """Base class. ``forward(mel (B, n_mels, T_mel), lengths (B,) | None) → (wav (B, T_wav), wav_lengths (B,))``
    with ``T_wav = (T_mel - 1) · hop_length`` and each item's samples past its length silent."""

    @property
    def context_frames(self) -> int | None:
        """Mel frames on each side that reach an output sample (its receptive field's radius), for
        vocoding a long mel in chunks; None when every sample depends on the whole mel (Griffin-Lim)."""
        return None

    def __init__(self, audio: AudioConfig):
        super().__init__()
        self.audio = audio

    def check_compatible(self, audio: AudioConfig, source: str = "the acoustic model") -> None:
        """Refuse mels made with other settings than the vocoder's, naming the differing fields
        (``source``: what makes the mels, for the message)."""
        differing = self.audio.mel_differences(audio)
        if differing:
            raise TTSError(f"the vocoder was trained on mels made with other audio settings than {source} "
                           f"(vocoder vs theirs: {'; '.join(differing)})")

    def fingerprint(self) -> str:
        """What this vocoder computes, as a hex digest: its kind, mel definition and settings
        (:meth:`settings_text`) and every weight and buffer of its state. Two vocoders with one
        fingerprint make the same waveform of the same mel on the same machine."""
        digest = hashlib.sha256(f"{type(self).__qualname__}|{self.audio!r}|{self.settings_text()}".encode())
        update_with_state(digest, self.state_dict())
        return digest.hexdigest()

    def settings_text(self) -> str:
        """The settings other than the weights that change the waveform, as text ("" where the weights say it all)."""
        return ""

    def for_inference(self) -> "Vocoder":
        """This vocoder in eval mode, made as fast as it can be for inference (in place)."""
        return self.eval()

    def check_mel(self, mel: torch.Tensor) -> None:
        if mel.dim() != 3 or mel.shape[1] != self.audio.n_mels:
            raise TTSError(f"the vocoder wants mels of shape (batch, n_mels={self.audio.n_mels}, frames), "
                           f"got {tuple(mel.shape)}")
        if mel.shape[2] == 0:
            raise TTSError("the mel is empty (0 frames): nothing to vocode")
        if mel.shape[2] == 1:
            raise TTSError(f"the mel has 1 frame: a waveform spans (frames - 1) x {self.audio.hop_length} samples, "
                           f"so it needs at least 2")
        if not bool(torch.isfinite(mel).all()):
            raise TTSError("the mel holds NaN or infinite values: refusing to vocode it")
        if float(mel.max()) > MAX_LOG_MEL:
            raise TTSError(f"the mel's largest value is {float(mel.max()):.3g}, far above any natural-log mel "
                           f"(at most {MAX_LOG_MEL:g}): is it a linear or dB spectrogram?")

    def frames_to_samples(self, frames: torch.Tensor) -> torch.Tensor:
        return (frames - 1).clamp(min=0) * self.audio.hop_length

    def chunk(self, mel: torch.Tensor, start: int, end: int, last: bool = True) -> torch.Tensor:
        """The samples of frames ``[start, end)`` of one utterance's mel ``(1, n_mels, T_mel)`` (all
        the frames there are so far), vocoded with the :attr:`context_frames` either side they need:
        the same samples, up to rounding, as vocoding the whole mel. The utterance's last frame adds
        none (``T_wav = (T_mel − 1) · hop``) when ``last`` says the mel is complete."""
        total, context, hop = mel.shape[2], self.context_frames or 0, self.audio.hop_length
        lo, hi = max(0, start - context), min(total, end + context)
        samples = self(mel[:, :, lo:hi])[0][0]
        stop = min(end, total - 1) if last else end
        return samples[(start - lo) * hop: (stop - lo) * hop]

    @torch.no_grad()
    def vocode_long(self, mel: torch.Tensor, chunk_frames: int = 2048, progress: bool = False) -> torch.Tensor:
        """One utterance's mel ``(n_mels, T_mel)`` → waveform ``(T_wav,)`` in chunks of
        ``chunk_frames`` (:meth:`chunk`; a progress bar with ``progress``), so that a long input says
        how far it is; a vocoder without bounded context (Griffin-Lim) runs in one call."""
        from tqdm import tqdm

        mel = mel[None]
        total = mel.shape[2]
        if self.context_frames is None or total <= chunk_frames:
            return self(mel)[0][0]
        starts = range(0, total, chunk_frames)
        pieces = [self.chunk(mel, start, min(start + chunk_frames, total))
                  for start in tqdm(starts, desc="vocode", unit="chunk", disable=not progress)]
        return torch.cat(pieces)


class NeuralVocoder(Vocoder):
    """A trainable generator: :meth:`generate` is the raw network, log-mel ``(B, n_mels, T_mel)`` →
    waveform ``(B, 1, T_mel · hop)``; ``forward`` wraps it in the :class:`Vocoder` interface
    (checked input, ``(T_mel - 1) · hop`` samples, silence past each item's length)."""

    def generate(self, mel: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def grown_weights(self, weights: dict[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], list[str]]:
        """A narrower generator's ``weights`` fitted into this one's wider layers so that it computes
        the same waveforms (a warm start that adds capacity), and what was grown, in words; layers
        this generator cannot grow are returned as they are (the caller reports a shape mismatch)."""
        return weights, []

    @torch.no_grad()
    def forward(self, mel: torch.Tensor, lengths: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        self.check_mel(mel)
        if lengths is None:
            lengths = torch.full((mel.shape[0],), mel.shape[2], dtype=torch.long, device=mel.device)
        wav = self.generate(mel.float()).squeeze(1)
        wav_lengths = self.frames_to_samples(lengths)
        wav = wav[:, : (mel.shape[2] - 1) * self.audio.hop_length]
        return wav * (torch.arange(wav.shape[-1], device=wav.device)[None] < wav_lengths[:, None]), wav_lengths
