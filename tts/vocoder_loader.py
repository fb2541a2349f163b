"""A ``--vocoder`` option made into a :class:`~tts.vocoders.Vocoder`: the catalogue
(:mod:`tts.vocoders.catalogue`) says what the option names, and this builds it (Griffin-Lim, a
pretrained HiFi-GAN, a bundled or given vocoder checkpoint through :func:`tts.checkpoint.load_vocoder`)."""

from __future__ import annotations

from pathlib import Path

import torch

from tts import checkpoint
from tts.config import AudioConfig, GriffinLimConfig
from tts.errors import TTSError
from tts.vocoders import GriffinLim, Vocoder
from tts.vocoders.catalogue import VocoderChoice, resolve
from tts.vocoders.pretrained import pretrained_hifigan


def vocoder_for(option: str | Path | VocoderChoice, device: str | torch.device = "cpu",
                audio: AudioConfig | None = None, griffin_lim: GriffinLimConfig | None = None) -> Vocoder:
    """The vocoder ``option`` names, in eval mode on ``device``. With ``audio`` (the mel settings
    it will be fed), a neural vocoder trained on other settings is refused; Griffin-Lim needs
    ``audio`` and takes ``griffin_lim``'s settings."""
    choice = option if isinstance(option, VocoderChoice) else resolve(option)
    if not choice.neural:
        if audio is None:
            raise TTSError("Griffin-Lim needs the audio settings of the mels it inverts")
        return GriffinLim(audio, griffin_lim).to(device)
    if choice.source == "pretrained-hifigan":
        vocoder: Vocoder = pretrained_hifigan(str(choice.weights)).to(device)
    else:
        path = Path(str(choice.weights))
        if choice.source == "bundled" and not path.is_file():
            raise TTSError(f"the bundled vocoder {path} is missing: restore it with "
                           f"'git checkout -- tts/pretrained/{path.name}', or use --vocoder hifigan")
        vocoder = checkpoint.load_vocoder(path, device)
    if audio is not None:
        vocoder.check_compatible(audio)
    return vocoder
