"""Feature cache: log-mels (float16 ``.npy``) and token ids for every utterance of a corpus.

The cache lives in ``<root>/features/<key>/`` where ``key`` hashes every audio and text
setting that changes the features, so a changed setting never reuses stale features. Inside it,
each utterance is keyed by its content (its ``metadata.csv`` line, its wav's size and
modification time, and the length limits), so a rerun recomputes exactly the utterances that
were edited or added and drops the deleted ones::

    settings.json     the settings the key was made from
    manifest.jsonl    one line per kept utterance: id, key, n_frames, n_tokens, seconds, normalized text
    mels/<id>.npy     (n_mels, T_mel) float16
    ids/<id>.npy      (T_text,) int16
    rejected.jsonl    id, key and reason of every utterance skipped (rejected.tsv: the same for people)
    stats.json        count, hours, frames and tokens per utterance, mel mean/std

The manifest is written last: while an update runs (or after it was killed) there is none, and
the next run recomputes everything.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tts.config import AudioConfig, DataConfig, ExperimentConfig, TextConfig
from tts.data.corpus import Utterance, read_metadata
from tts.data.workers import share_out, stop_signals_raise
from tts.errors import TTSError

log = logging.getLogger(__name__)
FEATURE_VERSION = 1


def audio_settings(audio: AudioConfig) -> dict[str, Any]:
    """The audio settings that determine the cached mels (Griffin-Lim settings excluded)."""
    keys = ["sample_rate", "n_fft", "hop_length", "win_length", "n_mels", "fmin", "fmax", "log_floor",
            "trim_silence", "trim_top_db"]
    # options added later enter the key only when set, so caches made before them stay valid
    if audio.leading_silence:
        keys.append("leading_silence")
    return {k: getattr(audio, k) for k in keys}


def feature_settings(audio: AudioConfig, text: TextConfig) -> dict[str, Any]:
    """The settings that determine the cached features."""
    from tts.text import FRONTEND_REVISION, SymbolInventory

    text_settings: dict[str, Any] = {"mode": text.mode, "add_eos": text.add_eos, "frontend": FRONTEND_REVISION}
    if text.add_bos:
        text_settings["add_bos"] = True
    if text.lexicon:  # its content, not its name, changes the ids
        from tts.text.lexicon import load_lexicon

        text_settings["lexicon"] = sorted(load_lexicon(text.lexicon).items())
    return {"version": FEATURE_VERSION, "audio": audio_settings(audio), "text": text_settings,
            "symbols": SymbolInventory.for_text(text).symbols}


def feature_dir(root: str | Path, audio: AudioConfig, text: TextConfig) -> Path:
    blob = json.dumps(feature_settings(audio, text), sort_keys=True).encode()
    return Path(root) / "features" / hashlib.sha1(blob).hexdigest()[:12]


def find_mel_cache(root: str | Path, audio: AudioConfig) -> tuple[Path, AudioConfig]:
    """The newest complete feature cache of the corpus at ``root`` whose mels were made with
    ``audio``'s mel settings (:data:`MEL_FIELDS`; whatever its text settings: a vocoder reads only
    the mels), and the audio settings it was made with (its trimming included)."""
    candidates = sorted(Path(root, "features").glob("*/settings.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for settings in candidates:
        stored = json.loads(settings.read_text())
        if stored.get("version") != FEATURE_VERSION or not (settings.parent / "manifest.jsonl").is_file():
            continue
        made_with = dataclasses.replace(audio, **stored["audio"])
        if not audio.mel_differences(made_with):
            return settings.parent, made_with
    raise TTSError(f"no features with these mel settings in {Path(root) / 'features'}: compute them with "
                   f"'tts features --data {root} --config <acoustic config with the same audio section>'")


@dataclass
class _Result:
    id: str
    ok: bool
    reason: str = ""
    key: str = ""
    n_frames: int = 0
    n_tokens: int = 0
    seconds: float = 0.0
    normalized: str = ""
    mel_sum: np.ndarray | None = None
    mel_sq_sum: np.ndarray | None = None


_WORKER: dict[str, Any] = {}


def _prepare(audio: AudioConfig, text: TextConfig, root: str, out: str, max_frames: int, max_tokens: int) -> None:
    """Load what :func:`_process` needs (in a worker, or in this process without workers)."""
    import torch

    from tts.audio import MelSpectrogram
    from tts.text import Tokenizer

    torch.set_num_threads(1)
    _WORKER.update(audio=audio, mel=MelSpectrogram(audio), tokenizer=Tokenizer.for_config(text),
                   root=Path(root), out=Path(out), max_frames=max_frames, max_tokens=max_tokens)


def _process(utt: Utterance) -> _Result:
    import soundfile as sf
    import torch

    from tts.audio import edge_silence
    from tts.audio.io import to_mono

    w = _WORKER
    audio: AudioConfig = w["audio"]
    path = utt.wav_path(w["root"])
    if not utt.normalized.strip():
        return _Result(utt.id, False, "empty transcript")
    if not path.is_file():
        return _Result(utt.id, False, f"missing wav {path}")
    try:
        wav, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except Exception as exc:  # noqa: BLE001 - any decoding failure means a corrupt file
        return _Result(utt.id, False, f"corrupt wav ({str(exc).splitlines()[0]})")
    if sr != audio.sample_rate:
        return _Result(utt.id, False, f"sample rate {sr} Hz, expected {audio.sample_rate} Hz")
    if not np.isfinite(wav).all():
        return _Result(utt.id, False, "the wav holds NaN or infinite samples")
    wav = edge_silence(to_mono(wav, str(path)), audio)
    if len(wav) < audio.win_length:
        return _Result(utt.id, False, "audio shorter than one window")
    n_frames = len(wav) // audio.hop_length + 1
    if n_frames > w["max_frames"]:
        return _Result(utt.id, False, f"{n_frames} mel frames > max_mel_frames {w['max_frames']}")
    try:
        tokens = w["tokenizer"].encode_verbose(utt.normalized)
    except TTSError as exc:
        return _Result(utt.id, False, f"text: {exc}")
    if len(tokens.ids) > w["max_tokens"]:
        return _Result(utt.id, False, f"{len(tokens.ids)} tokens > max_text_tokens {w['max_tokens']}")
    mel = w["mel"](torch.from_numpy(wav)).numpy()
    np.save(w["out"] / "mels" / f"{utt.id}.npy", mel.astype(np.float16))
    np.save(w["out"] / "ids" / f"{utt.id}.npy", np.asarray(tokens.ids, dtype=np.int16))
    return _Result(utt.id, True, n_frames=n_frames, n_tokens=len(tokens.ids), seconds=len(wav) / sr,
                   normalized=tokens.normalized, mel_sum=mel.sum(axis=1),
                   mel_sq_sum=(mel.astype(np.float64) ** 2).sum(axis=1))


def utterance_key(utt: Utterance, root: Path, data: DataConfig) -> str:
    """What an utterance's cached features depend on besides the cache's settings."""
    path = utt.wav_path(root)
    stat = path.stat() if path.is_file() else None
    blob = [utt.id, utt.text, utt.normalized, stat.st_size if stat else None, stat.st_mtime_ns if stat else None,
            data.max_mel_frames, data.max_text_tokens]
    return hashlib.sha1(json.dumps(blob).encode()).hexdigest()[:16]


def _cached_results(out: Path) -> dict[str, _Result]:
    """The results a complete cache holds (kept and rejected), with their keys; none for an incomplete one."""
    if not (out / "manifest.jsonl").is_file() or not (out / "rejected.jsonl").is_file():
        return {}
    results = {}
    for entry in read_manifest(out):
        if "key" not in entry:
            return {}  # a cache from before per-utterance keys: recompute it
        mel = np.load(out / "mels" / f"{entry['id']}.npy").astype(np.float64)
        results[entry["id"]] = _Result(entry["id"], True, key=entry["key"], n_frames=entry["n_frames"],
                                       n_tokens=entry["n_tokens"], seconds=entry["seconds"], normalized=entry["text"],
                                       mel_sum=mel.sum(axis=1), mel_sq_sum=(mel ** 2).sum(axis=1))
    for line in (out / "rejected.jsonl").read_text().splitlines():
        entry = json.loads(line)
        results[entry["id"]] = _Result(entry["id"], False, entry["reason"], entry["key"])
    return results


def sum_of(arrays: list[np.ndarray | None]) -> np.ndarray:
    """The sum of per-utterance arrays, added one after the other (every one must be set)."""
    total = np.zeros_like(arrays[0])
    for array in arrays:
        assert array is not None
        total = total + array
    return total


def compute_features(root: str | Path, config: ExperimentConfig, num_workers: int = 2,
                     progress: bool = True) -> Path:
    """Compute the feature cache of a corpus, or bring it up to date; returns the cache folder."""
    from tqdm import tqdm

    root = Path(root)
    utterances = read_metadata(root)
    out = feature_dir(root, config.audio, config.text)
    keys = {u.id: utterance_key(u, root, config.data) for u in utterances}
    cached = _cached_results(out)
    reused = {uid: r for uid, r in cached.items() if keys.get(uid) == r.key}
    todo = [u for u in utterances if u.id not in reused]
    gone = [uid for uid in cached if uid not in keys]
    if not todo and not gone:
        log.info("features up to date in %s", out)
        return out
    if cached:
        log.info("features in %s: %d new or changed, %d deleted, %d unchanged", out, len(todo), len(gone), len(reused))
    (out / "manifest.jsonl").unlink(missing_ok=True)  # incomplete until the update is written
    (out / "mels").mkdir(parents=True, exist_ok=True)
    (out / "ids").mkdir(parents=True, exist_ok=True)
    for uid in gone + [u.id for u in todo]:
        (out / "mels" / f"{uid}.npy").unlink(missing_ok=True)
        (out / "ids" / f"{uid}.npy").unlink(missing_ok=True)
    (out / "settings.json").write_text(json.dumps(feature_settings(config.audio, config.text), indent=1))
    init_args = (config.audio, config.text, str(root), str(out), config.data.max_mel_frames, config.data.max_text_tokens)
    results = list(reused.values())
    bar = tqdm(total=len(todo), desc="features", unit="utt", disable=not progress)
    with stop_signals_raise("tts features"):
        for result in share_out(_process, todo, num_workers, _prepare, init_args, chunksize=8):
            results.append(result)
            bar.update()
    bar.close()
    for result in results:
        result.key = keys[result.id]
    _write_outputs(out, results, config.audio)
    return out


def _write_outputs(out: Path, results: list[_Result], audio: AudioConfig) -> None:
    kept = sorted((r for r in results if r.ok), key=lambda r: r.id)
    rejected = sorted((r for r in results if not r.ok), key=lambda r: r.id)
    (out / "rejected.tsv").write_text("".join(f"{r.id}\t{r.reason}\n" for r in rejected))
    (out / "rejected.jsonl").write_text("".join(json.dumps({"id": r.id, "key": r.key, "reason": r.reason}) + "\n"
                                                for r in rejected))
    if not kept:
        raise TTSError(f"no usable utterances: all {len(rejected)} were rejected (see {out / 'rejected.tsv'})")
    frames = np.array([r.n_frames for r in kept])
    tokens = np.array([r.n_tokens for r in kept])
    total = frames.sum()
    mean = sum_of([r.mel_sum for r in kept]) / total
    var = sum_of([r.mel_sq_sum for r in kept]) / total - mean.astype(np.float64) ** 2
    stats = {
        "utterances": len(kept), "rejected": len(rejected), "hours": round(sum(r.seconds for r in kept) / 3600, 4),
        "frames_per_utterance": _summary(frames), "tokens_per_utterance": _summary(tokens),
        "mel_mean": float(mean.mean()), "mel_std": float(np.sqrt(np.maximum(var, 0)).mean()),
        "mel_mean_per_bin": [round(float(v), 4) for v in mean],
        "mel_std_per_bin": [round(float(v), 4) for v in np.sqrt(np.maximum(var, 0))],
        "sample_rate": audio.sample_rate, "hop_length": audio.hop_length,
    }
    (out / "stats.json").write_text(json.dumps(stats, indent=1))
    # the manifest is written last: its presence marks a complete cache
    tmp = out / "manifest.jsonl.tmp"
    tmp.write_text("".join(json.dumps({"id": r.id, "key": r.key, "n_frames": r.n_frames, "n_tokens": r.n_tokens,
                                       "seconds": round(r.seconds, 4), "text": r.normalized}) + "\n" for r in kept))
    os.replace(tmp, out / "manifest.jsonl")
    if rejected:
        log.warning("skipped %d of %d utterances; reasons in %s", len(rejected), len(results), out / "rejected.tsv")


def _summary(values: np.ndarray) -> dict[str, float]:
    return {"min": int(values.min()), "mean": round(float(values.mean()), 1), "max": int(values.max())}


def read_manifest(cache: str | Path) -> list[dict[str, Any]]:
    path = Path(cache) / "manifest.jsonl"
    if not path.is_file():
        raise TTSError(f"no features in {cache}: run 'tts features --data <corpus> --config <yaml>' first")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
