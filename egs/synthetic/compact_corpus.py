"""A corpus's feature cache as one small file that an accelerator machine can be sent (its
transfer limit is 64 MiB), and the corpus rebuilt from it there, ready for `tts train`.

`pack` keeps the splits it is told (train and val for training), quantizes the cached log-mels
(float16, about 53 kB an utterance) to 8 bits over their global range (largest error half a step,
0.027 on the synthetic corpus's 13.6-wide range), stores them as differences along time and
compresses the whole with xz: 3,000 utterances take about 52 MB instead of 160. The token ids,
the cache's settings and statistics, metadata, splits and the Festival timings of the kept
utterances go along; of the audio only the validation utterances travel (FLAC), since the true
alignment needs their trimming; training utterances get empty stand-in wavs.

With `--mels-from CKPT` the mels that travel are that acoustic model's teacher-forced mels in
place of the recordings' (what a student vocoder learns from: egs/synthetic/gpu_student.sh), and
`--limit N` keeps the first N utterances of each split.

`unpack` writes the corpus back (mels as float16 again) and re-keys the cache for the stand-in
wavs with the project's own `utterance_key`, so `tts train` finds its features up to date.

    python egs/synthetic/compact_corpus.py pack --data data/synthetic --config configs/attention_study.yaml \
        --splits train val --audio-splits val --out .gpu/synthetic.tar.xz
    python egs/synthetic/compact_corpus.py unpack --archive .gpu/synthetic.tar.xz --config configs/attention_study.yaml \
        --out data/synthetic
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sys
import tarfile
from pathlib import Path

import numpy as np

from tts.config.experiment import load_config
from tts.data.corpus import read_metadata, read_split, write_metadata
from tts.data.features import feature_dir, utterance_key
from tts.data.timings import timings_path


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def pack(data: Path, config: Path, splits: list[str], audio_splits: list[str], out: Path, bits: int,
         mels_from: Path | None = None, limit: int | None = None) -> None:
    """Write ``out`` (a .tar.xz) holding the features of ``splits`` (the first ``limit`` utterances
    of each) of the corpus at ``data``, its mels (or ``mels_from``'s teacher-forced ones) quantized
    to ``bits`` bits; timings and audio travel for ``audio_splits`` only."""
    import soundfile as sf

    cfg = load_config(config)
    cache = feature_dir(data, cfg.audio, cfg.text)
    mel_dir = cache / "mels"
    if mels_from is not None:
        from tts.training.teacher_forcing import teacher_forced_mels

        mel_dir = teacher_forced_mels(mels_from, data, cfg.audio)[0]
    split_ids = {name: read_split(data, name)[:limit] for name in splits}
    keep = {uid for ids in split_ids.values() for uid in ids}
    manifest = [json.loads(line) for line in (cache / "manifest.jsonl").read_text().splitlines() if line.strip()]
    manifest = [entry for entry in manifest if entry["id"] in keep]
    mels = [np.load(mel_dir / f"{entry['id']}.npy").astype(np.float32) for entry in manifest]
    levels = 2 ** bits - 1
    low = float(min(m.min() for m in mels))
    high = float(max(m.max() for m in mels))
    codes = [np.round((m - low) / (high - low) * levels).astype(np.int16) for m in mels]
    deltas = np.concatenate([np.diff(c, axis=1, prepend=0).astype(np.int8).ravel() for c in codes])
    ids = [np.load(cache / "ids" / f"{entry['id']}.npy") for entry in manifest]
    index = {"low": low, "high": high, "bits": bits, "cache": cache.name,
             "items": [{"id": e["id"], "n_mels": int(c.shape[0]), "n_frames": int(c.shape[1]), "n_ids": len(i)}
                       for e, c, i in zip(manifest, codes, ids)]}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    with tarfile.open(tmp, "w:xz", preset=6) as tar:
        _add_bytes(tar, "index.json", json.dumps(index).encode())
        _add_bytes(tar, "mel_deltas.i8", deltas.tobytes())
        _add_bytes(tar, "ids.i16", np.concatenate(ids).astype(np.int16).tobytes())
        _add_bytes(tar, "manifest.jsonl", "".join(json.dumps(e) + "\n" for e in manifest).encode())
        for name in ("settings.json", "stats.json"):
            tar.add(cache / name, arcname=name)
        kept = [u for u in read_metadata(data) if u.id in keep]
        _add_bytes(tar, "metadata.csv", "".join(f"{u.id}|{u.text}|{u.normalized}\n" for u in kept).encode())
        for name, ids in split_ids.items():
            _add_bytes(tar, f"splits/{name}.txt", "".join(f"{uid}\n" for uid in ids).encode())
        for uid in sorted({u for name in audio_splits for u in read_split(data, name)}):
            if timings_path(data, uid).is_file():
                tar.add(timings_path(data, uid), arcname=f"timings/{uid}.tsv")
            wav, sr = sf.read(Path(data) / "wavs" / f"{uid}.wav", dtype="int16")
            flac = io.BytesIO()
            sf.write(flac, wav, sr, format="FLAC")
            _add_bytes(tar, f"wavs/{uid}.wav", flac.getvalue())  # FLAC inside: soundfile reads by content
    tmp.replace(out)
    worst = max(float(np.abs(c / levels * (high - low) + low - m).max()) for c, m in zip(codes, mels))
    print(f"packed {len(manifest)} utterances of {cache} into {out} ({out.stat().st_size / 1e6:.1f} MB; "
          f"largest mel error {worst:.4f})")


def unpack(archive: Path, config: Path, out: Path) -> None:
    """Rebuild a trainable corpus at ``out`` from a :func:`pack` archive."""
    if out.exists():
        sys.exit(f"error: {out} exists: unpack into a new folder")
    cfg = load_config(config)
    staging = out.with_name(out.name + ".part")
    shutil.rmtree(staging, ignore_errors=True)
    with tarfile.open(archive, "r:xz") as tar:
        tar.extractall(staging, filter="data")
    index = json.loads((staging / "index.json").read_text())
    cache = staging / "features" / index["cache"]
    (cache / "mels").mkdir(parents=True)
    (cache / "ids").mkdir()
    deltas = np.fromfile(staging / "mel_deltas.i8", dtype=np.int8)
    all_ids = np.fromfile(staging / "ids.i16", dtype=np.int16)
    scale = (index["high"] - index["low"]) / (2 ** index["bits"] - 1)
    at_mel = at_id = 0
    for item in index["items"]:
        size = item["n_mels"] * item["n_frames"]
        step = deltas[at_mel:at_mel + size].view(np.uint8).reshape(item["n_mels"], item["n_frames"])
        codes = np.cumsum(step, axis=1, dtype=np.uint8)  # differences wrapped to a byte: sums modulo 256
        np.save(cache / "mels" / f"{item['id']}.npy", (codes * scale + index["low"]).astype(np.float16))
        np.save(cache / "ids" / f"{item['id']}.npy", all_ids[at_id:at_id + item["n_ids"]])
        at_mel += size
        at_id += item["n_ids"]
    for name in ("settings.json", "stats.json", "manifest.jsonl"):
        (staging / name).replace(cache / name)
    (staging / "wavs").mkdir(exist_ok=True)
    utterances = read_metadata(staging)
    for utt in utterances:
        utt.wav_path(staging).touch()  # a stand-in where no audio travelled
    keys = {u.id: utterance_key(u, staging, cfg.data) for u in utterances}
    manifest = [json.loads(line) for line in (cache / "manifest.jsonl").read_text().splitlines()]
    (cache / "manifest.jsonl").write_text("".join(json.dumps({**e, "key": keys[e["id"]]}) + "\n" for e in manifest))
    (cache / "rejected.jsonl").write_text("")
    for name in ("index.json", "mel_deltas.i8", "ids.i16"):
        (staging / name).unlink()
    write_metadata(staging, utterances)
    staging.rename(out)
    print(f"unpacked {len(manifest)} utterances into {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--splits", nargs="+", default=["train", "val"])
    p.add_argument("--audio-splits", nargs="*", default=["val"], help="splits whose audio and timings travel")
    p.add_argument("--bits", type=int, choices=range(2, 9), default=8, help="mel quantization (8: error 0.027)")
    p.add_argument("--mels-from", type=Path, help="an acoustic checkpoint: its teacher-forced mels travel instead")
    p.add_argument("--limit", type=int, help="only the first N utterances of each split")
    p.add_argument("--out", type=Path, required=True)
    u = sub.add_parser("unpack")
    u.add_argument("--archive", type=Path, required=True)
    u.add_argument("--config", type=Path, required=True)
    u.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "pack":
        pack(args.data, args.config, args.splits, args.audio_splits, args.out, args.bits, args.mels_from, args.limit)
    else:
        unpack(args.archive, args.config, args.out)


if __name__ == "__main__":
    main()
