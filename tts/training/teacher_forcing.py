"""Ground-truth-aligned mels: what an acoustic model predicts for each recording when it is fed
the recording's own previous frames (teacher forcing). A vocoder fine-tuned on them, paired
with the real audio, learns to undo the acoustic model's smoothing (Shen et al. 2018)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import torch

from tts import checkpoint
from tts.config import AudioConfig, DataConfig
from tts.data import FeatureDataset, batch_loader, feature_dir, read_manifest
from tts.errors import TTSError


def _stamp(path: Path, step: int, cache: Path, splits: tuple[str, ...]) -> dict:
    """What names a checkpoint's teacher-forced mels: the file (path, size, modification time),
    its step, the feature cache and the splits."""
    stat = path.stat()
    return {"checkpoint": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "step": step,
            "cache": cache.name, "splits": list(splits)}


@torch.no_grad()
def teacher_forced_mels(acoustic_checkpoint: str | Path, corpus_root: str | Path, audio: AudioConfig,
                        splits: tuple[str, ...] = ("train", "val"), device: str | torch.device = "cpu",
                        progress: bool = True) -> tuple[Path, Path, AudioConfig]:
    """The teacher-forced mels of an acoustic checkpoint for every utterance of ``splits``, as
    ``<id>.npy`` files (float16 ``(n_mels, T_mel)``, the postnet output cut to the recording's
    length) in a folder of the model's feature cache; returns that folder, the feature cache and
    the audio settings it was made with.

    The folder is named after the checkpoint file (path, size, modification time, step), so the
    mels are computed once per checkpoint and reused; it appears complete or not at all. The
    checkpoint's mel settings must be ``audio``'s.
    """
    from tqdm import tqdm

    loaded = checkpoint.load(acoustic_checkpoint, device)
    differing = audio.mel_differences(loaded.audio)
    if differing:
        raise TTSError(f"vocoder.acoustic_checkpoint {acoustic_checkpoint} makes mels with other audio settings "
                       f"than this vocoder's (vocoder vs acoustic model: {'; '.join(differing)})")
    cache = feature_dir(corpus_root, loaded.config.audio, loaded.config.text)
    read_manifest(cache)  # a clear line when the acoustic model's features are missing
    stamp = _stamp(loaded.path, loaded.step, cache, splits)
    out_dir = cache / "teacher_forced" / hashlib.sha1(json.dumps(stamp, sort_keys=True).encode()).hexdigest()[:12]
    if (out_dir / "source.json").is_file():
        return out_dir, cache, loaded.audio
    tmp = out_dir.with_name(f".{out_dir.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        model = loaded.model
        data = DataConfig(max_batch_size=16, num_workers=0)
        for split in splits:
            dataset = FeatureDataset(cache, corpus_root, split, speakers=model.speaker_names)
            loader = batch_loader(dataset, data, model.reduction_factor, data.max_frames_per_batch, seed=0,
                                  shuffle=False)
            for batch in tqdm(loader, desc=f"teacher-forced mels ({split})", unit="batch", disable=not progress):
                batch = batch.to(device)
                mels = model(batch).mel_after.float()
                if not bool(torch.isfinite(mels).all()):
                    raise TTSError(f"{loaded.path} predicts non-finite mels for {', '.join(batch.utterance_ids)}: "
                                   f"use another checkpoint")
                for i, uid in enumerate(batch.utterance_ids):
                    mel = mels[i, :, :int(batch.mel_lengths[i])]
                    np.save(tmp / f"{uid}.npy", mel.cpu().numpy().astype(np.float16))
        (tmp / "source.json").write_text(json.dumps(stamp, indent=1))
        os.replace(tmp, out_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out_dir, cache, loaded.audio
