"""The checkpoint format, owned here: the writers (:func:`save` for acoustic models,
:func:`save_vocoder`), one reader (:func:`read`), and :func:`load` / :func:`load_vocoder`, which
return runnable models.

A checkpoint is one file tagged with its kind (``acoustic`` or ``vocoder``) holding the model
weights, the full config (an acoustic model's with the reduction factor in force when it was
written), an acoustic model's symbol inventory, the step and, for training checkpoints, the
training state (optimizers, schedulers, scalers, trainer counters, RNG states; a vocoder's
discriminators).
Written atomically (temp file in the same folder, fsync, rename), so a crash or a full disk
while saving leaves the previous file intact; loaded with ``torch.load(weights_only=True)``.
Files of format versions 1 and 2 are upgraded as they are read (2 → 3: the config's layout,
:func:`tts.config.upgrade.upgrade_v2`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tts.config import ExperimentConfig, VocoderExperimentConfig, config_from_dict, resolve_inference, to_dict
from tts.config.upgrade import upgrade_acoustic, upgrade_v2, upgrade_vocoder
from tts.errors import ConfigError, TTSError, brief
from tts.fileio import atomic_path, refuse_overwriting
from tts.models import AutoregressiveTTS, build_model
from tts.text import SymbolInventory
from tts.vocoders import Vocoder, build_vocoder

FORMAT = "tts-checkpoint"
VERSION = 3
PRETRAINED = Path(__file__).parent / "pretrained" / "tacotron2_synthetic.pt"
_TRAINING_KEYS_V1 = {"optimizer": "optimizer", "scheduler": "scheduler", "scaler": "scaler",
                     "train_state": "state", "rng": "rng"}


KINDS = {"acoustic": ExperimentConfig, "vocoder": VocoderExperimentConfig}


@dataclass
class CheckpointContents:
    """A checkpoint as read from disk: everything but a built model (``inventory`` is None for a vocoder)."""

    path: Path
    kind: str
    config: ExperimentConfig | VocoderExperimentConfig
    inventory: SymbolInventory | None
    weights: dict[str, torch.Tensor]
    step: int
    training: dict[str, Any] | None


    def acoustic(self) -> tuple[ExperimentConfig, SymbolInventory]:
        """The acoustic model's config and symbol inventory; a vocoder checkpoint is one clear error."""
        if not isinstance(self.config, ExperimentConfig) or self.inventory is None:
            raise TTSError(f"{self.path} is a vocoder checkpoint, not an acoustic model: pass it with --vocoder")
        return self.config, self.inventory

    def vocoder_config(self) -> VocoderExperimentConfig:
        """The vocoder's config; an acoustic model's checkpoint is one clear error."""
        if not isinstance(self.config, VocoderExperimentConfig):
            raise TTSError(f"{self.path} is an acoustic model checkpoint, not a vocoder: pass a checkpoint "
                           f"written by 'tts train-vocoder' (or 'griffin-lim')")
        return self.config

    def training_state(self) -> dict[str, Any]:
        """The trainer's state (a release checkpoint has none: one clear error)."""
        if self.training is None:
            raise TTSError(f"{self.path} holds no training state (a release?): resume from a training checkpoint")
        return self.training


@dataclass
class LoadedModel:
    """A checkpoint's model, built, loaded and in eval mode, with what is needed to run it."""

    model: AutoregressiveTTS
    config: ExperimentConfig
    inventory: SymbolInventory
    step: int
    path: Path

    @property
    def audio(self):
        return self.config.audio


def save(path: str | Path, model: AutoregressiveTTS, config: ExperimentConfig, inventory: SymbolInventory, step: int,
         training: dict[str, Any] | None = None) -> Path:
    """Atomically write a checkpoint. The saved config records the model's reduction factor in
    force (a gradual schedule may have changed it); ``training`` is the trainer's state."""
    config_dict = to_dict(config)
    section = config_dict["model"][config.model.name]
    section["reduction_factor"] = model.reduction_factor
    if max(section["reduction_factor"], section["max_reduction_factor"]) != model.max_r:
        section["max_reduction_factor"] = model.max_r  # the frame head keeps its size when r went down
    payload: dict[str, Any] = {"format": FORMAT, "version": VERSION, "kind": "acoustic", "model": model.state_dict(),
                               "config": config_dict, "symbols": inventory.to_dict(), "step": int(step)}
    if training is not None:
        payload["training"] = training
    return _write(payload, Path(path))


def save_vocoder(path: str | Path, vocoder: Vocoder, config: VocoderExperimentConfig, step: int,
                 training: dict[str, Any] | None = None) -> Path:
    """Atomically write a vocoder checkpoint: the generator's weights and config; ``training`` is the
    vocoder trainer's state (discriminators included)."""
    payload: dict[str, Any] = {"format": FORMAT, "version": VERSION, "kind": "vocoder", "model": vocoder.state_dict(),
                               "config": to_dict(config), "step": int(step)}
    if training is not None:
        payload["training"] = training
    return _write(payload, Path(path))


def _write(payload: dict[str, Any], path: Path) -> Path:
    """Write atomically (:func:`atomic_path`, fsynced): a crash or a full disk leaves the previous file."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        torch.save(payload, fh)
        fh.flush()
        os.fsync(fh.fileno())
    return path


def _upgrade_v1(payload: dict[str, Any]) -> dict[str, Any]:
    """Version 1 kept training state at the top level and Griffin-Lim iterations under ``audio``."""
    training = {new: payload.pop(old) for old, new in _TRAINING_KEYS_V1.items() if old in payload}
    if training:
        payload["training"] = training
    payload.pop("model_name", None)
    config = payload.get("config")
    if isinstance(config, dict) and isinstance(config.get("audio"), dict):
        iters = config["audio"].pop("griffin_lim_iters", None)
        if iters is not None:
            config.setdefault("inference", {})["griffin_lim_iters"] = iters
    payload["version"] = 2
    return payload


def read(path: str | Path, map_location: str | torch.device = "cpu") -> CheckpointContents:
    """Read and validate a checkpoint file; every failure is one clear :class:`TTSError`."""
    path = Path(path)
    if not path.is_file():
        raise TTSError(f"checkpoint {path} does not exist" + (" (it is a folder)" if path.is_dir() else ""))
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # noqa: BLE001 - pickle/zip errors of every kind mean "not a checkpoint"
        raise TTSError(f"{path} is not a readable checkpoint ({brief(exc, 100)}): a truncated copy or another "
                       f"kind of file; copy it again or use another checkpoint") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise TTSError(f"{path} is not a checkpoint of this toolkit (no '{FORMAT}' tag)")
    if payload.get("version") == 1:
        payload = _upgrade_v1(payload)
    if payload.get("version") == 2 and isinstance(payload.get("config"), dict):
        payload["config"], payload["version"] = upgrade_v2(payload["config"]), VERSION
    if payload.get("version") != VERSION:
        raise TTSError(f"{path} has checkpoint version {payload.get('version')}, this code reads version {VERSION}")
    kind = payload.get("kind", "acoustic")
    if isinstance(payload.get("config"), dict):
        (upgrade_vocoder if kind == "vocoder" else upgrade_acoustic)(payload["config"])
    if kind not in KINDS:
        raise TTSError(f"{path} holds a model of unknown kind {kind!r} (this code knows {', '.join(KINDS)})")
    for key in ("model", "config") + (("symbols",) if kind == "acoustic" else ()):
        if key not in payload:
            raise TTSError(f"{path} is incomplete: missing '{key}'")
    if not isinstance(payload["model"], dict) or not all(isinstance(v, torch.Tensor) for v in payload["model"].values()):
        raise TTSError(f"{path} is corrupt: its weights are not a mapping of tensors")
    try:
        config = config_from_dict(payload["config"], KINDS[kind])
    except ConfigError as exc:
        raise TTSError(f"{path} was written by an incompatible version of this toolkit ({exc})") from None
    step = payload.get("step", 0)
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise TTSError(f"{path} is corrupt: its step is {step!r}, not a non-negative integer")
    training = payload.get("training")
    if training is not None and not isinstance(training, dict):
        raise TTSError(f"{path} is corrupt: its training state is not a mapping")
    inventory = SymbolInventory.from_dict(payload["symbols"]) if kind == "acoustic" else None
    return CheckpointContents(path, kind, config, inventory, payload["model"], step, training)


def _holds_training_state(path: Path) -> bool:
    """Whether the file at ``path`` is a checkpoint with training state (unreadable files are not)."""
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception:  # noqa: BLE001 - not a checkpoint at all: nothing resumable to protect
        return False
    return isinstance(payload, dict) and payload.get("format") == FORMAT and (
        "training" in payload or "optimizer" in payload)


def read_bundled() -> CheckpointContents:
    """The bundled demo model (``tts/pretrained/``), with a line that says how to restore it."""
    restore = (f"restore it with 'git checkout -- tts/pretrained/{PRETRAINED.name}' or train one with "
               f"'bash egs/synthetic/run.sh' and pass --checkpoint")
    if not PRETRAINED.is_file():
        raise TTSError(f"the bundled model {PRETRAINED} is missing: {restore}")
    try:
        return read(PRETRAINED)
    except TTSError as exc:
        raise TTSError(f"the bundled model is unreadable ({exc}): {restore}") from None


def _load_weights(module: nn.Module, contents: CheckpointContents, name: str) -> None:
    """Load float32 copies of the checkpoint's weights into ``module``; non-finite weights and
    weights of another architecture are refused."""
    weights = {k: v.float() if v.is_floating_point() else v for k, v in contents.weights.items()}
    bad = [k for k, v in weights.items() if v.is_floating_point() and not bool(torch.isfinite(v).all())]
    if bad:
        raise TTSError(f"{contents.path} holds NaN or infinite weights ({len(bad)} tensors, e.g. {bad[0]}): "
                       f"use an earlier checkpoint")
    try:
        module.load_state_dict(weights)
    except RuntimeError as exc:
        raise TTSError(f"{contents.path} does not match this code's {name} "
                       f"({brief(exc, 160)})") from None


def load(path: str | Path | None = None, device: str | torch.device = "cpu") -> LoadedModel:
    """Build the checkpoint's acoustic model and load its weights (float32, eval mode) on ``device``;
    ``path=None`` loads the bundled model. Non-finite weights are refused."""
    contents = read_bundled() if path is None else read(path)
    config, inventory = contents.acoustic()
    model = build_model(config.model, len(inventory), config.audio)
    _load_weights(model, contents, config.model.name)
    return LoadedModel(model.to(device).eval(), config, inventory, contents.step, contents.path)


def load_vocoder(path: str | Path, device: str | torch.device = "cpu") -> Vocoder:
    """Build a vocoder checkpoint's generator and load its weights (float32, eval mode, weight norm
    folded in) on ``device``."""
    contents = read(path)
    config = contents.vocoder_config()
    vocoder = build_vocoder(config.vocoder, config.audio)
    _load_weights(vocoder, contents, f"{config.vocoder.kind} vocoder")
    return vocoder.for_inference().to(device)


def average(sources: list[CheckpointContents]) -> dict[str, torch.Tensor]:
    """The mean of the float weights of checkpoints of one model (integer buffers from the last);
    checkpoints of another kind, architecture or symbol inventory are refused. A vocoder's
    architecture is its generator's and the audio it renders: generators trained against other
    discriminators, on other data or at another learning rate average (a "model soup")."""
    def architecture(contents: CheckpointContents) -> object:
        config = contents.config
        if isinstance(config, ExperimentConfig):
            return config.model
        return config.vocoder.kind, getattr(config.vocoder, config.vocoder.kind), config.audio

    first, last = sources[0], sources[-1]
    for other in sources[1:]:
        same_model = other.kind == first.kind and other.inventory == first.inventory and \
            architecture(other) == architecture(first) and other.weights.keys() == first.weights.keys()
        if not same_model:
            raise TTSError(f"{other.path} is not the same model as {first.path}: average checkpoints of one model")
    return {k: torch.stack([c.weights[k].float() for c in sources]).mean(0) if v.is_floating_point() else v
            for k, v in last.weights.items()}


def export(source: str | Path | Sequence[str | Path], destination: str | Path, half: bool = True,
           inference: dict[str, Any] | None = None) -> Path:
    """Strip a training checkpoint (acoustic or vocoder) to what synthesis needs (weights, config,
    symbols, step), with float16 weights when ``half``; the result loads like the source.
    A list of checkpoints of one model (a run's last few, or a fine-tune and its start) exports the
    mean of their weights (:func:`average`; a checkpoint listed twice counts twice) with the config
    and step of the last. ``inference``: settings that replace the acoustic model's stored
    ones (e.g. the attention window it is released with), checked like a config file."""
    sources = [Path(source)] if isinstance(source, (str, Path)) else [Path(s) for s in source]
    destination = Path(destination)
    if destination.is_dir() or destination.suffix != ".pt":
        raise TTSError(f"--out {destination}: give a file name ending in .pt")
    refuse_overwriting(destination, sources, "--out")
    if destination.is_file() and _holds_training_state(destination):
        raise TTSError(f"--out {destination} is a training checkpoint (it can be resumed): write the release to "
                       f"another file")
    read_sources = [read(s) for s in sources]
    contents = read_sources[-1]
    config = contents.config
    if inference:
        if not isinstance(config, ExperimentConfig):
            raise TTSError(f"{contents.path} is a vocoder checkpoint: it has no inference settings")
        config = replace(config, inference=resolve_inference(config.inference, inference))
    mean = average(read_sources) if len(read_sources) > 1 else contents.weights
    weights = {k: v.half() if half and v.is_floating_point() else v for k, v in mean.items()}
    if half and any(v.is_floating_point() and not bool(torch.isfinite(v).all()) for v in weights.values()):
        raise TTSError(f"{contents.path} has weights beyond the float16 range: export it with --fp32")
    payload = {"format": FORMAT, "version": VERSION, "kind": contents.kind, "model": weights,
               "config": to_dict(config), "step": contents.step}
    if contents.inventory is not None:
        payload["symbols"] = contents.inventory.to_dict()
    return _write(payload, destination)
