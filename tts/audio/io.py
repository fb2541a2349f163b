"""Waveform input/output, resampling and silence trimming.

Waveforms are mono ``float32`` numpy arrays in [-1, 1] of shape ``(T_wav,)``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import soundfile as sf

from tts.config import AudioConfig
from tts.errors import TTSError
from tts.fileio import atomic_path

log = logging.getLogger(__name__)


def load_wav(path: str | Path, sample_rate: int | None = None) -> tuple[np.ndarray, int]:
    """Read a wav (any format soundfile knows), mix to mono, optionally resample.

    Returns ``(waveform (T_wav,), sample_rate)``. Missing, empty or non-audio files
    raise :class:`TTSError` naming the file.
    """
    path = Path(path)
    if not path.is_file():
        raise TTSError(f"{path}: no such audio file")
    if path.stat().st_size == 0:
        raise TTSError(f"{path}: file is empty, not audio")
    try:
        wav, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, TypeError) as exc:
        raise TTSError(f"{path}: not a readable audio file ({str(exc).splitlines()[0]})") from None
    if wav.size == 0:
        raise TTSError(f"{path}: audio file holds no samples")
    if not np.isfinite(wav).all():
        raise TTSError(f"{path}: the audio holds NaN or infinite samples")
    wav = to_mono(wav, str(path))
    if sample_rate is not None and sr != sample_rate:
        wav, sr = resample(wav, sr, sample_rate), sample_rate
    return wav.astype(np.float32), int(sr)


def to_mono(wav: np.ndarray, name: str) -> np.ndarray:
    """``(T, channels) → (T,)``: the mean of the channels, or the first channel (with a warning)
    when the channels cancel out in the mean (anti-phase stereo would become silence)."""
    mono = wav.mean(axis=1)
    if wav.shape[1] > 1:
        channel_energy = float(np.mean(wav ** 2))
        if channel_energy > 0 and float(np.mean(mono ** 2)) < 0.01 * channel_energy:
            log.warning("%s: the channels cancel out when mixed to mono (anti-phase stereo?); using the first channel",
                        name)
            return wav[:, 0]
    return mono


def save_wav(path: str | Path, wav: np.ndarray, sample_rate: int) -> None:
    """Write 16-bit PCM, clipping to [-1, 1]; parent folders are created."""
    samples = np.clip(np.asarray(wav, dtype=np.float32), -1.0, 1.0)
    with atomic_path(path) as tmp:
        try:
            sf.write(str(tmp), samples, sample_rate, subtype="PCM_16", format="WAV")
        except sf.LibsndfileError as exc:
            raise OSError(str(exc)) from None


def resample(wav: np.ndarray, orig_sr: int, target_sr: int) -> np.ndarray:
    """Band-limited resampling (librosa's soxr_hq)."""
    if orig_sr == target_sr:
        return wav
    import librosa

    return librosa.resample(wav, orig_sr=orig_sr, target_sr=target_sr, res_type="soxr_hq").astype(np.float32)


def speech_bounds(wav: np.ndarray, top_db: float = 40.0, frame_length: int = 1024,
                  hop_length: int = 256) -> tuple[int, int]:
    """``[start, end)`` samples of ``wav`` ``(T_wav,)`` without its leading and trailing audio
    quieter than ``top_db`` below the peak."""
    import librosa

    _, (start, end) = librosa.effects.trim(wav, top_db=top_db, frame_length=frame_length, hop_length=hop_length)
    return int(start), int(end)


def trim_silence(wav: np.ndarray, top_db: float = 40.0, frame_length: int = 1024, hop_length: int = 256) -> np.ndarray:
    """Cut leading and trailing audio quieter than ``top_db`` below the peak."""
    start, end = speech_bounds(wav, top_db, frame_length, hop_length)
    return wav[start:end]


def edge_bounds(wav: np.ndarray, audio: AudioConfig) -> tuple[int, int, int]:
    """How :func:`edge_silence` cuts ``wav``: ``[start, end)`` samples kept and the samples of
    silence put before them (so sample ``i`` of ``wav`` lands at ``i - start + lead``)."""
    start, end = (speech_bounds(wav, audio.trim_top_db, audio.win_length, audio.hop_length) if audio.trim_silence
                  else (0, len(wav)))
    return start, end, int(round(audio.leading_silence * audio.sample_rate))


def edge_silence(wav: np.ndarray, audio: AudioConfig) -> np.ndarray:
    """The silence at an utterance's edges as the features define it: trimmed to the speech (when
    ``audio.trim_silence``), then ``audio.leading_silence`` seconds of silence put before it."""
    start, end, lead = edge_bounds(wav, audio)
    wav = wav[start:end]
    return np.concatenate([np.zeros(lead, dtype=wav.dtype), wav]) if lead else wav


def peak_normalize(wav: np.ndarray, peak: float = 0.95) -> np.ndarray:
    """Scale so that the largest absolute sample equals ``peak`` (silence is left alone)."""
    top = float(np.abs(wav).max()) if wav.size else 0.0
    return wav if top == 0.0 else (wav * (peak / top)).astype(np.float32)
