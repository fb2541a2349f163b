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


def test_cli_exports_a_checkpoint_and_synthesizes_with_the_onnx_engine(tiny_experiment, tmp_path):
    ckpt = tiny_experiment / "checkpoint_00000004.pt"
    tts = [sys.executable, "-m", "tts.cli"]
    out = subprocess.run(tts + ["export", str(ckpt), "--format", "onnx", "--out", str(tmp_path / "onnx")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "wrote" in out.stdout and (tmp_path / "onnx" / "step.onnx").is_file()
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
