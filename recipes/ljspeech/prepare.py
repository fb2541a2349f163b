#!/usr/bin/env python3
"""LJSpeech-1.1 in the canonical layout, split as NVIDIA/tacotron2 splits it.

    python recipes/ljspeech/prepare.py --out data/ljspeech                         # download + extract
    python recipes/ljspeech/prepare.py --data-dir /path/LJSpeech-1.1 --out data/ljspeech
    python recipes/ljspeech/prepare.py --data-dir D --out O --split random [--n-val 100 --n-test 500]

The default split is NVIDIA's (``nvidia_filelists.tsv.gz`` next to this file: the ids of their
``filelists/ljs_audio_text_{train,val,test}_filelist.txt``, 12,500 / 100 / 500, with their
normalized texts), so results here can be compared with models trained on it; ids it does not
list go to train with a warning. ``--split random`` draws a seeded random split instead, whose
held-out sizes scale with the corpus (NVIDIA's proportions) unless given.

The download resumes a partial archive (a complete one answers HTTP 416 and counts as done),
checks its SHA-256 once (a stamp file remembers it), and extracts into a temporary folder that is
renamed when complete. With ``--data-dir`` an already extracted copy is used (wavs are linked).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import logging
import os
import shutil
import sys
import tarfile
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tts.data.corpus import make_splits, read_metadata, write_metadata, write_splits  # noqa: E402
from tts.errors import TTSError  # noqa: E402

URL = "https://data.keithito.com/data/speech/LJSpeech-1.1.tar.bz2"
SHA256 = "be1a30453f28eb8dd26af4101ae40cbf2c50413b1bb21936cbcdc6fae3de8aa5"
FILELISTS = Path(__file__).with_name("nvidia_filelists.tsv.gz")
NVIDIA_SIZES = {"train": 12500, "val": 100, "test": 500}
SEED = 1234
log = logging.getLogger("ljspeech")


def nvidia_filelists() -> dict[str, tuple[str, str]]:
    """id → (split, normalized text) of NVIDIA's filelists."""
    with gzip.open(FILELISTS, "rt", encoding="utf-8") as fh:
        rows = (line.rstrip("\n").split("\t", 2) for line in fh)
        return {uid: (split, text) for uid, split, text in rows}


def download(url: str, dest: Path, sha256: str) -> Path:
    """Download with a progress bar, resuming a partial file; verify the checksum once."""
    from tqdm import tqdm

    partial = dest.with_suffix(dest.suffix + ".part")
    if not dest.is_file():
        done = partial.stat().st_size if partial.is_file() else 0
        request = urllib.request.Request(url, headers={"Range": f"bytes={done}-"} if done else {})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                if done and response.status != 206:
                    done = 0  # server ignored the range: start over
                total = int(response.headers.get("Content-Length", 0)) + done
                with open(partial, "ab" if done else "wb") as fh, tqdm(
                        total=total, initial=done, unit="B", unit_scale=True, desc=dest.name) as bar:
                    while chunk := response.read(1 << 20):
                        fh.write(chunk)
                        bar.update(len(chunk))
        except urllib.error.HTTPError as exc:
            if exc.code != 416 or not done:  # 416: the range starts at the end, the file is complete
                raise TTSError(f"cannot download {url} (HTTP {exc.code}); download it by hand and pass --data-dir") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise TTSError(f"cannot download {url} ({exc}); download it by hand and pass --data-dir") from None
        os.replace(partial, dest)
    verify(dest, sha256)
    return dest


def verify(archive: Path, sha256: str) -> None:
    """SHA-256 of the archive, computed once: a stamp with its size and mtime saves the next runs
    the 2.6 GB read."""
    stamp = archive.with_suffix(archive.suffix + ".sha256-ok")
    signature = f"{sha256} {archive.stat().st_size} {archive.stat().st_mtime_ns}"
    if stamp.is_file() and stamp.read_text().strip() == signature:
        return
    digest = hashlib.sha256()
    with open(archive, "rb") as fh:
        while chunk := fh.read(1 << 22):
            digest.update(chunk)
    if digest.hexdigest() != sha256:
        archive.rename(archive.with_suffix(".corrupt"))
        raise TTSError(f"{archive} has the wrong SHA-256 (moved aside); run again to download afresh")
    stamp.write_text(signature + "\n")


def extract(archive: Path, out: Path) -> Path:
    """Extract into a temporary folder, renamed to ``LJSpeech-1.1`` once complete (an interrupted
    extraction is redone, never taken for a finished one)."""
    final = out / "LJSpeech-1.1"
    if final.is_dir():
        return final
    tmp = out / ".LJSpeech-1.1.extracting"
    shutil.rmtree(tmp, ignore_errors=True)
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        unsafe = [m.name for m in members if m.name.startswith("/") or ".." in Path(m.name).parts
                  or not (m.isfile() or m.isdir())]
        if unsafe:
            raise TTSError(f"{archive} holds unsafe paths ({unsafe[0]}): not extracting it")
        tar.extractall(tmp, members=members)
    os.replace(tmp / "LJSpeech-1.1", final)
    tmp.rmdir()
    return final


def check_layout(data_dir: Path) -> None:
    """Refuse a folder that is not LJSpeech-shaped, saying what is missing."""
    if not data_dir.is_dir():
        raise TTSError(f"--data-dir {data_dir} is not a folder")
    if not (data_dir / "metadata.csv").is_file():
        raise TTSError(f"--data-dir {data_dir} has no metadata.csv: give the extracted LJSpeech-1.1 folder")
    if not (data_dir / "wavs").is_dir():
        raise TTSError(f"--data-dir {data_dir} has no wavs/ folder: give the extracted LJSpeech-1.1 folder")


def nvidia_split(ids: list[str]) -> dict[str, list[str]]:
    """NVIDIA's assignment of every listed id; unlisted ids go to train (with a warning)."""
    listed = nvidia_filelists()
    splits: dict[str, list[str]] = {"train": [], "val": [], "test": []}
    unlisted = 0
    for uid in ids:
        if uid in listed:
            splits[listed[uid][0]].append(uid)
        else:
            splits["train"].append(uid)
            unlisted += 1
    if unlisted:
        log.warning("%d of %d ids are not in NVIDIA's filelists; they go to train", unlisted, len(ids))
    for name in ("val", "test"):
        if not splits[name]:
            log.warning("no %s utterance of NVIDIA's split is in this corpus: use --split random for a subset", name)
    return splits


def random_split(ids: list[str], n_val: int | None, n_test: int | None) -> dict[str, list[str]]:
    """A seeded random split; held-out sizes default to NVIDIA's proportions of this corpus."""
    total = sum(NVIDIA_SIZES.values())
    n_val = max(1, round(len(ids) * NVIDIA_SIZES["val"] / total)) if n_val is None else n_val
    n_test = max(1, round(len(ids) * NVIDIA_SIZES["test"] / total)) if n_test is None else n_test
    return make_splits(ids, n_val, n_test, SEED)


def prepare(out: Path, data_dir: Path | None, split: str = "nvidia", n_val: int | None = None,
            n_test: int | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    if data_dir is None:
        data_dir = extract(download(URL, out / "LJSpeech-1.1.tar.bz2", SHA256), out)
    check_layout(data_dir)
    utterances = read_metadata(data_dir)
    if data_dir.resolve() != out.resolve():
        wavs = out / "wavs"
        if wavs.is_symlink() and wavs.resolve() != (data_dir / "wavs").resolve():
            wavs.unlink()
        if not wavs.exists():
            wavs.symlink_to((data_dir / "wavs").resolve(), target_is_directory=True)
        write_metadata(out, utterances)
    ids = [u.id for u in utterances]
    splits = nvidia_split(ids) if split == "nvidia" else random_split(ids, n_val, n_test)
    write_splits(out, splits)
    print(f"LJSpeech ready at {out}: {len(utterances)} utterances, " +
          " / ".join(f"{len(splits[s])} {s}" for s in ("train", "val", "test")) + f" ({split} split)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, type=Path, help="corpus root to create")
    parser.add_argument("--data-dir", type=Path, help="an already extracted LJSpeech-1.1 folder")
    parser.add_argument("--split", choices=["nvidia", "random"], default="nvidia")
    parser.add_argument("--n-val", type=int, help="--split random: validation utterances (default: 100/13,100 of them)")
    parser.add_argument("--n-test", type=int, help="--split random: test utterances (default: 500/13,100 of them)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        prepare(args.out, args.data_dir, args.split, args.n_val, args.n_test)
    except TTSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
