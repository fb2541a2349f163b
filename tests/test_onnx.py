"""ONNX export and its onnxruntime synthesizer: the same mels, stop steps and alignments as
PyTorch for Tacotron2 with every attention mechanism and for Transformer-TTS, run through the
same decoding loop; a neural vocoder's export; the command line; what is refused."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import tiny_config_dict

from tts.checkpoint import LoadedModel
from tts.config import InferenceConfig, config_from_dict
from tts.data import read_split
from tts.errors import TTSError
from tts.models import build_model
from tts.onnx import export_onnx, load_onnx
from tts.synthesis import Synthesizer
from tts.text import SymbolInventory
from tts.vocoders import GriffinLim, HiFiGANGenerator, VocosGenerator

pytest.importorskip("onnxruntime")

KINDS = ["content", "dynamic_convolution", "forward", "gmm", "hard", "hybrid", "location", "location_sensitive",
         "luong_concat", "luong_dot", "luong_general", "luong_local_m", "luong_local_p", "stepwise_monotonic"]
#: the largest difference of a mel frame from PyTorch's (float32 graphs; operators fused differently)
MEL_TOLERANCE = 1e-4
TRANSFORMER = {"name": "transformer_tts", "transformer_tts": {
    "embedding_dim": 32, "d_model": 32, "heads": 2, "encoder_layers": 1, "decoder_layers": 2, "ffn_dim": 64,
    "decoder_prenet_dims": [32, 32], "postnet": {"layers": 2, "channels": 32}, "reduction_factor": 2,
    "guided_heads": [[-1, 0]]}}


def loaded_model(model_section: dict, seed: int = 0) -> LoadedModel:
    d = tiny_config_dict()
    d["model"] = model_section
    config = config_from_dict(d)
    torch.manual_seed(seed)
    model = build_model(config.model, len(SymbolInventory()), config.audio).eval()
    return LoadedModel(model, config, SymbolInventory(), 0, Path("random-weights.pt"))


def tacotron2(kind: str) -> dict:
    section = tiny_config_dict()["model"]
    section["tacotron2"]["attention"] = {"kind": kind, "attention_dim": 32}
    return section


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    """Three texts of different lengths (random ids: untrained models make no sense of real ones)."""
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(1, len(SymbolInventory()), (3, 15), generator=generator)
    lengths = torch.tensor([15, 9, 4])
    for i, n in enumerate(lengths):
        ids[i, n:] = 0
    return ids, lengths


def assert_same_decoding(loaded: LoadedModel, folder: Path, settings: InferenceConfig) -> None:
    ids, lengths = batch()
    expected = loaded.model.inference(ids, lengths, settings)
    got = load_onnx(folder).model.inference(ids, lengths, settings)
    assert torch.equal(got.lengths, expected.lengths)                   # the same stop step for every item
    assert torch.equal(got.hit_limit, expected.hit_limit)
    assert got.mel.shape == expected.mel.shape
    assert float((got.mel - expected.mel).abs().max()) < MEL_TOLERANCE
    assert float((got.alignments - expected.alignments).abs().max()) < MEL_TOLERANCE
    assert float((got.stop_probs - expected.stop_probs).abs().max()) < MEL_TOLERANCE
    if expected.attention_heads is not None:
        assert got.attention_heads is not None
        assert float((got.attention_heads - expected.attention_heads).abs().max()) < MEL_TOLERANCE


@pytest.mark.parametrize("kind", KINDS)
def test_tacotron2_exports_with_every_attention_and_decodes_as_pytorch(kind, tmp_path):
    loaded = loaded_model(tacotron2(kind))
    export_onnx(loaded, None, "griffin-lim", tmp_path / "onnx")
    manifest = json.loads((tmp_path / "onnx" / "onnx.json").read_text())
    assert manifest["model"]["attention"] == kind and manifest["vocoder"] is None
    assert "attention.memory" in manifest["state"] and "attention.memory" not in manifest["carried"]
    assert "attention.weights" in manifest["carried"]
    # the attention window narrows every step after the first: exported as an explicit input
    settings = InferenceConfig(max_frames_per_token=3, stop_threshold=0.52, attention_window=[1, 2])
    assert_same_decoding(loaded, tmp_path / "onnx", settings)


def test_transformer_tts_exports_its_caches_and_heads(tmp_path):
    loaded = loaded_model(TRANSFORMER)
    export_onnx(loaded, None, "griffin-lim", tmp_path / "onnx")
    manifest = json.loads((tmp_path / "onnx" / "onnx.json").read_text())
    assert manifest["heads"] and {"step", "cache.0.k", "cache.1.v"} <= set(manifest["carried"])
    assert "memory_kv.0.k" in manifest["state"] and "memory_kv.0.k" not in manifest["carried"]
    assert_same_decoding(loaded, tmp_path / "onnx", InferenceConfig(max_frames_per_token=3, stop_threshold=0.51))


@pytest.mark.parametrize("kind", ["hifigan", "vocos"])
def test_the_neural_vocoder_exports_and_vocodes_as_pytorch(tmp_path, kind):
    """Both generator kinds; Vocos's inverse STFT is a transposed convolution, which ONNX keeps."""
    loaded = loaded_model(tacotron2("location_sensitive"))
    from tts.config.vocoder import HiFiGANConfig, VocosConfig

    torch.manual_seed(0)
    audio = loaded.config.audio
    vocoder = (HiFiGANGenerator(HiFiGANConfig(upsample_initial_channel=32), audio) if kind == "hifigan"
               else VocosGenerator(VocosConfig(dim=32, hidden=64, layers=2), audio)).for_inference()
    export_onnx(loaded, vocoder, "student.pt", tmp_path / "onnx")
    exported = load_onnx(tmp_path / "onnx")
    assert exported.vocoder_name == "student.pt" and exported.vocoder is not None
    assert exported.vocoder.context_frames == vocoder.context_frames
    mel = torch.randn(2, loaded.config.audio.n_mels, 30) - 4
    lengths = torch.tensor([30, 17])
    expected, expected_lengths = vocoder(mel, lengths)
    got, got_lengths = exported.vocoder(mel, lengths)
    assert torch.equal(got_lengths, expected_lengths) and got.shape == expected.shape
    assert float((got - expected).abs().max()) < 1e-4
    assert float(got[1, int(got_lengths[1]):].abs().max()) == 0.0          # silent past its length


def test_export_writes_a_new_folder_whole_and_refuses_a_foreign_one(tmp_path):
    loaded = loaded_model(tacotron2("location_sensitive"))
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "mine.txt").write_text("keep me")
    with pytest.raises(TTSError, match="exists and is not an earlier ONNX export"):
        export_onnx(loaded, GriffinLim(loaded.config.audio), "griffin-lim", foreign)
    assert [p.name for p in foreign.iterdir()] == ["mine.txt"]
    out = export_onnx(loaded, GriffinLim(loaded.config.audio), "griffin-lim", tmp_path / "onnx")
    export_onnx(loaded, None, "griffin-lim", out)                         # an earlier export is replaced
    assert sorted(p.name for p in out.iterdir()) == ["encoder.onnx", "init.onnx", "onnx.json", "postnet.onnx",
                                                     "step.onnx"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]   # no staging folder left behind
    with pytest.raises(TTSError, match="is not an ONNX export"):
        load_onnx(foreign)


def test_cli_exports_a_checkpoint_and_synthesizes_with_the_onnx_engine(tiny_experiment, tiny_corpus, tmp_path):
    ckpt = tiny_experiment / "checkpoint_00000004.pt"
    tts = [sys.executable, "-m", "tts.cli"]
    for name, int8 in (("onnx", []), ("onnx_int8", ["--int8"])):
        out = subprocess.run(tts + ["export", str(ckpt), "--format", "onnx", *int8, "--out", str(tmp_path / name)],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert "wrote" in out.stdout and (tmp_path / name / "step.onnx").is_file()
        assert "shape_type_inference" not in out.stderr            # the exporter's C++ notes are dropped
    # the int8 export evaluated as any checkpoint is, and said to be int8
    out = subprocess.run(tts + ["evaluate", "--engine", "onnx", "--checkpoint", str(tmp_path / "onnx_int8"),
                                "--data", str(tiny_corpus), "--limit", "2", "--no-asr", "--no-mos",
                                "--max-frames-per-token", "2", "--out", str(tmp_path / "evaluated")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "evaluated" / "summary.json").read_text())
    assert summary["precision"] == "int8" and summary["utterances"] == len(read_split(tiny_corpus, "test")[:2])
    fast = ["--max-frames-per-token", "2", "inference.griffin_lim.iterations=2"]
    for engine, checkpoint in (("onnx", tmp_path / "onnx"), ("torch", ckpt)):
        out = subprocess.run(tts + ["synthesize", "--engine", engine, "--checkpoint", str(checkpoint), "--text",
                                    "A cat sat.", "--out", str(tmp_path / f"{engine}.wav"), "--no-plots", *fast],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
    mels = [np.load(tmp_path / f"{engine}.npy") for engine in ("onnx", "torch")]
    assert mels[0].shape == mels[1].shape and np.abs(mels[0] - mels[1]).max() < MEL_TOLERANCE
    bad = subprocess.run(tts + ["synthesize", "--engine", "onnx", "--checkpoint", str(ckpt), "--text", "A cat.",
                                "--out", str(tmp_path / "x.wav")], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "is not an ONNX export" in bad.stderr
    assert not (tmp_path / "x.wav").exists()
    # what keys an interrupted evaluation's journal: the export's files, not the checkpoint it came from
    exported = Synthesizer.from_onnx(tmp_path / "onnx").fingerprint()
    assert exported == Synthesizer.from_onnx(tmp_path / "onnx").fingerprint()
    assert exported != Synthesizer.from_checkpoint(ckpt).fingerprint()


def _damaged(folder: Path, case: str) -> str:
    """Damage an export as ``case`` says; returns the file the error must name."""
    manifest = folder / "onnx.json"
    data = json.loads(manifest.read_text())
    if case == "manifest not JSON":
        manifest.write_text("{not json")
    elif case == "manifest lacks a key":
        del data["carried"]
        manifest.write_text(json.dumps(data))
    elif case == "symbol table five short":
        data["symbols"]["symbols"] = data["symbols"]["symbols"][:-5]
        manifest.write_text(json.dumps(data))
    elif case == "graph swapped":
        shutil.copy(folder / "encoder.onnx", folder / "step.onnx")
        return "step.onnx"
    elif case == "graph truncated":
        blob = (folder / "postnet.onnx").read_bytes()
        (folder / "postnet.onnx").write_bytes(blob[: len(blob) // 3])
        return "postnet.onnx"
    elif case == "graph missing":
        (folder / "init.onnx").unlink()
        return "init.onnx"
    return "onnx.json"


@pytest.mark.parametrize("case, message", [
    ("manifest not JSON", "is not valid JSON"),
    ("manifest lacks a key", "lacks 'carried'"),
    ("symbol table five short", "symbols, but the model reads"),
    ("graph swapped", "is not the graph the manifest describes"),
    ("graph truncated", "is not a loadable ONNX graph"),
    ("graph missing", "is missing: the export is incomplete"),
])
def test_a_damaged_export_is_one_error_naming_the_file(case, message, tmp_path, capsys):
    from tts import cli

    loaded = loaded_model(tacotron2("location_sensitive"))
    folder = export_onnx(loaded, None, "griffin-lim", tmp_path / "onnx")
    named = _damaged(folder, case)
    with pytest.raises(TTSError, match=message) as refused:
        load_onnx(folder)
    assert named in str(refused.value)
    out = tmp_path / "x.wav"
    assert cli.main(["synthesize", "--engine", "onnx", "--checkpoint", str(folder), "--text", "Hi.",
                     "--out", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and named in lines[0] and not out.exists()


def test_prenet_dropout_is_refused_by_the_export_and_by_the_graphs(tmp_path):
    """The graphs decode with the prenet's dropout off: a model meant to decode with it is not exported
    silently without it, and asking the graphs for it is one error."""
    from tts.onnx.export import export_checkpoint

    with pytest.raises(TTSError, match="export with inference.prenet_dropout=false"):
        export_checkpoint(None, tmp_path / "refused", {"prenet_dropout": True})
    assert not (tmp_path / "refused").exists()
    folder = export_onnx(loaded_model(tacotron2("location_sensitive")), None, "griffin-lim", tmp_path / "onnx")
    with pytest.raises(TTSError, match="ONNX graphs decode with the prenet's dropout off"):
        load_onnx(folder).model.inference(torch.tensor([[5, 6, 7, 1]]), None, InferenceConfig(prenet_dropout=True))


def _first_step(folder: Path) -> torch.Tensor:
    """An export's first free-running frames ``(B, r, n_mels)`` for :func:`batch`."""
    model = load_onnx(folder).model
    ids, lengths = batch()
    memory, mask = model.encode(ids, lengths)
    state = model.init_decoder(memory, mask)
    frame = torch.full((ids.shape[0], model.n_mels), model.go_value)
    return model.step(frame, state, None).frames


@pytest.mark.parametrize("name, size_ratio", [("location_sensitive", 0.5), ("transformer_tts", 0.9)])
def test_an_int8_export_quantizes_the_decoder_step_only_and_stays_near_float32(name, size_ratio, tmp_path):
    """Its matrix products' weights in uint8 (Transformer-TTS's tiny step holds more else than weights)."""
    import onnx

    loaded = loaded_model(TRANSFORMER if name == "transformer_tts" else tacotron2(name))
    float32 = export_onnx(loaded, None, "griffin-lim", tmp_path / "fp32")
    int8 = export_onnx(loaded, None, "griffin-lim", tmp_path / "int8", int8=True)
    assert json.loads((int8 / "onnx.json").read_text())["int8"] == ["step.onnx"]
    assert json.loads((float32 / "onnx.json").read_text())["int8"] == []
    operators = {node.op_type for node in onnx.load(str(int8 / "step.onnx")).graph.node}
    assert "MatMulInteger" in operators
    assert (int8 / "step.onnx").stat().st_size < size_ratio * (float32 / "step.onnx").stat().st_size
    for graph in ("encoder.onnx", "init.onnx", "postnet.onnx"):   # run once a sentence: left in float32
        assert (int8 / graph).read_bytes() == (float32 / graph).read_bytes()
    ours, theirs = _first_step(float32), _first_step(int8)
    difference = float((ours - theirs).abs().mean() / ours.abs().mean())
    assert 0 < difference < 0.05
    assert Synthesizer.from_onnx(int8).precision == "int8" and Synthesizer.from_onnx(float32).precision == "fp32"


def test_onnxruntime_multiplies_extreme_int8_bytes_exactly_on_this_cpu():
    """What an int8 export relies on: uint8 × uint8 products summed without saturation, for one row
    and many (a CPU where this fails refuses int8 exports, as the next test shows)."""
    from tts.onnx.int8 import int8_product_error

    assert int8_product_error() < 1e-5
    # and it tells kernels apart: signed weights miss on every CPU (pair sums saturate in 16 bits
    # without VNNI, 49 % off on an emulated Zen 3; with VNNI their symmetric scale alone is 3e-4 off)
    assert int8_product_error(signed_weights=True) > 1e-4


def test_an_int8_export_is_refused_where_the_products_are_inexact(tmp_path, monkeypatch, capsys):
    from tts import cli
    from tts.onnx import int8

    folder = export_onnx(loaded_model(tacotron2("location_sensitive")), None, "griffin-lim", tmp_path / "onnx",
                         int8=True)
    monkeypatch.setattr(int8, "int8_product_error", lambda: 0.125)
    with pytest.raises(TTSError, match=r"12.5 % off exact sums: export without --int8"):
        load_onnx(folder)
    assert cli.main(["synthesize", "--engine", "onnx", "--int8", "--checkpoint", str(folder), "--text", "Hi.",
                     "--out", str(tmp_path / "x.wav")]) == 2
    assert "drop --int8, --bf16 and --device" in capsys.readouterr().err
    assert cli.main(["export", "--int8", "--out", str(tmp_path / "x.pt"), str(tmp_path / "any.pt")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["error: --int8 quantizes an ONNX export's decoder step: add --format onnx (a .pt decodes in "
                     "int8 with 'tts synthesize --int8')"]
    assert not (tmp_path / "x.pt").exists() and not (tmp_path / "x.wav").exists()
