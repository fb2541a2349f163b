"""egs/synthetic/compact_corpus.py: a feature cache packed small and rebuilt into a corpus that
`tts train` can use without recomputing anything."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import repo_script, tiny_config_dict

from tts.config import config_from_dict
from tts.data import compute_features
from tts.data.features import feature_dir

ROOT = Path(__file__).resolve().parents[1]



@pytest.mark.parametrize("bits", [8, 7])
def test_pack_and_unpack_rebuild_a_trainable_cache(tiny_corpus, tmp_path, bits):
    compact = repo_script("egs/synthetic/compact_corpus.py")
    config_path = tmp_path / "tiny.yaml"
    config_path.write_text(yaml.safe_dump(tiny_config_dict()))
    config = config_from_dict(tiny_config_dict())
    archive = tmp_path / "corpus.tar.xz"
    compact.pack(tiny_corpus, config_path, ["train", "val"], ["val"], archive, bits)
    out = tmp_path / "rebuilt"
    compact.unpack(archive, config_path, out)

    source, rebuilt = feature_dir(tiny_corpus, config.audio, config.text), feature_dir(out, config.audio, config.text)
    kept = [json.loads(line)["id"] for line in (rebuilt / "manifest.jsonl").read_text().splitlines()]
    test_ids = (tiny_corpus / "splits" / "test.txt").read_text().split()
    assert kept and not set(kept) & set(test_ids)
    low, high = np.inf, -np.inf
    for uid in kept:
        mel = np.load(source / "mels" / f"{uid}.npy").astype(np.float32)
        low, high = min(low, mel.min()), max(high, mel.max())
    half_step = (high - low) / (2 ** bits - 1) / 2
    for uid in kept:
        original = np.load(source / "mels" / f"{uid}.npy").astype(np.float32)
        copy = np.load(rebuilt / "mels" / f"{uid}.npy").astype(np.float32)
        assert copy.shape == original.shape
        assert np.abs(copy - original).max() <= half_step + 0.01  # and float16 rounding
        assert np.array_equal(np.load(rebuilt / "ids" / f"{uid}.npy"), np.load(source / "ids" / f"{uid}.npy"))
    val_id = (tiny_corpus / "splits" / "val.txt").read_text().split()[0]
    assert (out / "wavs" / f"{val_id}.wav").stat().st_size > 1000  # the audio the true alignment needs
    before = (rebuilt / "manifest.jsonl").read_text()
    assert compute_features(out, config, num_workers=1, progress=False) == rebuilt
    assert (rebuilt / "manifest.jsonl").read_text() == before  # up to date: nothing recomputed


def test_unpack_refuses_an_existing_folder(tmp_path):
    compact = repo_script("egs/synthetic/compact_corpus.py")
    with pytest.raises(SystemExit, match="exists"):
        compact.unpack(tmp_path / "none.tar.xz", ROOT / "configs/attention_study.yaml", tmp_path)


def test_pack_keeps_the_first_utterances_and_can_carry_teacher_forced_mels(tiny_corpus, tiny_experiment, tmp_path):
    """--limit keeps the first N of each split; --mels-from sends a checkpoint's teacher-forced mels
    (what a student vocoder learns from) in place of the recordings'."""
    from tts.training.teacher_forcing import teacher_forced_mels

    compact = repo_script("egs/synthetic/compact_corpus.py")
    corpus = tmp_path / "corpus"  # a copy: the teacher-forced mels are written into its cache
    shutil.copytree(tiny_corpus, corpus)
    config_path = tmp_path / "tiny.yaml"
    config_path.write_text(yaml.safe_dump(tiny_config_dict()))
    config = config_from_dict(tiny_config_dict())
    acoustic = tiny_experiment / "checkpoint_00000004.pt"
    archive = tmp_path / "student.tar.xz"
    compact.pack(corpus, config_path, ["train", "val"], [], archive, 8, mels_from=acoustic, limit=2)
    out = tmp_path / "rebuilt"
    compact.unpack(archive, config_path, out)

    for split in ("train", "val"):
        first = (corpus / "splits" / f"{split}.txt").read_text().split()[:2]
        assert (out / "splits" / f"{split}.txt").read_text().split() == first
    rebuilt = feature_dir(out, config.audio, config.text)
    kept = [json.loads(line)["id"] for line in (rebuilt / "manifest.jsonl").read_text().splitlines()]
    assert len(kept) == 4
    forced_dir = teacher_forced_mels(acoustic, corpus, config.audio, progress=False)[0]
    recordings = feature_dir(corpus, config.audio, config.text) / "mels"
    forced = [np.load(forced_dir / f"{uid}.npy").astype(np.float32) for uid in kept]
    step = (max(m.max() for m in forced) - min(m.min() for m in forced)) / 255
    for uid, target in zip(kept, forced):
        copy = np.load(rebuilt / "mels" / f"{uid}.npy").astype(np.float32)
        assert np.abs(copy - target).max() <= step / 2 + 0.01
        assert np.abs(copy - np.load(recordings / f"{uid}.npy").astype(np.float32)).max() > step
