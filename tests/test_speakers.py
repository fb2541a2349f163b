"""Many voices: the speaker field of a corpus, speaker-balanced splits, the learned speaker table of
Tacotron2 and Transformer-TTS, training on a multi-speaker corpus, and choosing a speaker when
synthesizing (API, command, ONNX)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import make_tiny_corpus, tiny_config_dict

from tts import checkpoint
from tts.config import config_from_dict
from tts.data import compute_features
from tts.data.corpus import make_speaker_splits, read_metadata, read_split, write_metadata
from tts.errors import ConfigError, TTSError
from tts.models import build_model
from tts.text import SymbolInventory

SPEAKERS = ["awb", "slt"]
ROOT = Path(__file__).resolve().parents[1]


def speaker_config(model: dict | None = None, **speakers) -> dict:
    d = tiny_config_dict()
    if model is not None:
        d["model"] = model
    d["model"]["speakers"] = speakers
    return d


@pytest.fixture(scope="module")
def two_speaker_corpus(tmp_path_factory) -> Path:
    """The tiny corpus with every other utterance said by a second speaker, features computed."""
    root = make_tiny_corpus(tmp_path_factory.mktemp("two_speakers"))
    utterances = read_metadata(root)
    for i, utt in enumerate(utterances):
        utt.speaker = SPEAKERS[i % 2]
    write_metadata(root, utterances)
    compute_features(root, config_from_dict(tiny_config_dict()), num_workers=1, progress=False)
    return root


def test_the_speaker_field_is_read_and_must_be_on_every_line(tmp_path):
    (tmp_path / "metadata.csv").write_text("a|Hi.|Hi.|awb\nb|Yo.|Yo.|slt\n")
    assert [(u.id, u.speaker) for u in read_metadata(tmp_path)] == [("a", "awb"), ("b", "slt")]
    (tmp_path / "metadata.csv").write_text("a|Hi.|Hi.|awb\nb|Yo.|Yo.\n")
    with pytest.raises(TTSError, match=r"metadata.csv:2: no speaker field, where line 1 names one"):
        read_metadata(tmp_path)
    (tmp_path / "metadata.csv").write_text("a|Hi.|Hi.| \n")
    with pytest.raises(TTSError, match="metadata.csv:1: the speaker field is empty"):
        read_metadata(tmp_path)


def test_speaker_splits_hold_out_the_same_number_of_each_speaker():
    speaker_of = {f"{s}{i:02d}": s for s in ("awb", "rms", "slt") for i in range(10)}
    splits = make_speaker_splits(speaker_of, n_val=2, n_test=3, seed=0)
    for name, per_speaker in (("val", 2), ("test", 3), ("train", 5)):
        assert sorted(speaker_of[u] for u in splits[name]) == sorted(["awb", "rms", "slt"] * per_speaker)
    assert not set(splits["train"]) & set(splits["test"])
    with pytest.raises(TTSError, match="speaker x has 4 utterances: too few"):
        make_speaker_splits({f"x{i}": "x" for i in range(4)}, n_val=2, n_test=2, seed=0)


def test_speaker_names_must_be_distinct():
    with pytest.raises(ConfigError, match="model.speakers.names.*repeated: awb"):
        config_from_dict(speaker_config(names=["awb", "slt", "awb"]))


@pytest.mark.parametrize("model", [None, {"name": "transformer_tts", "transformer_tts": {
    "embedding_dim": 32, "d_model": 32, "heads": 2, "encoder_layers": 1, "decoder_layers": 1, "ffn_dim": 64,
    "decoder_prenet_dims": [32, 32], "postnet": {"layers": 2, "channels": 32}, "reduction_factor": 2,
    "guided_heads": [[-1, 0]]}}], ids=["tacotron2", "transformer_tts"])
def test_each_speaker_changes_the_memory_and_nothing_else_does(model):
    config = config_from_dict(speaker_config(model, names=SPEAKERS, embedding_dim=8))
    torch.manual_seed(0)
    net = build_model(config.model, len(SymbolInventory()), config.audio).eval()
    ids, lengths = torch.randint(1, 20, (2, 7)), torch.tensor([7, 7])
    ids[1] = ids[0]
    plain, _ = net.encode(ids, lengths, torch.tensor([0, 1]))
    torch.testing.assert_close(plain[0], plain[1])  # the projection starts at zero: no speaker yet
    assert net.speaker_projection is not None
    torch.nn.init.normal_(net.speaker_projection.weight)  # as training would make it
    memory, _ = net.encode(ids, lengths, torch.tensor([0, 1]))
    assert memory.shape[2] == net.memory_dim and not torch.allclose(memory[0], memory[1])
    same, _ = net.encode(ids, lengths, torch.tensor([1, 1]))
    torch.testing.assert_close(same[0], same[1])
    with pytest.raises(TTSError, match="speaks as 2 speakers: choose one of awb, slt"):
        net.encode(ids, lengths)
    with pytest.raises(TTSError, match=r"one index in \[0, 2\) per item"):
        net.encode(ids, lengths, torch.tensor([0, 2]))
    single = build_model(config_from_dict(tiny_config_dict()).model, len(SymbolInventory()), config.audio)
    assert single.speaker_table is None and not any("speaker" in name for name in single.state_dict())
    with pytest.raises(TTSError, match="one speaker: it takes no speaker"):
        single.encode(ids, lengths, torch.tensor([0, 0]))


@pytest.fixture(scope="module")
def two_speaker_checkpoint(two_speaker_corpus, tmp_path_factory) -> Path:
    from tts.training.trainer import Trainer

    d = tiny_config_dict()
    d["train"].update(max_steps=2, checkpoint_every=2, validate_every=2, n_val_audio=1)  # audio: free-running
    exp = tmp_path_factory.mktemp("two_speaker_exp")
    Trainer(config_from_dict(d), two_speaker_corpus, exp, progress=False).fit()
    return exp / "checkpoint_00000002.pt"


def test_training_names_the_corpus_speakers_and_synthesis_chooses_one(two_speaker_checkpoint):
    from tts.synthesis import Synthesizer

    loaded = checkpoint.load(two_speaker_checkpoint)
    assert loaded.config.model.speakers.names == SPEAKERS and loaded.model.speaker_names == SPEAKERS
    synth = Synthesizer(loaded, settings=loaded.config.inference.__class__(max_frames_per_token=2,
                                                                            vocoder="griffin-lim"))
    assert synth.speakers == SPEAKERS
    awb, slt = synth("A cat.", speaker="awb")[0], synth("A cat.", speaker="slt")[0]
    assert awb.mel.shape[0] == slt.mel.shape[0] and (awb.mel.shape != slt.mel.shape or (awb.mel != slt.mel).any())
    with pytest.raises(TTSError, match="unknown speaker 'kal': this voice knows awb, slt"):
        synth("A cat.", speaker="kal")
    with pytest.raises(TTSError, match="speaks as 2 speakers: choose one of awb, slt"):
        synth("A cat.")


def test_a_config_that_names_speakers_needs_a_corpus_that_does(tiny_corpus, tmp_path):
    from tts.training.trainer import Trainer

    with pytest.raises(TTSError, match="lists 2 speakers but .*metadata.csv names none"):
        Trainer(config_from_dict(speaker_config(names=SPEAKERS)), tiny_corpus, tmp_path / "exp", progress=False)


def test_a_speaker_without_training_utterances_is_refused_before_training(tmp_path):
    from tts.training.trainer import Trainer

    root = make_tiny_corpus(tmp_path / "corpus")
    held_out = set(read_split(root, "val") + read_split(root, "test"))
    utterances = read_metadata(root)
    for utt in utterances:
        utt.speaker = "kal" if utt.id in held_out else "awb"
    write_metadata(root, utterances)
    compute_features(root, config_from_dict(tiny_config_dict()), num_workers=1, progress=False)
    with pytest.raises(TTSError, match=r"speaker\(s\) kal of .* have no utterance in the train split"):
        Trainer(config_from_dict(tiny_config_dict()), root, tmp_path / "exp", progress=False)
    assert not (tmp_path / "exp").exists()


def test_a_single_speaker_voice_refuses_a_speaker(tiny_experiment):
    from tts.synthesis import Synthesizer

    synth = Synthesizer(checkpoint.load(tiny_experiment / "checkpoint_00000004.pt"))
    assert synth.speakers == []
    with pytest.raises(TTSError, match="this voice has one speaker: drop the speaker"):
        synth("A cat.", speaker="awb")


def test_the_onnx_export_takes_the_speaker_as_an_input(tmp_path):
    from tts.checkpoint import LoadedModel
    from tts.config import InferenceConfig
    from tts.onnx import export_onnx, load_onnx

    config = config_from_dict(speaker_config(names=SPEAKERS, embedding_dim=8))
    torch.manual_seed(0)
    model = build_model(config.model, len(SymbolInventory()), config.audio).eval()
    assert model.speaker_projection is not None
    torch.nn.init.normal_(model.speaker_projection.weight)
    loaded = LoadedModel(model, config, SymbolInventory(), 0, Path("random-weights.pt"))
    export_onnx(loaded, None, "griffin-lim", tmp_path / "onnx")
    assert json.loads((tmp_path / "onnx" / "onnx.json").read_text())["model"]["speakers"] == SPEAKERS
    exported = load_onnx(tmp_path / "onnx").model
    ids, lengths = torch.randint(1, 20, (2, 9)), torch.tensor([9, 9])
    ids[1] = ids[0]
    settings = InferenceConfig(max_frames_per_token=2)
    for speakers in (torch.tensor([1, 0]), torch.tensor([0, 1])):
        expected = model.inference(ids, lengths, settings, speakers=speakers)
        got = exported.inference(ids, lengths, settings, speakers=speakers)
        assert torch.equal(got.lengths, expected.lengths)
        assert float((got.mel - expected.mel).abs().max()) < 1e-3
    assert float((got.mel[0] - got.mel[1]).abs().max()) > 1e-2  # the same text, two speakers
    with pytest.raises(TTSError, match="this export speaks as 2 speakers"):
        exported.inference(ids, lengths, settings)


@pytest.mark.skipif(shutil.which("flite") is None, reason="flite not installed (make system-deps)")
def test_the_recipe_shares_the_sentences_among_the_voices(tmp_path):
    import soundfile as sf

    recipe = [sys.executable, str(ROOT / "recipes/synthetic/prepare.py"), "--size", "8", "--n-val", "1",
              "--n-test", "1", "--jobs", "2"]
    out = subprocess.run(recipe + ["--out", str(tmp_path / "ms"), "--speakers", "awb,rms"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    utterances = read_metadata(tmp_path / "ms")
    assert [u.id for u in utterances[:4]] == ["awb-00001", "rms-00001", "awb-00002", "rms-00002"]
    assert {u.speaker for u in utterances} == {"awb", "rms"} and len(utterances) == 8
    for split in ("val", "test"):
        assert sorted(i.split("-")[0] for i in read_split(tmp_path / "ms", split)) == ["awb", "rms"]
    awb, _ = sf.read(tmp_path / "ms" / "wavs" / "awb-00001.wav")
    rms, _ = sf.read(tmp_path / "ms" / "wavs" / "rms-00001.wav")
    assert awb.shape != rms.shape  # two voices, two sentences
    unknown = subprocess.run(recipe + ["--out", str(tmp_path / "x"), "--speakers", "awb,hal"], capture_output=True,
                             text=True)
    assert unknown.returncode == 2 and "unknown voice 'hal' (choose from slt, ked, kal, awb" in unknown.stderr
    assert not (tmp_path / "x" / "metadata.csv").exists()


def test_evaluation_says_each_utterance_as_its_speaker_and_scores_each_speaker(two_speaker_corpus,
                                                                               two_speaker_checkpoint, tmp_path):
    from tts.config import InferenceConfig
    from tts.evaluation.held_out import evaluate
    from tts.synthesis import Synthesizer

    synth = Synthesizer(checkpoint.load(two_speaker_checkpoint),
                        settings=InferenceConfig(max_frames_per_token=2, vocoder="griffin-lim"))
    summary = evaluate(synth, two_speaker_corpus, tmp_path / "eval", split="train", use_asr=False, use_mos=False,
                       progress=False)
    speaker_of = {u.id: u.speaker for u in read_metadata(two_speaker_corpus)}
    rows = json.loads((tmp_path / "eval" / "utterances.json").read_text())
    assert rows and all(r["speaker"] == speaker_of[r["id"]] and -1 <= r["secs"] <= 1 for r in rows)
    assert set(summary["speakers"]) == set(SPEAKERS)
    assert sum(s["utterances"] for s in summary["speakers"].values()) == len(rows)
    shares = [s["identified"] * s["utterances"] for s in summary["speakers"].values()]
    assert summary["speaker_identified"] == pytest.approx(sum(shares) / len(rows), abs=1e-3)
    # every sentence said as one speaker (a voice's closest to a speaker it does not know)
    evaluate(synth, two_speaker_corpus, tmp_path / "as_slt", split="train", use_asr=False, use_mos=False,
             progress=False, speaker="slt")
    rows = json.loads((tmp_path / "as_slt" / "utterances.json").read_text())
    assert {r.get("said_as", r["speaker"]) for r in rows} == {"slt"} and {r["speaker"] for r in rows} == set(SPEAKERS)
    with pytest.raises(TTSError, match="unknown speaker 'kal'"):
        evaluate(synth, two_speaker_corpus, tmp_path / "as_kal", split="train", use_asr=False, use_mos=False,
                 progress=False, speaker="kal")


def test_the_speaker_encoder_tells_two_voices_apart(tmp_path):
    """Resemblyzer's GE2E weights through our encoder: two sentences of one flite voice are closer
    to each other than either is to another voice's."""
    if shutil.which("flite") is None:
        pytest.skip("flite not installed (make system-deps)")
    from tts.data.engines import speak
    from tts.metrics.speaker import SpeakerSimilarity

    meter = SpeakerSimilarity()
    awb = [meter.embed(speak(text, "awb", 22050), 22050) for text in
           ("The birch canoe slid on the smooth planks.", "Glue the sheet to the dark blue background.")]
    rms = meter.embed(speak("The birch canoe slid on the smooth planks.", "rms", 22050), 22050)
    assert awb[0].shape == (256,) and np.linalg.norm(awb[0]) == pytest.approx(1.0, abs=1e-4)
    same, different = meter.similarity(awb[0], awb[1]), max(meter.similarity(a, rms) for a in awb)
    assert same > different + 0.05, (same, different)  # measured: 0.80 against 0.71


def test_adapting_to_a_new_speaker_keeps_the_known_ones(two_speaker_checkpoint, tmp_path):
    """Warm-started from a model of awb and slt on a corpus of kal alone: the table grows to three,
    the known rows are kept and the newcomer starts at their mean."""
    from tts.training.trainer import Trainer

    root = make_tiny_corpus(tmp_path / "kal")
    utterances = read_metadata(root)
    for utt in utterances:
        utt.speaker = "kal"
    write_metadata(root, utterances)
    compute_features(root, config_from_dict(tiny_config_dict()), num_workers=1, progress=False)
    d = tiny_config_dict()
    d["train"].update(max_steps=1, checkpoint_every=1, validate_every=1, n_val_audio=0,
                      warm_start=str(two_speaker_checkpoint))
    trainer = Trainer(config_from_dict(d), root, tmp_path / "adapted", progress=False)
    assert trainer.config.model.speakers.names == ["awb", "slt", "kal"]
    source = checkpoint.read(two_speaker_checkpoint).weights["speaker_table.weight"]
    assert trainer.model.speaker_table is not None
    table = trainer.model.speaker_table.weight.detach()
    torch.testing.assert_close(table[:2], source)
    torch.testing.assert_close(table[2], source.mean(dim=0))
    trainer.fit()
    assert checkpoint.load(tmp_path / "adapted" / "checkpoint_00000001.pt").model.speaker_names == ["awb", "slt", "kal"]


def test_the_service_offers_each_voice_s_speakers(two_speaker_checkpoint, tiny_experiment):
    pytest.importorskip("httpx")
    from starlette.testclient import TestClient

    from tts.serve import Limits, create_app, load_service

    service = load_service({"two": str(two_speaker_checkpoint), "one": str(tiny_experiment / "checkpoint_00000004.pt")},
                           ["griffin-lim"], "cpu", Limits(timeout=60))
    fast = {"max_frames_per_token": 2}
    with TestClient(create_app(service)) as client:
        assert client.get("/health").json()["speakers"] == {"two": SPEAKERS, "one": []}
        said = client.post("/synthesize?format=json", json={"text": "A cat.", "voice": "two", "speaker": "slt",
                                                            "settings": fast})
        assert said.status_code == 200 and said.json()["speaker"] == "slt"
        default = client.post("/synthesize?format=json", json={"text": "A cat.", "voice": "two", "settings": fast})
        assert default.status_code == 200 and default.json()["speaker"] == "awb"  # the first, when none is named
        streamed = client.post("/synthesize?stream=1", json={"text": "A cat.", "voice": "two", "speaker": "awb",
                                                             "settings": fast})
        assert streamed.status_code == 200 and streamed.content[:4] == b"RIFF"
        for body, status, message in (
                ({"voice": "two", "speaker": "kal"}, 404, "voice 'two' has no speaker 'kal' (it has awb, slt)"),
                ({"voice": "two", "speaker": ["awb"]}, 400, "speaker must be a name (a string), not list"),
                ({"voice": "one", "speaker": "awb"}, 400, "voice 'one' has one speaker: send no speaker")):
            answer = client.post("/synthesize", json={"text": "A cat.", **body})
            assert answer.status_code == status and answer.json()["error"] == message
        assert client.get("/health").json()["status"] == "ok"  # and it keeps serving


def test_a_minutes_subset_trains_on_part_of_the_split_and_shares_the_rest(tiny_corpus, tmp_path):
    import yaml

    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(tiny_config_dict()))
    recipe = [sys.executable, str(ROOT / "egs/synthetic/minutes_subset.py"), "--data", str(tiny_corpus),
              "--config", str(config), "--out", str(tmp_path / "part")]
    done = subprocess.run(recipe + ["--minutes", "0.03"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    part = tmp_path / "part"
    info = json.loads((part / "subset.json").read_text())
    assert info["minutes"] >= 0.03 and 0 < len(read_split(part, "train")) < len(read_split(tiny_corpus, "train"))
    assert set(read_split(part, "train")) <= set(read_split(tiny_corpus, "train"))
    assert read_split(part, "test") == read_split(tiny_corpus, "test") and (part / "features").is_symlink()
    too_much = subprocess.run(recipe[:-1] + [str(tmp_path / "all"), "--minutes", "600"], capture_output=True, text=True)
    assert too_much.returncode == 2 and "fewer than the 600 asked for" in too_much.stderr
    assert not (tmp_path / "all").exists()


def test_the_command_names_the_known_speakers_and_writes_nothing(two_speaker_checkpoint, tmp_path, capsys):
    from tts import cli

    out = tmp_path / "x.wav"
    code = cli.main(["synthesize", "--checkpoint", str(two_speaker_checkpoint), "--speaker", "kal", "--text", "Hi.",
                     "--out", str(out), "--vocoder", "griffin-lim"])
    assert code == 2 and not out.exists()
    assert capsys.readouterr().err.strip() == "error: unknown speaker 'kal': this voice knows awb, slt"
    assert cli.main(["synthesize", "--checkpoint", str(two_speaker_checkpoint), "--speaker", "slt", "--text", "Hi.",
                     "--out", str(out), "--vocoder", "griffin-lim", "--max-frames-per-token", "2"]) == 0
    assert out.is_file()


def test_the_robustness_suite_needs_a_speaker_of_a_voice_of_several(two_speaker_checkpoint, tmp_path):
    from tts.evaluation.robustness import run_suite
    from tts.synthesis import Synthesizer

    synth = Synthesizer(checkpoint.load(two_speaker_checkpoint))
    with pytest.raises(TTSError, match="speaks as 2 speakers: choose one of awb, slt"):
        run_suite(synth, tmp_path / "suite", use_asr=False, use_mos=False, progress=False)
    assert not (tmp_path / "suite").exists()  # refused before any work


def test_a_ge2e_model_trains_on_each_recording_s_d_vector_and_speaks_with_each_speaker_s_mean(two_speaker_corpus,
                                                                                           tmp_path):
    """``vectors: ge2e``: training items carry their recordings' d-vectors (cached beside the
    features), the table holds each speaker's mean and never moves, the projection learns."""
    from tts.data.speaker_vectors import CACHE_NAME, utterance_vectors
    from tts.training.trainer import Trainer

    d = speaker_config(vectors="ge2e")
    d["train"].update(max_steps=2, checkpoint_every=2, validate_every=2, n_val_audio=0)
    trainer = Trainer(config_from_dict(d), two_speaker_corpus, tmp_path / "exp", progress=False)
    assert trainer.model.fixed_parameters == ("speaker_table.weight",)
    table = trainer.model.speaker_table.weight.detach().clone()
    assert table.shape == (2, 256) and not trainer.model.speaker_table.weight.requires_grad
    train_ids = read_split(two_speaker_corpus, "train")
    vectors = utterance_vectors(two_speaker_corpus, train_ids, progress=False)
    assert (two_speaker_corpus / "features" / CACHE_NAME).is_file()
    speaker_of = {u.id: u.speaker for u in read_metadata(two_speaker_corpus)}
    for row, name in enumerate(SPEAKERS):
        mean = np.mean([vectors[i] for i in train_ids if speaker_of[i] == name], axis=0)
        assert torch.allclose(table[row], torch.from_numpy(mean / np.linalg.norm(mean)), atol=1e-5)
    assert not torch.allclose(table[0], table[1])
    batch = trainer.train_set.collate(2)([trainer.train_set[0], trainer.train_set[1]])
    assert batch.speaker_vectors is not None and batch.speaker_vectors.shape == (2, 256)
    trainer.fit()
    trained = checkpoint.load(tmp_path / "exp" / "checkpoint_00000002.pt")
    assert trained.config.model.speakers.vectors == "ge2e"
    torch.testing.assert_close(trained.model.speaker_table.weight, table)     # data, not learnt
    assert trained.model.speaker_projection.weight.abs().sum() > 0               # learnt from zero
    with pytest.raises(TTSError, match=r"speaker vectors must be \(1, 256\), got \(1, 64\)"):
        trained.model.encode(torch.tensor([[1, 2]]), torch.tensor([2]), None, torch.zeros(1, 64))

    # a recording of anyone: its d-vector, said without training on it (and the same as its row when it is a centroid)
    from tts.config import InferenceConfig
    from tts.synthesis import Synthesizer

    synth = Synthesizer(trained, settings=InferenceConfig(max_frames_per_token=2, vocoder="griffin-lim"))
    wav = next(two_speaker_corpus.glob("wavs/*.wav"))
    vector = synth.speaker_vector(wav)
    assert vector.shape == (256,) and np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-4)
    as_recording = synth("A cat.", speaker=vector)[0]
    row = trained.model.speaker_table.weight[0].detach().numpy()
    torch.testing.assert_close(torch.from_numpy(synth("A cat.", speaker=row)[0].mel),
                               torch.from_numpy(synth("A cat.", speaker="awb")[0].mel))
    assert as_recording.mel.shape[0] == 80
    with pytest.raises(TTSError, match="a d-vector has 256 finite numbers"):
        synth("A cat.", speaker=np.full(256, np.nan, dtype=np.float32))
    out = tmp_path / "said.wav"
    from tts import cli

    assert cli.main(["synthesize", "--checkpoint", str(tmp_path / "exp" / "checkpoint_00000002.pt"), "--text",
                     "A cat.", "--speaker-wav", str(wav), "--out", str(out), "--vocoder", "griffin-lim",
                     "--max-frames-per-token", "2"]) == 0
    assert out.is_file()


def test_a_voice_of_named_speakers_refuses_a_recording(two_speaker_checkpoint, two_speaker_corpus, capsys):
    from tts import cli
    from tts.synthesis import Synthesizer

    synth = Synthesizer.from_checkpoint(two_speaker_checkpoint)
    with pytest.raises(TTSError, match="only a voice trained on d-vectors .* knows its speakers by name: awb, slt"):
        synth.speaker_vector(next(two_speaker_corpus.glob("wavs/*.wav")))
    with pytest.raises(TTSError, match="a speaker given as a d-vector needs a voice trained on d-vectors"):
        synth("A cat.", speaker=np.zeros(256, dtype=np.float32))
    with pytest.raises(SystemExit) as stopped:  # one or the other
        cli.main(["synthesize", "--checkpoint", str(two_speaker_checkpoint), "--text", "A cat.",
                  "--speaker-wav", "x.wav", "--speaker", "awb", "--out", "x.wav"])
    assert stopped.value.code == 2 and "not allowed with argument --speaker-wav" in capsys.readouterr().err
