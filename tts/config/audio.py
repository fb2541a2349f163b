"""Waveform and mel settings: the single source for :class:`tts.audio.MelSpectrogram`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from tts.config.schema import bounded
from tts.errors import ConfigError

#: the audio settings that change what a log-mel frame means: a vocoder only fits mels made with the same
MEL_FIELDS = ("sample_rate", "n_fft", "hop_length", "win_length", "n_mels", "fmin", "fmax", "log_floor")


@dataclass
class AudioConfig:
    """Waveform and mel settings.

    Features trim leading and trailing audio quieter than ``trim_top_db`` below the peak (when
    ``trim_silence``), then put ``leading_silence`` seconds of silence before the speech.
    """

    sample_rate: int = bounded(22050, 1000)
    n_fft: int = bounded(1024, 16)
    hop_length: int = bounded(256, 1)
    win_length: int = bounded(1024, 16)
    n_mels: int = bounded(80, 1)
    log_floor: float = bounded(1e-5, 0.0, 1.0, low_open=True, high_open=True)
    fmin: float = bounded(0.0, 0.0)
    fmax: Optional[float] = bounded(8000.0, 0.0, low_open=True)
    trim_silence: bool = True
    trim_top_db: float = bounded(40.0, 0.0, low_open=True)
    leading_silence: float = bounded(0.0, 0.0, 2.0)

    def __post_init__(self) -> None:
        if self.win_length > self.n_fft:
            raise ConfigError.for_key("win_length", f"({self.win_length}) must not exceed n_fft ({self.n_fft})")
        if self.fmax is not None and not self.fmin < self.fmax <= self.sample_rate / 2:
            raise ConfigError.for_key("fmax", f"({self.fmax:g}) must lie above fmin ({self.fmin:g}) and at most "
                                              f"at the Nyquist frequency ({self.sample_rate / 2:g} Hz)")

    @property
    def silence(self) -> float:
        """The log-mel value of silence (``log(log_floor)``): padding frames and pauses hold it."""
        return math.log(self.log_floor)

    def mel_differences(self, other: "AudioConfig") -> list[str]:
        """``"field mine vs theirs"`` for each of :data:`MEL_FIELDS` where ``other`` differs."""
        return [f"{k} {getattr(self, k)} vs {getattr(other, k)}" for k in MEL_FIELDS
                if getattr(self, k) != getattr(other, k)]
