#!/usr/bin/env python3
"""LJSpeech-1.1 in the canonical layout, with NVIDIA-sized splits (12,500 train / 100 val / 500 test).

    python recipes/ljspeech/prepare.py --out data/LJSpeech-1.1            # download + extract
    python recipes/ljspeech/prepare.py --data-dir /path/LJSpeech-1.1 --out data/ljspeech

The download resumes a partial archive and checks its SHA-256 before extracting.
With ``--data-dir`` an already extracted copy is used (wavs are linked, not copied).
"""

from __future__ import annotations

import argparse
import hashlib
import os
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
N_VAL, N_TEST, SEED = 100, 500, 1234


def download(url: str, dest: Path, sha256: str) -> Path:
    """Download with a progress bar, resuming a partial file; verify the checksum."""
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
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise TTSError(f"cannot download {url} ({exc}); download it by hand and pass --data-dir") from None
        os.replace(partial, dest)
    digest = hashlib.sha256()
    with open(dest, "rb") as fh:
        while chunk := fh.read(1 << 22):
            digest.update(chunk)
    if digest.hexdigest() != sha256:
        dest.rename(dest.with_suffix(".corrupt"))
        raise TTSError(f"{dest} has the wrong SHA-256 (moved aside); run again to download afresh")
    return dest


def prepare(out: Path, data_dir: Path | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    if data_dir is None:
        archive = download(URL, out / "LJSpeech-1.1.tar.bz2", SHA256)
        if not (out / "LJSpeech-1.1" / "metadata.csv").is_file():
            with tarfile.open(archive) as tar:
                tar.extractall(out, filter="data")
        data_dir = out / "LJSpeech-1.1"
    if not (data_dir / "metadata.csv").is_file():
        raise TTSError(f"{data_dir} has no metadata.csv: pass the extracted LJSpeech-1.1 folder as --data-dir")
    utterances = read_metadata(data_dir)
    if data_dir.resolve() != out.resolve():
        wavs = out / "wavs"
        if not wavs.exists():
            wavs.symlink_to((data_dir / "wavs").resolve(), target_is_directory=True)
        write_metadata(out, utterances)
    write_splits(out, make_splits([u.id for u in utterances], N_VAL, N_TEST, SEED))
    print(f"LJSpeech ready at {out}: {len(utterances)} utterances, "
          f"{len(utterances) - N_VAL - N_TEST} train / {N_VAL} val / {N_TEST} test")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="corpus root to create")
    parser.add_argument("--data-dir", type=Path, help="an already extracted LJSpeech-1.1 folder")
    args = parser.parse_args(argv)
    try:
        prepare(Path(args.out), args.data_dir)
    except TTSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
