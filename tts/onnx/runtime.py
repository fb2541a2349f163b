"""Run an ONNX export (:mod:`tts.onnx.export`) with onnxruntime through the same decoding loop
as PyTorch: :class:`OnnxAcousticModel` is a :class:`~tts.models.decoding.Decodable` whose
encoder, decoder step and postnet are onnxruntime sessions, and :class:`OnnxVocoder` a
:class:`~tts.vocoders.Vocoder` that runs ``vocoder.onnx``. ``load_onnx(folder)`` reads both
with the config and symbols the export carries."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tts.config import AudioConfig, ExperimentConfig, InferenceConfig, config_from_dict
from tts.errors import ConfigError, TTSError, brief
from tts.models.decoding import StepAttention, StepCallback, StepOutput, check_ids, decode
from tts.models.layers import sequence_mask
from tts.models.outputs import InferenceOutput
from tts.onnx.export import FORMAT, MANIFEST, NEXT, VERSION
from tts.onnx.int8 import check_int8_products
from tts.text import SymbolInventory
from tts.vocoders import Vocoder
from tts.vocoders.catalogue import resolve


def _session(path: Path, threads: int) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - onnxruntime's own exception types
        raise TTSError(f"{path} is not a loadable ONNX graph ({brief(exc, 160)}): export it again "
                       f"with 'tts export CKPT --format onnx'") from None


class _Graph:
    """One session, fed by name with only the inputs its graph declares. Its inputs must be among
    ``inputs`` (the exporter drops unused ones) and its outputs exactly ``outputs``: a graph copied
    over another part of the export, or exported for other state, is refused naming the file."""

    def __init__(self, path: Path, threads: int, inputs: list[str], outputs: list[str]):
        if not path.is_file():
            raise TTSError(f"{path} is missing: the export is incomplete, write it again with "
                           f"'tts export CKPT --format onnx'")
        self.session = _session(path, threads)
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.outputs = [o.name for o in self.session.get_outputs()]
        if set(self.inputs) - set(inputs) or self.outputs != outputs:
            raise TTSError(f"{path} is not the graph the manifest describes (inputs {', '.join(self.inputs)}; "
                           f"outputs {', '.join(self.outputs)}; expected outputs {', '.join(outputs)}): "
                           f"a file of another part or another export; export again")

    def __call__(self, **tensors: torch.Tensor) -> dict[str, torch.Tensor]:
        feed = {name: tensors[name].detach().cpu().numpy() for name in self.inputs}
        return {name: torch.from_numpy(np.asarray(value)) for name, value in zip(self.outputs, self.session.run(None, feed))}


@dataclass
class OnnxState:
    """The decoder state between ONNX steps: the named tensors and the text mask ``(B, T_text)``
    (the window of a step that has none)."""

    tensors: dict[str, torch.Tensor]
    mask: torch.Tensor


class OnnxAcousticModel:
    """An exported acoustic model (:class:`~tts.models.decoding.Decodable`); runs on the CPU."""

    def __init__(self, folder: Path, manifest: Manifest, threads: int):
        self.n_symbols, self.n_mels = manifest.integer("model", "n_symbols"), manifest.integer("model", "n_mels")
        self.r = manifest.integer("model", "reduction_factor")
        self.go_value, self.mel_pad_value = manifest.number("model", "go_value"), manifest.number("model", "mel_pad_value")
        self.postnet_context_frames = manifest.integer("model", "postnet_context_frames")
        self.attention_name = str(manifest.get("model", "attention"))
        state, self.carried = manifest.names("state"), manifest.names("carried")
        self.heads = bool(manifest.get("heads"))
        if set(self.carried) - set(state):
            raise TTSError(f"{manifest.path}: 'carried' names state the 'state' list lacks: export again")
        attended = ["alignment", "heads"] if self.heads else ["alignment"]
        # exports made before speakers existed have none
        self.speakers = manifest.names("model", "speakers") if "speakers" in manifest.get("model") else []
        self.encoder = _Graph(folder / "encoder.onnx", threads, ["ids", "lengths"] + (["speakers"] if self.speakers else []),
                              ["memory"])
        self.init = _Graph(folder / "init.onnx", threads, ["memory", "lengths"], state)
        self.decoder_step = _Graph(folder / "step.onnx", threads, ["frame", "window", *state],
                                   ["frames", "stop_prob", *attended, *(NEXT + name for name in self.carried)])
        self.postnet = _Graph(folder / "postnet.onnx", threads, ["mel_before", "mel_lengths"], ["mel"])

    @property
    def reduction_factor(self) -> int:
        return self.r

    def encode(self, ids: torch.Tensor, lengths: torch.Tensor, speakers: torch.Tensor | None = None,
               speaker_vectors: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        check_ids(ids, lengths, self.n_symbols)
        if speaker_vectors is not None:
            raise TTSError("an ONNX export takes its speakers by name; a speaker's recording needs the checkpoint")
        if (speakers is None) != (not self.speakers):
            raise TTSError(f"this export speaks as {len(self.speakers)} speakers: choose one of {', '.join(self.speakers)}"
                           if self.speakers else "this export has one speaker: it takes no speaker")
        feed = {"ids": ids, "lengths": lengths} | ({"speakers": speakers} if speakers is not None else {})
        return self.encoder(**feed)["memory"], sequence_mask(lengths, ids.shape[1])

    def init_decoder(self, memory: torch.Tensor, mask: torch.Tensor) -> OnnxState:
        return OnnxState(self.init(memory=memory, lengths=mask.sum(dim=1)), mask)

    def step(self, frame: torch.Tensor, state: OnnxState, window: torch.Tensor | None) -> StepOutput:
        out = self.decoder_step(frame=frame, window=state.mask if window is None else window, **state.tensors)
        tensors = state.tensors | {name: out[NEXT + name] for name in self.carried}
        attended = StepAttention(out["alignment"], out["heads"] if self.heads else None)
        return StepOutput(out["frames"], out["stop_prob"], attended, OnnxState(tensors, state.mask))

    def refine(self, mel_before: torch.Tensor, mel_lengths: torch.Tensor) -> torch.Tensor:
        return self.postnet(mel_before=mel_before, mel_lengths=mel_lengths)["mel"]

    def inference(self, ids: torch.Tensor, lengths: torch.Tensor | None = None,
                  settings: InferenceConfig | None = None, last_token: torch.Tensor | None = None,
                  on_step: StepCallback | None = None, speakers: torch.Tensor | None = None,
                  speaker_vectors: torch.Tensor | None = None) -> InferenceOutput:
        """The free-running loop of :func:`tts.models.decoding.decode`, on the exported graphs."""
        return decode(self, ids.cpu(), None if lengths is None else lengths.cpu(), settings or InferenceConfig(),
                      None if last_token is None else last_token.cpu(), on_step,
                      None if speakers is None else speakers.cpu(), speaker_vectors)


class OnnxVocoder(Vocoder):
    """An exported neural vocoder: mel ``(B, n_mels, T_mel)`` → ``(wav (B, T_wav), lengths (B,))``, each
    item's samples past its length silent."""

    def __init__(self, path: Path, audio: AudioConfig, context_frames: int | None, threads: int):
        super().__init__(audio)
        self.path = path
        self.graph, self._context = _Graph(path, threads, ["mel"], ["waveform"]), context_frames

    @property
    def context_frames(self) -> int | None:
        return self._context

    def settings_text(self) -> str:
        """Its weights are in the graph, not in a state dict: the graph file's digest."""
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    def forward(self, mel: torch.Tensor, lengths: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        self.check_mel(mel)
        frames = lengths if lengths is not None else torch.full((mel.shape[0],), mel.shape[2], dtype=torch.long)
        samples = self.frames_to_samples(frames.cpu())
        wav = self.graph(mel=mel.float())["waveform"]
        return wav * sequence_mask(samples, wav.shape[1]), samples


@dataclass
class OnnxExport:
    """An export folder, loaded: the model, its config and symbols, the step it was trained to,
    the exported vocoder (None when it was exported without one) and the graphs with int8 weights."""

    model: OnnxAcousticModel
    config: ExperimentConfig
    inventory: SymbolInventory
    step: int
    path: Path
    vocoder_name: str | None
    vocoder: OnnxVocoder | None
    int8: list[str]

    def vocoder_named(self, name: str) -> OnnxVocoder | None:
        """The exported vocoder when ``name`` (an ``inference.vocoder`` value) is the one exported, else None."""
        if self.vocoder is None or self.vocoder_name is None or resolve(name).name != resolve(self.vocoder_name).name:
            return None
        return self.vocoder


def is_onnx_export(path: str | Path) -> bool:
    """Whether ``path`` is a folder that holds an export's manifest (else: a checkpoint file, or nothing)."""
    return (Path(path) / MANIFEST).is_file()


def load_onnx(folder: str | Path, threads: int | None = None) -> OnnxExport:
    """Load the export in ``folder`` (sessions on ``threads`` CPU threads, default PyTorch's)."""
    folder = Path(folder)
    path = folder / MANIFEST
    if not path.is_file():
        raise TTSError(f"{folder} is not an ONNX export (no {MANIFEST}): write one with "
                       f"'tts export CKPT --format onnx --out {folder}'")
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        raise TTSError("onnxruntime is not installed: pip install onnxruntime (or the project's '.[onnx]' extra)") from None
    manifest = Manifest.read(path)
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise TTSError(f"{path} is not a {FORMAT} manifest of version {VERSION}: export the checkpoint again")
    try:
        config = config_from_dict(manifest.get("config"))
        inventory = SymbolInventory.from_dict(manifest.get("symbols"))
    except (ConfigError, TypeError, ValueError, KeyError) as exc:
        raise TTSError(f"{path}: its config or symbols do not load ({exc}): export again") from None
    # exports made before int8 existed have no list
    int8 = manifest.names("int8") if "int8" in manifest.data else []
    if int8:
        check_int8_products(folder)
    threads = threads or torch.get_num_threads()
    model = OnnxAcousticModel(folder, manifest, threads)
    if len(inventory) != model.n_symbols:
        raise TTSError(f"{path}: {len(inventory)} symbols, but the model reads {model.n_symbols}: the symbol table "
                       f"does not belong to these graphs (ids would be shifted); export again")
    spec = manifest.get("vocoder")
    vocoder, vocoder_name = None, None
    if spec is not None:
        try:
            audio = config_from_dict({"audio": manifest.get("vocoder", "audio")}).audio
        except ConfigError as exc:
            raise TTSError(f"{path}: the vocoder's audio settings do not load ({exc}): export again") from None
        context = manifest.get("vocoder", "context_frames")
        vocoder_name = str(manifest.get("vocoder", "name"))
        vocoder = OnnxVocoder(folder / "vocoder.onnx", audio, None if context is None else int(context), threads)
    return OnnxExport(model, config, inventory, manifest.integer("step"), folder, vocoder_name, vocoder, int8)


@dataclass
class Manifest:
    """An export's ``manifest.json``, read field by field: a file that is not JSON, or lacks a
    field or holds one of the wrong type, is one error naming the file and the field."""

    path: Path
    data: dict[str, Any]

    @classmethod
    def read(cls, path: Path) -> "Manifest":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise TTSError(f"{path} is not valid JSON ({exc}): export the checkpoint again") from None
        if not isinstance(data, dict):
            raise TTSError(f"{path} holds no JSON object: export the checkpoint again")
        return cls(path, data)

    def get(self, *keys: str) -> Any:
        value: Any = self.data
        for depth, key in enumerate(keys):
            if not isinstance(value, dict) or key not in value:
                raise TTSError(f"{self.path} lacks '{'.'.join(keys[:depth + 1])}': export the checkpoint again")
            value = value[key]
        return value

    def integer(self, *keys: str) -> int:
        value = self.get(*keys)
        if isinstance(value, bool) or not isinstance(value, int):
            raise TTSError(f"{self.path}: '{'.'.join(keys)}' must be an integer, not {value!r}: export again")
        return value

    def number(self, *keys: str) -> float:
        value = self.get(*keys)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TTSError(f"{self.path}: '{'.'.join(keys)}' must be a number, not {value!r}: export again")
        return float(value)

    def names(self, *keys: str) -> list[str]:
        value = self.get(*keys)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TTSError(f"{self.path}: '{'.'.join(keys)}' must be a list of names: export again")
        return value
