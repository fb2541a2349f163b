"""Mel/audio pairs for training vocoders: random fixed-length segments (training) or whole
utterances (validation), the audio cut exactly as the feature cache's mels were made from it.

Frame ``t`` of a mel is centred on sample ``t · hop``; a segment of frames ``[s, s + F)`` is paired
with samples ``[s · hop, (s + F) · hop)``, so a vocoder learns to turn ``F`` frames into
``F · hop`` samples. The segment of each item is drawn by the batch sampler (a pure function of
seed and epoch), so a resumed run replays the same segments.
"""

from __future__ import annotations

import logging
import random
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import Dataset

from tts.audio import edge_silence, load_wav
from tts.config import AudioConfig
from tts.data.corpus import read_split
from tts.data.dataset import EpochBatchSampler, StopSafeLoader, leave_stop_signals_to_the_trainer
from tts.data.features import read_manifest
from tts.errors import TTSError

log = logging.getLogger(__name__)


class SegmentDataset(Dataset):
    """Items of one split: ``(mel (n_mels, F), wav (F · hop,))``.

    ``dataset[(index, position)]`` cuts the segment starting at ``position`` ∈ [0, 1) of the
    possible starts; ``dataset[index]`` gives the whole utterance (``F = T_mel``, the audio padded
    or cut to ``T_mel · hop``). Mels come from the feature ``cache``, or from ``mel_dir`` (e.g. an
    acoustic model's teacher-forced mels, same names and shapes); audio from the corpus's wavs
    after :func:`edge_silence`, as the cache made them, or from ``wav_dir`` (a teacher vocoder's
    waveforms of these mels, ``<id>.npy`` of ``T_mel · hop`` samples: distillation).
    """

    def __init__(self, cache: str | Path, corpus_root: str | Path, split: str, audio: AudioConfig,
                 segment_frames: int, mel_dir: str | Path | None = None, limit: int | None = None,
                 wav_dir: str | Path | None = None):
        self.cache, self.root, self.audio = Path(cache), Path(corpus_root), audio
        self.mel_dir = Path(mel_dir) if mel_dir is not None else self.cache / "mels"
        self.wav_dir = Path(wav_dir) if wav_dir is not None else None
        self.segment_frames = segment_frames
        manifest = {m["id"]: m for m in read_manifest(cache)}
        self.entries = [manifest[i] for i in read_split(corpus_root, split)[:limit] if i in manifest]
        if not self.entries:
            raise TTSError(f"split '{split}' has no utterances with features in {cache}")

    def __len__(self) -> int:
        return len(self.entries)

    def padding_share(self) -> float:
        """The share of a segment's frames that are padding, on average over the utterances (0:
        every utterance is at least ``segment_frames`` long)."""
        return sum(max(0, self.segment_frames - int(e["n_frames"])) for e in self.entries) / (
            self.segment_frames * len(self.entries))

    def check_segment_length(self, key: str = "vocoder.segment_frames") -> None:
        """Refuse a segment longer than every utterance (training on padding), and warn when over a
        quarter of the frames trained on would be padding, with the numbers."""
        longest = max(int(e["n_frames"]) for e in self.entries)
        padding = self.padding_share()
        if longest < self.segment_frames:
            raise TTSError(f"{key}={self.segment_frames} is longer than every utterance of the split (the longest "
                           f"has {longest} frames): {padding:.0%} of what it trains on would be padding; lower it "
                           f"to at most {longest}")
        if padding > 0.25:
            log.warning("%s=%d: %.0f%% of the frames trained on are padding (utterances shorter than a segment); "
                        "a shorter segment trains on more speech", key, self.segment_frames, 100 * padding)

    def utterance_id(self, index: int) -> str:
        return self.entries[index]["id"]

    def _mel(self, uid: str) -> np.ndarray:
        path = self.mel_dir / f"{uid}.npy"
        if not path.is_file():
            raise TTSError(f"{path} is missing: recompute the mels of {self.mel_dir}")
        return np.load(path).astype(np.float32)

    def _wav(self, uid: str, n_frames: int) -> np.ndarray:
        if self.wav_dir is not None:
            wav = np.load(self.wav_dir / f"{uid}.npy").astype(np.float32)
            if len(wav) != n_frames * self.audio.hop_length:
                raise TTSError(f"{self.wav_dir / uid}.npy holds {len(wav)} samples, not the {n_frames} frames "
                               f"x {self.audio.hop_length} of its mel: delete {self.wav_dir} to remake it")
            return wav
        path = self.root / "wavs" / f"{uid}.wav"
        wav, sr = load_wav(path)
        wav = edge_silence(wav, self.audio)
        if sr != self.audio.sample_rate or len(wav) // self.audio.hop_length + 1 != n_frames:
            raise TTSError(f"{path} no longer matches its cached features ({n_frames} frames): "
                           f"recompute them with 'tts features'")
        return wav

    def __getitem__(self, key: int | tuple[int, float]) -> tuple[torch.Tensor, torch.Tensor]:
        index, position = key if isinstance(key, tuple) else (key, None)
        entry = self.entries[index]
        mel = self._mel(entry["id"])
        wav = self._wav(entry["id"], entry["n_frames"])
        hop = self.audio.hop_length
        frames = mel.shape[1] if position is None else self.segment_frames
        if mel.shape[1] < frames:  # a short utterance: pad with silence
            mel = np.pad(mel, ((0, 0), (0, frames - mel.shape[1])), constant_values=self.audio.silence)
        start = 0 if position is None else int(position * (mel.shape[1] - frames + 1))
        segment = wav[start * hop:(start + frames) * hop]
        segment = np.pad(segment, (0, frames * hop - len(segment)))
        return torch.from_numpy(mel[:, start:start + frames].copy()), torch.from_numpy(segment.copy())


class SegmentBatchSampler(EpochBatchSampler):
    """``batch_size`` random ``(index, position)`` keys at a time; every utterance once per epoch
    (the last incomplete batch dropped)."""

    def __init__(self, n_items: int, batch_size: int, seed: int = 0, rank: int = 0, world_size: int = 1):
        if n_items < batch_size * world_size:
            raise TTSError(f"{n_items} training utterances cannot fill one batch of vocoder.batch_size="
                           f"{batch_size} per process")
        super().__init__(seed, True, rank, world_size)
        self.n_items, self.batch_size = n_items, batch_size

    def epoch_batches(self, rng: random.Random) -> list[list[tuple[int, float]]]:  # type: ignore[override]
        order = list(range(self.n_items))
        rng.shuffle(order)
        keys = [(index, rng.random()) for index in order]
        return [keys[i:i + self.batch_size] for i in range(0, len(keys) - self.batch_size + 1, self.batch_size)]


def collate_segments(items: list[tuple[torch.Tensor, torch.Tensor]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack equal-length segments: mels ``(B, n_mels, F)``, wavs ``(B, 1, F · hop)``."""
    return torch.stack([m for m, _ in items]), torch.stack([w for _, w in items]).unsqueeze(1)


def segment_loader(dataset: SegmentDataset, batch_size: int, num_workers: int, seed: int, rank: int = 0,
                   world_size: int = 1) -> StopSafeLoader:
    sampler = SegmentBatchSampler(len(dataset), batch_size, seed, rank, world_size)
    return StopSafeLoader(dataset, batch_sampler=sampler, collate_fn=collate_segments, num_workers=num_workers,
                      persistent_workers=False, worker_init_fn=leave_stop_signals_to_the_trainer)
