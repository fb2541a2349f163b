"""Write a trained voice as ONNX graphs: ``export_onnx(loaded, vocoder, out)``.

The folder holds five graphs and a manifest:

* ``encoder.onnx``: ids ``(B, T_text)`` int64, lengths ``(B,)`` (and, for a multi-speaker model,
  speakers ``(B,)`` int64: indices into the manifest's ``model.speakers``) → memory ``(B, T_text, D)``;
* ``init.onnx``: memory, lengths → the decoder state before the first step, as named tensors;
* ``step.onnx``: one free-running step with its heads: the previous frame ``(B, n_mels)``, the
  attention window ``(B, T_text)`` bool (the text mask when there is none) and the state →
  frames ``(B, r, n_mels)``, stop probability ``(B,)``, alignment ``(B, T_text)`` (multi-head
  models: every head ``(B, L, H, T_text)`` too) and the state tensors the step changes (named
  ``next.<name>``);
* ``postnet.onnx``: mel before the postnet ``(B, n_mels, T_mel)``, lengths → the refined mel;
* ``vocoder.onnx`` (a neural vocoder): mel ``(1, n_mels, T_mel)`` → waveform ``(1, T_wav)``;
* ``onnx.json``: the model's config and symbols, the state's tensor names and which of them a
  step carries forward (the rest, such as the memory and its projections, stay as they were), and
  ``int8``: the graphs whose weights are uint8 (``--int8``, :mod:`tts.onnx.int8`; empty: all float32).

The decoder state is the model's own (:class:`tts.models.decoding.TensorState`): every attention
mechanism whose step traces into ONNX operators exports, with its state as explicit inputs and
outputs. :mod:`tts.onnx.runtime` runs the graphs through the same decoding loop as PyTorch.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator, Mapping

import torch
from torch import nn

from tts import checkpoint
from tts.checkpoint import LoadedModel
from tts.config import resolve_inference, to_dict
from tts.errors import TTSError, brief
from tts.models import AutoregressiveTTS
from tts.models.layers import sequence_mask
from tts.onnx.int8 import QUANTIZED, quantize_step
from tts.vocoder_loader import vocoder_for
from tts.vocoders import GriffinLim, Vocoder
from tts.vocoders.catalogue import resolve

FORMAT, VERSION, OPSET = "tts-onnx", 1, 17
MANIFEST = "onnx.json"
#: the step's output of a state tensor ``name`` is ``NEXT + name`` (a graph's values need unique names)
NEXT = "next."


class EncoderGraph(nn.Module):
    def __init__(self, model: AutoregressiveTTS):
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor, speakers: torch.Tensor | None = None) -> torch.Tensor:
        return self.model.add_speakers(self.model.encode_tokens(ids, sequence_mask(lengths, ids.shape[1])), speakers)


class InitGraph(nn.Module):
    def __init__(self, model: AutoregressiveTTS):
        super().__init__()
        self.model = model

    def forward(self, memory: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(self.model.init_decoder(memory, sequence_mask(lengths, memory.shape[1])).tensors().values())


class StepGraph(nn.Module):
    """``(frame, window, *state) → (frames, stop_prob, alignment[, heads], *carried state)``."""

    def __init__(self, model: AutoregressiveTTS, names: list[str], carried: list[str], heads: bool):
        super().__init__()
        self.model, self.names, self.carried, self.heads = model, names, carried, heads

    def forward(self, frame: torch.Tensor, window: torch.Tensor, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        step = self.model.step(frame, self.model.state_from_tensors(dict(zip(self.names, tensors))), window)
        after = step.state.tensors()
        attended = (step.attended.alignment, step.attended.heads) if self.heads else (step.attended.alignment,)
        return (step.frames, step.stop_prob, *attended, *(after[name] for name in self.carried))


class PostnetGraph(nn.Module):
    def __init__(self, model: AutoregressiveTTS):
        super().__init__()
        self.model = model

    def forward(self, mel_before: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.model.refine(mel_before, lengths)


class VocoderGraph(nn.Module):
    def __init__(self, vocoder: Vocoder):
        super().__init__()
        self.vocoder = vocoder

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        return self.vocoder(mel, None)[0]


def _dynamic(names: list[str], tensors: list[torch.Tensor]) -> dict[str, dict[int, str]]:
    """Every axis of every tensor may change size (batch, text length, cache length)."""
    return {name: {axis: f"{name}:{axis}" for axis in range(t.dim())} for name, t in zip(names, tensors)}


@contextlib.contextmanager
def _native_notes_dropped() -> Iterator[None]:
    """Drop what C++ code writes to the standard error stream (file descriptor 2) while the block
    runs: the exporter's shape-inference notes on packed sequences, which every Tacotron2 encoder
    prints and no user can act on (a failed export is one ``error:`` line)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "wb") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _write_graph(module: nn.Module, args: tuple[torch.Tensor, ...], path: Path, inputs: list[str],
                 outputs: list[str], what: str) -> None:
    module.eval()
    try:
        with warnings.catch_warnings(), torch.no_grad(), _native_notes_dropped():
            warnings.simplefilter("ignore")  # the tracer's notes on Python values it records as constants
            torch.onnx.export(module, args, str(path), dynamo=False, opset_version=OPSET, input_names=inputs,
                              output_names=outputs, dynamic_axes=_dynamic(inputs, list(args)), do_constant_folding=True)
    except Exception as exc:  # noqa: BLE001 - the exporter raises many kinds; the user needs the first line
        raise TTSError(f"{what} does not export to ONNX ({brief(exc, 200)})") from None


def _example(model: AutoregressiveTTS) -> tuple[torch.Tensor, torch.Tensor]:
    """Two items of different lengths, so that masks and padding are traced as they are used."""
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(1, model.n_symbols, (2, 12), generator=generator)
    lengths = torch.tensor([12, 9])
    ids[1, 9:] = 0
    return ids, lengths


def export_onnx(loaded: LoadedModel, vocoder: Vocoder | None, vocoder_name: str, out: str | Path,
                int8: bool = False) -> Path:
    """Write ``loaded``'s model (and ``vocoder``, when it is a neural one; ``vocoder_name`` is what
    ``inference.vocoder`` calls it) as ONNX graphs to the folder ``out`` (see the module's notes),
    the decoder step with uint8 weights when ``int8`` (:func:`tts.onnx.int8.quantize_step`).
    A folder of files other than an earlier export is refused; the export appears whole or not at all."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MANIFEST).is_file())):
        raise TTSError(f"--out {out} exists and is not an earlier ONNX export: give a new folder")
    model = loaded.model.cpu().eval()
    ids, lengths = _example(model)
    speakers = torch.tensor([0, len(model.speaker_names) - 1]) if model.speaker_names else None
    with torch.no_grad():
        memory, mask = model.encode(ids, lengths, speakers)
        initial = model.init_decoder(memory, mask).tensors()
        names = list(initial)
        # trace a step in the middle of an utterance (non-empty caches, a moved alignment)
        state = model.state_from_tensors(initial)
        frame = memory.new_full((2, model.n_mels), model.go_value)
        for _ in range(2):
            step = model.step(frame, state, mask)
            state, frame = step.state, step.frames[:, -1]
        before = state.tensors()
        after = model.step(frame, model.state_from_tensors(before), mask)
    carried = [name for name, value in after.state.tensors().items() if value is not before[name]]
    heads = after.attended.heads is not None
    parent = out.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    try:
        what = f"{type(model).__name__} with {model.attention_name} attention"
        encoder_inputs = (ids, lengths) if speakers is None else (ids, lengths, speakers)
        _write_graph(EncoderGraph(model), encoder_inputs, staging / "encoder.onnx",
                     ["ids", "lengths", "speakers"][:len(encoder_inputs)], ["memory"], f"the encoder of {what}")
        _write_graph(InitGraph(model), (memory, lengths), staging / "init.onnx", ["memory", "lengths"], names,
                     f"the decoder state of {what}")
        attended = ["alignment", "heads"] if heads else ["alignment"]
        _write_graph(StepGraph(model, names, carried, heads), (frame, mask, *before.values()), staging / "step.onnx",
                     ["frame", "window", *names], ["frames", "stop_prob", *attended, *(NEXT + name for name in carried)],
                     f"the decoder step of {what}")
        mel_lengths = torch.tensor([20, 14])
        _write_graph(PostnetGraph(model), (torch.randn(2, model.n_mels, 20), mel_lengths), staging / "postnet.onnx",
                     ["mel_before", "mel_lengths"], ["mel"], f"the postnet of {what}")
        manifest: dict[str, Any] = {
            "format": FORMAT, "version": VERSION, "step": loaded.step, "source": str(loaded.path),
            "config": to_dict(loaded.config), "symbols": loaded.inventory.to_dict(),
            "model": {"n_symbols": model.n_symbols, "n_mels": model.n_mels, "reduction_factor": model.reduction_factor,
                      "go_value": model.go_value, "mel_pad_value": model.mel_pad_value,
                      "postnet_context_frames": model.postnet.context_frames, "attention": model.attention_name,
                      "speakers": model.speaker_names},
            "state": names, "carried": carried, "heads": heads, "vocoder": None,
            "int8": list(QUANTIZED) if int8 else []}
        if vocoder is not None and not isinstance(vocoder, GriffinLim):
            vocoder = vocoder.cpu().eval()
            _write_graph(VocoderGraph(vocoder), (torch.randn(1, vocoder.audio.n_mels, 16),), staging / "vocoder.onnx",
                         ["mel"], ["waveform"], f"the vocoder {vocoder_name}")
            manifest["vocoder"] = {"name": vocoder_name, "audio": to_dict(vocoder.audio),
                                   "context_frames": vocoder.context_frames}
        if int8:
            quantize_step(staging)
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1))
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out


def export_checkpoint(path: str | Path | None, out: str | Path, changes: Mapping[str, Any] | None = None,
                      int8: bool = False) -> Path:
    """Export the checkpoint at ``path`` (``None``: the bundled model) with its inference settings
    changed by ``changes`` (stored in the export) and the vocoder they name (``griffin-lim``: none
    is exported, the runtime runs it in PyTorch); ``int8``: the decoder step with uint8 weights."""
    loaded = checkpoint.load(path)
    settings = resolve_inference(loaded.config.inference, changes)
    if settings.prenet_dropout:
        raise TTSError("the ONNX graphs decode with the prenet's dropout off, and this model's settings keep it on: "
                       "export with inference.prenet_dropout=false (and check that it still reads), or use the .pt")
    loaded.config = replace(loaded.config, inference=settings)
    vocoder = None
    if resolve(settings.vocoder).neural:
        vocoder = vocoder_for(settings.vocoder)
        vocoder.check_compatible(loaded.audio)
    return export_onnx(loaded, vocoder, settings.vocoder, out, int8)
