"""A teacher vocoder's waveforms of a corpus's mels, computed once and kept beside the feature
cache: what a student vocoder learns to reproduce (knowledge distillation).

Vocoding every segment again at every step would cost the teacher's forward pass per update
(HiFi-GAN V1 on 16 segments of 32 frames: about 2.6 s on one CPU thread, several times the
student's whole step). The teacher vocodes each whole utterance once instead, so the targets are
also free of the zero padding a teacher would see at the edges of a lone segment.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import torch

from tts.errors import TTSError
from tts.vocoders import NeuralVocoder, Vocoder


def teacher_stamp(option: str) -> dict:
    """What names a teacher: a pretrained name as it is, a checkpoint by its file (path, size,
    modification time), so a retrained teacher gets new waveforms."""
    path = Path(option)
    if not path.is_file():
        return {"teacher": option}
    stat = path.stat()
    return {"teacher": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


@torch.no_grad()
def teacher_waveforms(teacher: Vocoder, option: str, cache: Path, mel_dir: Path, ids: list[str],
                      progress: bool = True) -> Path:
    """The waveforms ``teacher`` makes of the mels ``mel_dir/<id>.npy`` for every id, as
    ``<id>.npy`` (float16, ``T_mel · hop`` samples) in a folder under ``cache/teacher_audio/``;
    returns the folder.

    The folder is named after the teacher (``option``: its name or checkpoint, see
    :func:`teacher_stamp`) and the mel folder, so the waveforms are made once and reused. The work
    is resumable: finished utterances are kept in ``<name>.partial/`` while it runs (each written
    whole or not at all), and the folder takes its final name when every id is there; ids added
    later are vocoded into the finished folder.
    """
    from tqdm import tqdm

    if not isinstance(teacher, NeuralVocoder):
        raise TTSError(f"vocoder.teacher {option!r} is not a neural generator: distil a HiFi-GAN or a Vocos")
    stamp = {**teacher_stamp(option), "mels": str(mel_dir.resolve())}
    name = hashlib.sha1(json.dumps(stamp, sort_keys=True).encode()).hexdigest()[:12]
    final = cache / "teacher_audio" / name
    folder = final if final.is_dir() else final.with_name(f"{name}.partial")
    folder.mkdir(parents=True, exist_ok=True)
    todo = [uid for uid in ids if not (folder / f"{uid}.npy").is_file()]
    for uid in tqdm(todo, desc="teacher waveforms", unit="utt", disable=not progress or not todo):
        mel_path = mel_dir / f"{uid}.npy"
        if not mel_path.is_file():
            raise TTSError(f"{mel_path} is missing: recompute the mels of {mel_dir}")
        mel = torch.from_numpy(np.load(mel_path).astype(np.float32))[None]
        wav = teacher.generate(mel.to(next(teacher.parameters()).device)).squeeze().float().cpu().numpy()
        if not np.isfinite(wav).all():
            raise TTSError(f"the teacher {option!r} makes non-finite audio of {mel_path}: use another teacher")
        tmp = folder / f".{uid}.{os.getpid()}.tmp.npy"
        np.save(tmp, wav.astype(np.float16))
        os.replace(tmp, folder / f"{uid}.npy")
    if folder != final:
        (folder / "source.json").write_text(json.dumps(stamp, indent=1))
        os.replace(folder, final)
    return final
