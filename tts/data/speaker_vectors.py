"""Per-utterance d-vectors of a corpus's recordings (:mod:`tts.audio.speaker_encoder`), the external
speaker vectors a model with ``model.speakers.vectors: ge2e`` trains on, cached beside the features.

The cache, ``<root>/features/speaker_vectors_ge2e.npz``, holds the ids, their vectors ``(N, 256)``
and each recording's size and modification time: a recording that changed is embedded again, and
an utterance not yet embedded is added, so the cache grows with the splits asked for.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tts.audio import load_wav
from tts.audio.speaker_encoder import DIM, SpeakerEmbedder
from tts.data.corpus import read_metadata
from tts.errors import TTSError

CACHE_NAME = "speaker_vectors_ge2e.npz"


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


def utterance_vectors(root: str | Path, ids: list[str], progress: bool = True) -> dict[str, np.ndarray]:
    """Utterance id → its recording's d-vector ``(256,)`` for each of ``ids``, from the cache or
    embedded now (and then cached)."""
    from tqdm import tqdm

    root = Path(root)
    wavs = {u.id: u.wav_path(root) for u in read_metadata(root)}
    missing = [i for i in ids if i not in wavs]
    if missing:
        raise TTSError(f"{len(missing)} utterance(s) are not in {root}/metadata.csv (first: {missing[0]})")
    cache = root / "features" / CACHE_NAME
    known: dict[str, tuple[np.ndarray, tuple[int, int]]] = {}
    if cache.is_file():
        with np.load(cache) as stored:
            for uid, vector, stamp in zip(stored["ids"], stored["vectors"], stored["stamps"]):
                known[str(uid)] = (vector, (int(stamp[0]), int(stamp[1])))
    todo = [i for i in ids if i not in known or known[i][1] != _stamp(wavs[i])]
    if todo:
        embedder = SpeakerEmbedder()
        for uid in tqdm(todo, desc="speaker vectors", unit="utt", disable=not progress):
            wav, sample_rate = load_wav(wavs[uid])
            known[uid] = (embedder.embed(wav, sample_rate).astype(np.float32), _stamp(wavs[uid]))
        cache.parent.mkdir(parents=True, exist_ok=True)
        names = sorted(known)
        partial = cache.with_suffix(".tmp.npz")
        np.savez(partial, ids=np.array(names), vectors=np.stack([known[n][0] for n in names]).reshape(-1, DIM),
                 stamps=np.array([known[n][1] for n in names], dtype=np.int64))
        partial.replace(cache)
    return {uid: known[uid][0] for uid in ids}


def speaker_centroids(vectors: dict[str, np.ndarray], speaker_of: dict[str, str]) -> dict[str, np.ndarray]:
    """Each speaker's mean d-vector over its utterances in ``vectors``, at unit length ``(256,)``."""
    grouped: dict[str, list[np.ndarray]] = {}
    for uid, vector in vectors.items():
        grouped.setdefault(speaker_of[uid], []).append(vector)
    centroids = {}
    for name, group in grouped.items():
        mean = np.mean(group, axis=0)
        centroids[name] = (mean / max(float(np.linalg.norm(mean)), 1e-9)).astype(np.float32)
    return centroids
