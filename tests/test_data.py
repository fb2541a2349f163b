import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch
from conftest import SR, make_tiny_corpus, repo_script, tiny_config_dict, tone_speech

from tts.config import config_from_dict
from tts.data import FeatureDataset, LengthBucketBatchSampler, compute_features, feature_dir, read_metadata, read_split
from tts.data.dataset import StopSafeLoader, leave_stop_signals_to_the_trainer
from tts.errors import TTSError
from tts.text import FRONTEND_REVISION, normalize_text

ROOT = Path(__file__).resolve().parents[1]


def test_metadata_keeps_ljspeech_quotes(tiny_corpus):
    utts = read_metadata(tiny_corpus)
    assert utts[1].text == 'He said "hello" to me.' and utts[1].normalized == utts[1].text
    assert len(utts) == 10 and read_split(tiny_corpus, "val") == ["TINY-0008", "TINY-0009"]


def test_features_cache_and_stats(tiny_corpus):
    config = config_from_dict(tiny_config_dict())
    cache = feature_dir(tiny_corpus, config.audio, config.text)
    stats = json.loads((cache / "stats.json").read_text())
    assert stats["utterances"] == 10 and stats["rejected"] == 0
    assert 0 < stats["hours"] < 0.01
    assert stats["frames_per_utterance"]["min"] > 20 and len(stats["mel_mean_per_bin"]) == 80
    mel = np.load(cache / "mels" / "TINY-0001.npy")
    ids = np.load(cache / "ids" / "TINY-0001.npy")
    assert mel.dtype == np.float16 and mel.shape[0] == 80 and ids.dtype == np.int16 and ids[-1] == 1
    # a changed audio setting gets its own cache; an unchanged one is reused
    other = config_from_dict({**tiny_config_dict(), "audio": {"n_mels": 40}})
    assert feature_dir(tiny_corpus, other.audio, other.text) != cache
    assert compute_features(tiny_corpus, config, num_workers=1, progress=False) == cache


def test_a_new_frontend_revision_makes_a_new_cache(tiny_corpus, monkeypatch):
    """Ids made by an older frontend are not read as today's: the revision is part of the cache's key."""
    import tts.text

    config = config_from_dict(tiny_config_dict())
    cache = feature_dir(tiny_corpus, config.audio, config.text)
    monkeypatch.setattr(tts.text, "FRONTEND_REVISION", tts.text.FRONTEND_REVISION + 1)
    assert feature_dir(tiny_corpus, config.audio, config.text) != cache


def test_leading_silence_and_bos_make_their_own_cache(tiny_corpus):
    base = config_from_dict(tiny_config_dict())
    d = tiny_config_dict()
    d.update(audio={"leading_silence": 0.2}, text={"add_bos": True})
    config = config_from_dict(d)
    cache = compute_features(tiny_corpus, config, num_workers=1, progress=False)
    assert cache != feature_dir(tiny_corpus, base.audio, base.text)
    plain = feature_dir(tiny_corpus, base.audio, base.text)
    mel, plain_mel = np.load(cache / "mels" / "TINY-0001.npy"), np.load(plain / "mels" / "TINY-0001.npy")
    lead = round(0.2 * 22050 / 256)
    assert abs(mel.shape[1] - plain_mel.shape[1] - lead) <= 1
    assert np.allclose(mel[:, : lead - 2], np.log(1e-5), atol=1e-2)  # the added lead-in is silence
    ids, plain_ids = np.load(cache / "ids" / "TINY-0001.npy"), np.load(plain / "ids" / "TINY-0001.npy")
    assert ids[0] == 124 and ids[1:].tolist() == plain_ids.tolist()  # BOS, then the same ids


def test_bad_items_are_skipped_and_reported(tmp_path):
    root = make_tiny_corpus(tmp_path / "dirty", texts=["A cat sat.", "Dogs run fast.", "The sun is hot."], val=0, test=0)
    (root / "wavs" / "TINY-0002.wav").write_bytes(b"RIFF garbage")                    # corrupt
    sf.write(root / "wavs" / "WRONGSR.wav", tone_speech("We met.", sample_rate=16000), 16000)  # wrong rate
    sf.write(root / "wavs" / "LONG.wav", np.zeros(SR * 30, dtype=np.float32) + 0.1, SR)  # too long
    with open(root / "metadata.csv", "a") as fh:
        fh.write("MISSING|No wav here.|No wav here.\nEMPTY||\nWRONGSR|We met.|We met.\nLONG|Long one.|Long one.\n")
    (root / "wavs" / "EMPTY.wav").write_bytes((root / "wavs" / "TINY-0001.wav").read_bytes())
    config = config_from_dict({**tiny_config_dict(), "audio": {"trim_silence": False}})
    cache = compute_features(root, config, num_workers=2, progress=False)
    rejected = dict(line.split("\t") for line in (cache / "rejected.tsv").read_text().splitlines())
    assert set(rejected) == {"TINY-0002", "MISSING", "EMPTY", "WRONGSR", "LONG"}
    assert "corrupt" in rejected["TINY-0002"] and "missing wav" in rejected["MISSING"]
    assert "empty transcript" in rejected["EMPTY"] and "16000" in rejected["WRONGSR"]
    assert "max_mel_frames" in rejected["LONG"]
    assert json.loads((cache / "stats.json").read_text())["utterances"] == 2


def test_missing_dataset_says_how_to_get_it(tmp_path):
    with pytest.raises(TTSError, match="recipes/synthetic/prepare.py"):
        read_metadata(tmp_path / "nowhere")
    out = subprocess.run([sys.executable, "-m", "tts.cli", "features", "--data", str(tmp_path / "nowhere")],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "no corpus" in out.stderr


def test_collate_pads_to_multiple_of_r(tiny_corpus):
    config = config_from_dict(tiny_config_dict())
    ds = FeatureDataset(feature_dir(tiny_corpus, config.audio, config.text), tiny_corpus, "train")
    items = [ds[0], ds[1], ds[2]]
    assert ds.pad_value == pytest.approx(np.log(config.audio.log_floor))
    batch = ds.collate(3)(items)
    lengths = sorted((it[2].shape[1] for it in items), reverse=True)
    assert batch.mel_lengths.tolist() == lengths
    assert batch.mels.shape[2] % 3 == 0 and batch.mels.shape[2] >= lengths[0]
    for i, n in enumerate(batch.mel_lengths.tolist()):
        assert batch.stop_targets[i, : n - 1].sum() == 0 and bool((batch.stop_targets[i, n - 1:] == 1).all())
        if n < batch.mels.shape[2]:
            assert torch.allclose(batch.mels[i, :, n:], torch.tensor(float(np.log(1e-5))))
    assert batch.ids.shape == (3, int(batch.text_lengths.max())) and bool((batch.ids[batch.text_mask == 0] == 0).all())
    assert batch.mel_mask.sum() == batch.mel_lengths.sum()


def test_oversampling_repeats_the_items_of_a_prefix_in_every_epoch(tiny_corpus):
    from tts.config.data import Oversampling

    config = config_from_dict(tiny_config_dict())
    cache = feature_dir(tiny_corpus, config.audio, config.text)
    ids = [e["id"] for e in FeatureDataset(cache, tiny_corpus, "train").entries]
    ds = FeatureDataset(cache, tiny_corpus, "train")
    counts = ds.oversample([Oversampling("TINY-000", 3), Oversampling("TINY-0001", 2)])
    under = [i for i in ids if i.startswith("TINY-000") and i != "TINY-0001"]
    assert counts == {"TINY-000": len(under), "TINY-0001": 1} and len(under) >= 2
    seen = [e["id"] for e in ds.entries]
    assert len(ds) == len(ids) + 2 * len(under) + 1 and len(ds.frame_lengths) == len(ds)
    assert {i: seen.count(i) for i in ids} == {i: 3 if i in under else 2 if i == "TINY-0001" else 1 for i in ids}
    sampler = LengthBucketBatchSampler(ds.frame_lengths, max_frames=4000, max_batch_size=4, seed=3)
    assert sorted(ds.entries[i]["id"] for batch in sampler for i in batch) == sorted(seen)
    with pytest.raises(TTSError, match=r"'data.oversample': no utterance of this split has an id starting with 'SHT'"):
        FeatureDataset(cache, tiny_corpus, "train").oversample([Oversampling("SHT", 4)])


def test_sampler_frame_budget_determinism_and_ranks():
    rng = np.random.default_rng(0)
    lengths = rng.integers(50, 800, size=500).tolist()
    sampler = LengthBucketBatchSampler(lengths, max_frames=4000, max_batch_size=32, seed=7, bucket_size=128)
    batches = list(sampler)
    assert sorted(i for b in batches for i in b) == list(range(500))
    assert all(len(b) * max(lengths[i] for i in b) <= 4000 for b in batches)
    assert len({len(b) for b in batches}) > 3  # batch size adapts to length
    assert list(sampler) == batches  # same epoch → same batches
    sampler.set_epoch(1)
    assert list(sampler) != batches
    sampler.set_epoch(1, skip=5)
    full = LengthBucketBatchSampler(lengths, 4000, 32, seed=7, bucket_size=128)
    full.set_epoch(1)
    assert list(sampler) == list(full)[5:]
    ranks = [LengthBucketBatchSampler(lengths, 4000, 32, seed=7, bucket_size=128, rank=r, world_size=2) for r in (0, 1)]
    r0, r1 = list(ranks[0]), list(ranks[1])
    assert len(r0) == len(r1) and not {i for b in r0 for i in b} & {i for b in r1 for i in b}
    with pytest.raises(TTSError, match="smaller than the longest"):
        LengthBucketBatchSampler(lengths, max_frames=500)


def _nvidia_filelists() -> dict[str, tuple[str, str]]:
    import gzip

    with gzip.open(ROOT / "recipes/ljspeech/nvidia_filelists.tsv.gz", "rt", encoding="utf-8") as fh:
        return {uid: (split, text) for uid, split, text in (line.rstrip("\n").split("\t", 2) for line in fh)}


def _ljspeech_copy(folder: Path, ids: list[str], texts: dict) -> Path:
    (folder / "wavs").mkdir(parents=True)
    text = {uid: texts.get(uid, ("train", "An extra line."))[1] for uid in ids}
    lines = [f'{uid}|Text "{text[uid][:20]}"; Mr. Smith.|{text[uid]}' for uid in ids]
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n")
    return folder


def test_ljspeech_recipe_uses_nvidias_split(tmp_path):
    listed = _nvidia_filelists()
    assert {s: sum(v[0] == s for v in listed.values()) for s in ("train", "val", "test")} == {
        "train": 12500, "val": 100, "test": 500}
    src = _ljspeech_copy(tmp_path / "LJSpeech-1.1", sorted(listed) + ["LJ999-0001"], listed)
    out = subprocess.run([sys.executable, str(ROOT / "recipes/ljspeech/prepare.py"), "--data-dir", str(src),
                          "--out", str(tmp_path / "lj")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "1 of 13101 ids are not in NVIDIA's filelists; they go to train" in out.stderr
    for split in ("train", "val", "test"):
        expected = sorted(uid for uid, (s, _) in listed.items() if s == split) + (["LJ999-0001"] if split == "train" else [])
        assert sorted(read_split(tmp_path / "lj", split)) == expected, split
    assert (tmp_path / "lj" / "wavs").is_symlink() and read_metadata(tmp_path / "lj")[5].text.endswith("; Mr. Smith.")


def test_ljspeech_recipe_on_a_small_copy_and_bad_folders(tmp_path):
    listed = _nvidia_filelists()
    src = _ljspeech_copy(tmp_path / "small", sorted(listed)[:60], listed)
    prepare = [sys.executable, str(ROOT / "recipes/ljspeech/prepare.py")]
    out = subprocess.run(prepare + ["--data-dir", str(src), "--out", str(tmp_path / "a")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr  # NVIDIA's split of those 60 ids (val and test may be empty: a warning)
    assert sorted(read_split(tmp_path / "a", "train") + read_split(tmp_path / "a", "val")
                  + read_split(tmp_path / "a", "test")) == sorted(listed)[:60]
    out = subprocess.run(prepare + ["--data-dir", str(src), "--out", str(tmp_path / "b"), "--split", "random"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and {s: len(read_split(tmp_path / "b", s)) for s in ("train", "val", "test")} == {
        "train": 57, "val": 1, "test": 2}  # held-out sizes scale with the corpus
    (tmp_path / "nowavs").mkdir()
    (tmp_path / "nowavs" / "metadata.csv").write_text("LJ001-0001|a|a\n")
    for folder, message in ((tmp_path / "nowhere", "is not a folder"), (tmp_path / "nowavs", "has no wavs/ folder"),
                            (tmp_path, "has no metadata.csv")):
        out = subprocess.run(prepare + ["--data-dir", str(folder), "--out", str(tmp_path / "c")], capture_output=True,
                             text=True)
        assert out.returncode == 2 and message in out.stderr and out.stderr.count("\n") == 1


@pytest.mark.skipif(subprocess.run(["which", "flite"], capture_output=True).returncode != 0,
                    reason="flite not installed (make system-deps)")
def test_ljspeech_run_sh_on_a_stand_in_with_a_relative_data_dir_and_overrides(tmp_path):
    """The stand-in speaks LJSpeech's own texts with their ids; run.sh takes it by a path relative
    to the caller, uses NVIDIA's split, and hands the overrides to the features stage."""
    standin = tmp_path / "standin"
    out = subprocess.run([sys.executable, str(ROOT / "recipes/synthetic/prepare.py"), "--texts", "ljspeech", "--out",
                          str(standin), "--size", "6", "--engine", "flite", "--jobs", "2"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    listed = _nvidia_filelists()
    utts = read_metadata(standin)
    assert len(utts) == 6 and all(u.id in listed and u.text == listed[u.id][1] for u in utts)
    assert sf.info(standin / "wavs" / f"{utts[0].id}.wav").samplerate == 22050
    data = tmp_path / "prepared"
    run = subprocess.run(["bash", str(ROOT / "egs/ljspeech/run.sh"), "--stop-stage", "2", "--data-dir", "standin",
                          "--data", str(data), "--jobs", "1", "--", "text.mode=char", "text.add_eos=false"],
                         capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PY": sys.executable,
                                                                            "TTS": f"{sys.executable} -m tts.cli"})
    assert run.returncode == 0, run.stderr[-2000:]
    for split in ("val", "test"):
        assert read_split(data, split) == [u.id for u in utts if listed[u.id][0] == split]
    (settings,) = [json.loads(p.read_text()) for p in (data / "features").glob("*/settings.json")]
    assert settings["text"] == {"mode": "char", "add_eos": False, "frontend": FRONTEND_REVISION}


@pytest.mark.skipif(subprocess.run(["which", "flite"], capture_output=True).returncode != 0,
                    reason="flite not installed (make system-deps)")
def test_synthetic_recipe_builds_a_small_corpus(tmp_path):
    cmd = [sys.executable, str(ROOT / "recipes/synthetic/prepare.py"), "--out", str(tmp_path / "syn"),
           "--size", "6", "--engine", "flite", "--n-val", "1", "--n-test", "1", "--jobs", "2"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    utts = read_metadata(tmp_path / "syn")
    assert len(utts) == 6 and all(5 <= len(u.text.split()) <= 25 for u in utts)
    wav, sr = sf.read(tmp_path / "syn" / "wavs" / f"{utts[0].id}.wav")
    assert sr == 22050 and 0.9 < np.abs(wav).max() <= 0.96 and len(wav) > sr // 2
    mtime = (tmp_path / "syn" / "wavs" / f"{utts[0].id}.wav").stat().st_mtime
    subprocess.run(cmd, check=True, capture_output=True)  # resumes: finished wavs are kept
    assert (tmp_path / "syn" / "wavs" / f"{utts[0].id}.wav").stat().st_mtime == mtime
    assert [u.id for u in read_metadata(tmp_path / "syn")] == [u.id for u in utts]


@pytest.mark.skipif(subprocess.run(["which", "flite"], capture_output=True).returncode != 0,
                    reason="flite not installed (make system-deps)")
def test_short_utterances_join_the_training_split_only_and_leave_the_suite_out(tmp_path):
    import yaml

    cmd = [sys.executable, str(ROOT / "recipes/synthetic/prepare.py"), "--size", "6", "--engine", "flite",
           "--n-val", "1", "--n-test", "1", "--jobs", "2"]
    subprocess.run(cmd + ["--out", str(tmp_path / "plain")], check=True, capture_output=True)
    out = subprocess.run(cmd + ["--out", str(tmp_path / "syn"), "--short", "8"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    short = [u for u in read_metadata(tmp_path / "syn") if u.id.startswith("SHT")]
    assert len(short) == 8 and all(1 <= len(u.text.split()) <= 4 for u in short)
    words = [u.text for u in short if len(u.text.split()) == 1]
    assert len(words) >= 4 and all(w[:-1].lower() in " ".join(u.text for u in read_metadata(tmp_path / "plain")).lower()
                                   for w in words)  # single words of the corpus's sentences
    suite = yaml.safe_load((ROOT / "tts/evaluation/suites/robustness.yaml").read_text())
    held_out = {t.lower().strip(".!?") for texts in suite["categories"].values() for t in texts}
    assert not {u.text.lower().strip(".!?") for u in short} & held_out
    for split in ("val", "test"):
        assert read_split(tmp_path / "syn", split) == read_split(tmp_path / "plain", split)
    assert read_split(tmp_path / "syn", "train") == sorted(read_split(tmp_path / "plain", "train") + [u.id for u in short])
    bad = subprocess.run(cmd + ["--out", str(tmp_path / "x"), "--short", "-1"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--short" in bad.stderr


@pytest.mark.skipif(subprocess.run(["which", "flite"], capture_output=True).returncode != 0,
                    reason="flite not installed (make system-deps)")
def test_a_rerun_respeaks_what_an_interrupted_run_said_with_other_texts(tmp_path):
    """A run that changed texts and was stopped leaves the new texts in texts.tsv, their wavs, and
    the old metadata.csv: the next run with the old texts must speak those wavs again."""
    import argparse

    prepare = repo_script("recipes/synthetic/prepare.py")
    args = argparse.Namespace(engine="flite", jobs=1, sample_rate=22050, speakers=[])
    texts = {"SHT00001": "Good morning.", "SHT00002": "Kettle."}
    original = [prepare.Utterance(uid, text, normalize_text(text)) for uid, text in texts.items()]
    prepare.synthesize(tmp_path, original, args)
    prepare.write_metadata(tmp_path, original)
    first = (tmp_path / "wavs" / "SHT00001.wav").read_bytes()
    other = [prepare.Utterance("SHT00001", "A much longer sentence instead.", "A much longer sentence instead.")]
    prepare.synthesize(tmp_path, other, args)  # the interrupted run: its metadata.csv was never written
    assert (tmp_path / "wavs" / "SHT00001.wav").read_bytes() != first
    prepare.synthesize(tmp_path, original, args)
    assert (tmp_path / "wavs" / "SHT00001.wav").read_bytes() == first


def test_the_cache_follows_edits_deletions_and_additions(tmp_path):
    import os
    import time

    root = make_tiny_corpus(tmp_path / "c", texts=["A cat sat.", "Dogs run fast.", "The sun is hot."], val=0, test=0)
    config = config_from_dict(tiny_config_dict())
    cache = compute_features(root, config, num_workers=1, progress=False)
    manifest = lambda: {e["id"]: e for e in (json.loads(x) for x in (cache / "manifest.jsonl").read_text().splitlines())}  # noqa: E731
    before = manifest()
    lines = (root / "metadata.csv").read_text().splitlines()
    lines[1] = "TINY-0002|Dogs ran far away.|Dogs ran far away."           # an edited transcript
    lines.append("TINY-0009|We met at noon.|We met at noon.")             # an addition
    sf.write(root / "wavs" / "TINY-0009.wav", tone_speech("We met at noon."), SR)
    (root / "metadata.csv").write_text("\n".join(lines) + "\n")
    (root / "wavs" / "TINY-0003.wav").unlink()                           # a deleted wav
    wav = root / "wavs" / "TINY-0001.wav"
    sf.write(wav, tone_speech("A cat sat on it."), SR)                    # re-recorded audio, same text
    os.utime(wav, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert compute_features(root, config, num_workers=1, progress=False) == cache
    after = manifest()
    assert sorted(after) == ["TINY-0001", "TINY-0002", "TINY-0009"]
    assert after["TINY-0002"]["text"] == "Dogs ran far away."
    assert after["TINY-0001"]["n_frames"] > before["TINY-0001"]["n_frames"]
    rejected = (cache / "rejected.tsv").read_text()
    assert "TINY-0003\tmissing wav" in rejected
    assert np.load(cache / "ids" / "TINY-0002.npy").tolist() != [] and not (cache / "mels" / "TINY-0003.npy").exists()
    mtime = (cache / "manifest.jsonl").stat().st_mtime_ns
    compute_features(root, config, num_workers=1, progress=False)  # nothing changed: nothing rewritten
    assert (cache / "manifest.jsonl").stat().st_mtime_ns == mtime


@pytest.mark.parametrize("content, message", [
    ("A|one.|one.\nB|two.|two.\nA|three.|three.\n", r"metadata.csv:3: id A was already used on line 1"),
    ("A|one.|one.\nB|two.|two.|spk|extra\n", r"metadata.csv:2: expected 'id\|text\|normalized text' .* got 5 field"),
    ("A|one.|one.\nB|two.|two.|spk\n", r"metadata.csv:1: no speaker field, where line 2 names one"),
    ("A|one.|one.\n|no id.|no id.\n", r"metadata.csv:2: expected"),
])
def test_bad_metadata_lines_are_named(tmp_path, content, message):
    (tmp_path / "metadata.csv").write_text(content)
    with pytest.raises(TTSError, match=message):
        read_metadata(tmp_path)


def test_metadata_that_is_not_utf8_is_a_clear_error(tmp_path):
    (tmp_path / "metadata.csv").write_bytes("A|one.|one.\nB|caf\xe9.|caf\xe9.\n".encode("latin-1"))
    with pytest.raises(TTSError, match=r"metadata.csv:2: not UTF-8 text .*convert the file to UTF-8"):
        read_metadata(tmp_path)


def test_random_sampler_drops_the_last_batch_and_splits_ranks():
    from tts.data import RandomBatchSampler

    sampler = RandomBatchSampler(130, 64, seed=3)
    batches = list(sampler)
    assert [len(b) for b in batches] == [64, 64] and len(set(batches[0]) | set(batches[1])) == 128  # 2 left out
    assert list(sampler) == batches
    sampler.set_epoch(1)
    assert list(sampler) != batches
    sampler.set_epoch(1, skip=1)
    assert len(sampler) == 1
    assert [len(b) for b in RandomBatchSampler(130, 64, shuffle=False)] == [64, 64, 2]  # validation keeps all
    ranks = [list(RandomBatchSampler(300, 64, seed=3, rank=r, world_size=2)) for r in (0, 1)]
    assert len(ranks[0]) == len(ranks[1]) == 2 and not {i for b in ranks[0] for i in b} & {i for b in ranks[1] for i in b}
    with pytest.raises(TTSError, match="cannot fill one batch"):
        RandomBatchSampler(10, 64)


def test_zero_padding_for_nvidias_recipe(tiny_corpus):
    config = config_from_dict(tiny_config_dict())
    ds = FeatureDataset(feature_dir(tiny_corpus, config.audio, config.text), tiny_corpus, "train")
    batch = ds.collate(1, "zeros")([ds[0], ds[1]])
    i = int(batch.mel_lengths.argmin())
    short = int(batch.mel_lengths[i])
    silence = ds.collate(1)([ds[0], ds[1]])
    assert bool((batch.mels[i, :, short:] == 0).all()) and bool((silence.mels[i, :, short:] < -11).all())


def _killed_while_starting(worker_id: int) -> None:
    """A worker_init_fn that a scheduler's kill reaches before the worker ignores stop signals."""
    import signal

    os.kill(os.getpid(), signal.SIGTERM)
    leave_stop_signals_to_the_trainer(worker_id)


def test_a_kill_while_loader_workers_start_does_not_end_them():
    from torch.utils.data import DataLoader

    loader = StopSafeLoader(list(range(6)), batch_size=2, num_workers=2, worker_init_fn=_killed_while_starting)
    assert [batch.tolist() for batch in loader] == [[0, 1], [2, 3], [4, 5]]
    assert [batch.tolist() for batch in loader] == [[0, 1], [2, 3], [4, 5]]  # a second epoch, new workers
    plain = DataLoader(list(range(6)), batch_size=2, num_workers=2, worker_init_fn=_killed_while_starting)
    with pytest.raises(RuntimeError, match="DataLoader worker"):
        list(plain)


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_stopping_features_is_one_line_and_the_workers_go_quietly(tiny_corpus, tmp_path, signum, code):
    """``kill PID`` / Ctrl-C during ``tts features --jobs 2``: one line, exit 128 + signum, no worker
    traceback (BrokenPipe) and no leaked-semaphore warning; a second run finishes the cache."""
    import shutil
    import time

    corpus = tmp_path / "corpus"
    (corpus / "wavs").mkdir(parents=True)
    wav = next((tiny_corpus / "wavs").glob("*.wav"))
    lines = []
    for i in range(600):
        shutil.copy(wav, corpus / "wavs" / f"U{i:04d}.wav")
        lines.append(f"U{i:04d}|A cat sat on the mat number {i}.|A cat sat on the mat number {i}.")
    (corpus / "metadata.csv").write_text("\n".join(lines) + "\n")
    command = [sys.executable, "-m", "tts.cli", "features", "--data", str(corpus), "--jobs", "2"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    seen = ""
    while "features:" not in seen:  # the pool is up and working
        seen += process.stderr.read(1)
        assert process.poll() is None, seen
    time.sleep(0.5)
    process.send_signal(signum)
    err = seen + process.stderr.read()
    assert process.wait(timeout=60) == code, err
    assert "Traceback" not in err and "BrokenPipe" not in err and "leaked semaphore" not in err, err
    assert err.count("stopped: tts features was interrupted") == 1, err
    again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr


def test_combine_joins_a_corpus_into_the_training_split_and_keeps_the_held_out_texts_out(tmp_path):
    from tts.data.corpus import Utterance, write_metadata, write_splits

    def corpus(root: Path, texts: dict[str, str], splits: dict[str, list[str]]) -> None:
        (root / "wavs").mkdir(parents=True)
        for uid in texts:
            sf.write(root / "wavs" / f"{uid}.wav", np.zeros(SR // 10, dtype=np.float32), SR)
        write_metadata(root, [Utterance(uid, text, text) for uid, text in texts.items()])
        write_splits(root, splits)

    corpus(tmp_path / "base", {"B1": "One cat.", "B2": "Two dogs!", "B3": "Three birds."},
           {"train": ["B1"], "val": ["B2"], "test": ["B3"]})
    corpus(tmp_path / "add", {"A1": "two DOGS", "A2": "Four fish.", "B1": "A clash of ids."},
           {"train": ["A1", "A2", "B1"], "val": [], "test": []})
    corpus(tmp_path / "more", {"A2": "Another clash.", "C1": "Five frogs."}, {"train": ["A2", "C1"], "val": [], "test": []})
    cmd = [sys.executable, str(ROOT / "recipes/synthetic/combine.py"), "--base", str(tmp_path / "base"),
           "--add", str(tmp_path / "add"), str(tmp_path / "more"), "--out", str(tmp_path / "joined")]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "3 from" in out.stdout and "2 from" in out.stdout and "3 left out" in out.stdout
    joined = tmp_path / "joined"
    assert [u.id for u in read_metadata(joined)] == ["B1", "B2", "B3", "A2", "C1"]
    assert read_split(joined, "train") == ["A2", "B1", "C1"] and read_split(joined, "val") == ["B2"]
    assert read_split(joined, "test") == ["B3"]
    assert (joined / "wavs" / "A2.wav").resolve() == (tmp_path / "add" / "wavs" / "A2.wav").resolve()
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert again.returncode == 2 and again.stderr.startswith("error:") and "is not empty" in again.stderr
