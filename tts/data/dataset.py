"""Dataset over the feature cache, padding collate, and the length-bucketing batch sampler."""

from __future__ import annotations

import json
import math
import random
import signal
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Iterator

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, Sampler

from tts.config import DataConfig, ExperimentConfig
from tts.config.data import Oversampling
from tts.data.corpus import corpus_speakers, read_split
from tts.data.features import feature_dir, read_manifest
from tts.data.workers import STOP_SIGNALS
from tts.errors import TTSError


@dataclass
class Batch:
    """A padded batch. Shapes: ids ``(B, T_text)``, mels ``(B, n_mels, T_mel)`` with ``T_mel``
    a multiple of r, stop_targets ``(B, T_mel)`` (1 from each item's last frame on),
    text_lengths / mel_lengths ``(B,)``; a multi-speaker corpus's speakers ``(B,)`` (indices into
    the model's table) and, training a ``ge2e`` model, speaker_vectors ``(B, 256)`` (each item's
    recording's d-vector)."""

    ids: torch.Tensor
    text_lengths: torch.Tensor
    mels: torch.Tensor
    mel_lengths: torch.Tensor
    stop_targets: torch.Tensor
    utterance_ids: list[str]
    speakers: torch.Tensor | None = None
    speaker_vectors: torch.Tensor | None = None

    def to(self, device: torch.device | str) -> "Batch":
        moved = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in moved.items():
            if isinstance(value, torch.Tensor):
                moved[name] = value.to(device, non_blocking=True)
        return Batch(**moved)

    def subset(self, keep: torch.Tensor) -> "Batch":
        """The items where ``keep`` ``(B,)`` bool is True (padding left as it is)."""
        indices = torch.nonzero(keep).flatten()
        picked = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in picked.items():
            if isinstance(value, torch.Tensor):
                picked[name] = value[indices.to(value.device)]
            elif value is not None:
                picked[name] = [value[i] for i in indices.tolist()]
        return Batch(**picked)

    @property
    def text_mask(self) -> torch.Tensor:
        """``(B, T_text)`` True on real tokens."""
        return torch.arange(self.ids.shape[1], device=self.ids.device)[None] < self.text_lengths[:, None]

    @property
    def mel_mask(self) -> torch.Tensor:
        """``(B, T_mel)`` True on real frames."""
        return torch.arange(self.mels.shape[2], device=self.mels.device)[None] < self.mel_lengths[:, None]

    @property
    def n_frames(self) -> int:
        return int(self.mel_lengths.sum())


class FeatureDataset(Dataset):
    """Items of one split from a feature cache: ``(id, ids (T_text,), mel (n_mels, T_mel))``.
    ``pad_value`` is the log-mel of silence under the cache's audio settings. With ``speakers``
    (a multi-speaker model's names, in table order) each batch carries its items' speaker indices,
    read from the corpus's speaker field; once :attr:`speaker_vectors` (utterance id → ``(256,)``)
    is set, each item's own d-vector too."""

    def __init__(self, cache: str | Path, corpus_root: str | Path, split: str, limit: int | None = None,
                 speakers: list[str] | None = None):
        self.cache = Path(cache)
        manifest = {m["id"]: m for m in read_manifest(cache)}
        self.pad_value = math.log(json.loads((self.cache / "settings.json").read_text())["audio"]["log_floor"])
        wanted = read_split(corpus_root, split)[:limit]
        self.entries = [manifest[i] for i in wanted if i in manifest]
        if not self.entries:
            raise TTSError(f"split '{split}' has no utterances with features in {cache}")
        self.speaker_index = speaker_indices(corpus_root, [e["id"] for e in self.entries], speakers) if speakers else None
        self.speaker_vectors: dict[str, np.ndarray] | None = None

    @classmethod
    def of(cls, root: str | Path, config: ExperimentConfig, split: str, limit: int | None = None) -> "FeatureDataset":
        """The split of the corpus at ``root`` in the features ``config`` defines, with its model's speakers."""
        return cls(feature_dir(root, config.audio, config.text), root, split, limit, config.model.speakers.names)

    def __len__(self) -> int:
        return len(self.entries)

    def oversample(self, rules: list[Oversampling]) -> dict[str, int]:
        """Lists each item whose id starts with a rule's prefix ``times`` times in all (the longest
        matching prefix applies; a repeated item keeps its place, so a batch sampler's epoch is
        ``len(self)`` items with the repetitions among them). Returns each prefix's item count before
        repeating; a prefix that matches no item is an error (a typo would otherwise train as if it
        were not there)."""
        by_length = sorted(rules, key=lambda rule: -len(rule.prefix))
        counts = {rule.prefix: 0 for rule in rules}
        repeated = []
        for entry in self.entries:
            rule = next((r for r in by_length if entry["id"].startswith(r.prefix)), None)
            if rule is not None:
                counts[rule.prefix] += 1
            repeated.extend([entry] * (rule.times if rule is not None else 1))
        unmatched = [prefix for prefix, count in counts.items() if count == 0]
        if unmatched:
            raise TTSError(f"config key 'data.oversample': no utterance of this split has an id starting with "
                           f"{', '.join(repr(p) for p in unmatched)}; check the prefix against the corpus's metadata.csv")
        self.entries = repeated
        return counts

    @property
    def frame_lengths(self) -> list[int]:
        return [e["n_frames"] for e in self.entries]

    def collate(self, reduction_factor: int, pad_mels_with: str = "silence") -> "Collate":
        """The :class:`Collate` for this dataset's items at reduction factor r, padding mels with
        silence (the cache's ``log(log_floor)``) or zeros."""
        return Collate(reduction_factor, self.pad_value if pad_mels_with == "silence" else 0.0, self.speaker_index,
                       self.speaker_vectors)

    def __getitem__(self, index: int) -> tuple[str, torch.Tensor, torch.Tensor]:
        uid = self.entries[index]["id"]
        ids = torch.from_numpy(np.load(self.cache / "ids" / f"{uid}.npy").astype(np.int64))
        mel = torch.from_numpy(np.load(self.cache / "mels" / f"{uid}.npy").astype(np.float32))
        return uid, ids, mel


class Collate:
    """Pads a list of dataset items into a :class:`Batch`; T_mel is padded to a multiple of r.

    Padded mel frames hold ``pad_value``, the log-mel of silence (``AudioConfig.silence``), not zero.
    """

    def __init__(self, reduction_factor: int, pad_value: float, speaker_index: dict[str, int] | None = None,
                 speaker_vectors: dict[str, np.ndarray] | None = None):
        if reduction_factor < 1:
            raise TTSError(f"reduction factor must be >= 1, got {reduction_factor}")
        self.r = reduction_factor
        self.pad_value = pad_value
        self.speaker_index = speaker_index
        self.speaker_vectors = speaker_vectors

    def __call__(self, items: list[tuple[str, torch.Tensor, torch.Tensor]]) -> Batch:
        items = sorted(items, key=lambda it: len(it[1]), reverse=True)
        text_lengths = torch.tensor([len(it[1]) for it in items])
        mel_lengths = torch.tensor([it[2].shape[1] for it in items])
        t_mel = int(mel_lengths.max())
        t_mel += (-t_mel) % self.r
        ids = torch.zeros(len(items), int(text_lengths.max()), dtype=torch.long)
        mels = torch.full((len(items), items[0][2].shape[0], t_mel), self.pad_value)
        stop = torch.zeros(len(items), t_mel)
        for i, (_, tokens, mel) in enumerate(items):
            ids[i, : len(tokens)] = tokens
            mels[i, :, : mel.shape[1]] = mel
            stop[i, mel.shape[1] - 1:] = 1.0
        uids = [it[0] for it in items]
        speakers = (torch.tensor([self.speaker_index[uid] for uid in uids]) if self.speaker_index is not None
                    else None)
        vectors = (torch.from_numpy(np.stack([self.speaker_vectors[uid] for uid in uids]))
                   if self.speaker_vectors is not None else None)
        return Batch(ids, text_lengths, mels, mel_lengths, stop, uids, speakers, vectors)


def speaker_indices(corpus_root: str | Path, ids: list[str], speakers: list[str]) -> dict[str, int]:
    """Utterance id → index of its speaker in ``speakers`` (a model's table) for each of ``ids``."""
    speaker_of = corpus_speakers(corpus_root)
    if not speaker_of:
        raise TTSError(f"the model speaks as {len(speakers)} speakers but {corpus_root}/metadata.csv names none: "
                       f"a multi-speaker corpus ends each line in '|speaker'")
    index = {name: i for i, name in enumerate(speakers)}
    unknown = sorted({speaker_of[uid] for uid in ids if speaker_of[uid] not in index})
    if unknown:
        raise TTSError(f"speaker(s) {', '.join(unknown)} of {corpus_root} are not among the model's "
                       f"({', '.join(speakers)})")
    return {uid: index[speaker_of[uid]] for uid in ids}


class EpochBatchSampler(Sampler[list[int]]):
    """Base of the batch samplers: the batches of an epoch are a pure function of (seed, epoch), so a
    resumed run replays them; ``set_epoch(epoch, skip)`` resumes mid-epoch; with ``world_size > 1``
    each rank takes every ``world_size``-th batch (all ranks the same count)."""

    def __init__(self, seed: int, shuffle: bool, rank: int, world_size: int):
        self.seed, self.shuffle, self.rank, self.world_size = seed, shuffle, rank, world_size
        self.epoch = 0
        self.skip = 0

    def epoch_batches(self, rng: random.Random) -> list[list[int]]:
        """Every batch of the epoch, for all ranks, in order."""
        raise NotImplementedError

    def set_epoch(self, epoch: int, skip: int = 0) -> None:
        self.epoch, self.skip = epoch, skip

    def _batches(self) -> list[list[int]]:
        batches = self.epoch_batches(random.Random(self.seed + self.epoch))
        per_rank = len(batches) // self.world_size if self.world_size > 1 else len(batches)
        return batches[self.rank::self.world_size][:per_rank]

    def __iter__(self) -> Iterator[list[int]]:
        yield from self._batches()[self.skip:]

    def __len__(self) -> int:
        return max(len(self._batches()) - self.skip, 0)


class LengthBucketBatchSampler(EpochBatchSampler):
    """Batches of similar length whose padded size stays within a frame budget.

    Indices are shuffled, cut into buckets of ``bucket_size`` items, sorted by length inside
    each bucket and cut into batches so that ``batch_size * longest <= max_frames``; the batch
    order is shuffled too. Without ``shuffle``: sorted by length, always the same batches.
    """

    def __init__(self, lengths: list[int], max_frames: int, max_batch_size: int = 64, seed: int = 0,
                 shuffle: bool = True, bucket_size: int = 512, rank: int = 0, world_size: int = 1):
        if max(lengths) > max_frames:
            raise TTSError(f"max_frames_per_batch {max_frames} is smaller than the longest utterance "
                           f"({max(lengths)} frames): raise it or lower data.max_mel_frames")
        super().__init__(seed, shuffle, rank, world_size)
        self.lengths = lengths
        self.max_frames, self.max_batch_size, self.bucket_size = max_frames, max_batch_size, bucket_size

    def epoch_batches(self, rng: random.Random) -> list[list[int]]:
        order = list(range(len(self.lengths)))
        if self.shuffle:
            rng.shuffle(order)
        else:
            order.sort(key=lambda i: self.lengths[i])
        batches: list[list[int]] = []
        for start in range(0, len(order), self.bucket_size):
            bucket = sorted(order[start:start + self.bucket_size], key=lambda i: self.lengths[i])
            batch: list[int] = []
            for index in bucket:
                longest = self.lengths[index]  # bucket is sorted: the newcomer is the longest
                if batch and ((len(batch) + 1) * longest > self.max_frames or len(batch) >= self.max_batch_size):
                    batches.append(batch)
                    batch = []
                batch.append(index)
            if batch:
                batches.append(batch)
        if self.shuffle:
            rng.shuffle(batches)
        return batches


class RandomBatchSampler(EpochBatchSampler):
    """``batch_size`` items at a time in a random order; the last incomplete batch is dropped
    (NVIDIA/tacotron2's). Without ``shuffle`` (validation): in order, the last batch kept."""

    def __init__(self, n_items: int, batch_size: int, seed: int = 0, shuffle: bool = True, rank: int = 0,
                 world_size: int = 1):
        if n_items < batch_size * world_size and shuffle:
            raise TTSError(f"{n_items} utterances cannot fill one batch of data.batch_size={batch_size} per process")
        super().__init__(seed, shuffle, rank, world_size)
        self.n_items, self.batch_size = n_items, batch_size

    def epoch_batches(self, rng: random.Random) -> list[list[int]]:
        order = list(range(self.n_items))
        if self.shuffle:
            rng.shuffle(order)
        batches = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        if self.shuffle and len(batches[-1]) < self.batch_size:
            batches.pop()
        return batches


def leave_stop_signals_to_the_trainer(worker_id: int) -> None:
    """DataLoader ``worker_init_fn``: a worker ignores SIGINT and SIGTERM. Ctrl-C in a terminal and a
    scheduler's kill reach every process of the job; a worker they ended mid-epoch would crash the
    training process before it could save, whereas the trainer stops at the next step boundary and
    its loaders then end their workers. A worker of a :class:`StopSafeLoader` starts with the two
    blocked and unblocks them here, once they are ignored: one that came meanwhile is dropped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


class StopSafeLoader(DataLoader):
    """A DataLoader whose workers cannot be ended by a stop signal while they start: SIGINT and
    SIGTERM are blocked (held, not lost) in the calling thread while an iteration forks its
    workers, who inherit the block until :func:`leave_stop_signals_to_the_trainer`; the trainer
    receives a signal held meanwhile as soon as the workers are up. (A loader is iterated once
    per epoch, so without this a kill that lands while the next epoch's workers start, before
    they ignore it, took the run down; CI saw it.)"""

    @property
    def batches(self) -> EpochBatchSampler:
        """The loader's batch sampler (every loader here has an :class:`EpochBatchSampler`)."""
        assert isinstance(self.batch_sampler, EpochBatchSampler)
        return self.batch_sampler

    def __iter__(self):
        held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            return super().__iter__()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


def batch_loader(dataset: FeatureDataset, data: DataConfig, r: int, max_frames: int, seed: int, shuffle: bool,
                 rank: int = 0, world_size: int = 1) -> StopSafeLoader:
    """Loader of :class:`Batch` es from the sampler ``data.sampler`` names; without ``shuffle`` the
    batches are a fixed function of the split (validation figures are comparable across runs)."""
    if data.sampler == "random":
        sampler: Sampler = RandomBatchSampler(len(dataset), data.batch_size, seed, shuffle, rank, world_size)
    else:
        sampler = LengthBucketBatchSampler(
            dataset.frame_lengths, max_frames, data.max_batch_size, seed=seed, shuffle=shuffle,
            bucket_size=data.max_batch_size * data.bucket_size_multiplier, rank=rank, world_size=world_size)
    return StopSafeLoader(dataset, batch_sampler=sampler, collate_fn=dataset.collate(r, data.pad_mels_with),
                      num_workers=data.num_workers, generator=torch.Generator().manual_seed(seed),
                      worker_init_fn=leave_stop_signals_to_the_trainer)
