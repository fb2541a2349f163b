import librosa
import numpy as np
import pytest
import soundfile as sf
import torch

from tts.audio import STFT, MelSpectrogram, load_wav, save_wav, spectral_convergence, trim_silence
from tts.config import AudioConfig, GriffinLimConfig
from tts.errors import TTSError
from tts.vocoders import GriffinLim


def librosa_log_mel(wav, c: AudioConfig):
    mel = librosa.feature.melspectrogram(y=wav, sr=c.sample_rate, n_fft=c.n_fft, hop_length=c.hop_length,
                                         win_length=c.win_length, center=True, pad_mode="reflect", power=1.0,
                                         n_mels=c.n_mels, fmin=c.fmin, fmax=c.fmax)
    return np.log(np.maximum(mel, c.log_floor))


@pytest.mark.parametrize("config", [AudioConfig(), AudioConfig(sample_rate=16000, n_fft=512, hop_length=128,
                                                               win_length=400, n_mels=40, fmin=50.0, fmax=None)])
def test_mel_matches_librosa(speech_wav, config):
    wav, _ = load_wav(speech_wav, config.sample_rate)
    ours = MelSpectrogram(config)(torch.from_numpy(wav)).numpy()
    ref = librosa_log_mel(wav, config)
    assert ours.shape == ref.shape == (config.n_mels, len(wav) // config.hop_length + 1)
    np.testing.assert_allclose(ours, ref, atol=2e-3)


def test_mel_is_batched():
    m = MelSpectrogram()
    wav = torch.randn(3, 5000) * 0.1
    batch = m(wav)
    assert batch.shape == (3, 80, 5000 // 256 + 1)
    torch.testing.assert_close(batch[1], m(wav[1]))


@pytest.mark.filterwarnings("ignore:The length of signal is shorter")
@pytest.mark.parametrize("n_fft, hop, win", [(1024, 256, 1024), (1024, 256, 800), (512, 200, 512), (64, 16, 48)])
@pytest.mark.parametrize("length", [None, 4000, 3995, 4700])
def test_inverse_stft_is_torch_istft(n_fft, hop, win, length):
    stft = STFT(n_fft, hop, win)
    spec = stft(torch.randn(2, 4000))
    try:
        expected = torch.istft(spec, n_fft, hop, win, stft.window, center=True, length=length)
    except RuntimeError:  # the window leaves samples uncovered: both refuse
        with pytest.raises(ValueError, match="cannot be inverted"):
            stft.inverse(spec, length)
        return
    ours = stft.inverse(spec, length)
    assert ours.shape == expected.shape
    torch.testing.assert_close(ours, expected, rtol=0, atol=1e-5)


def test_griffin_lim_reaches_librosa_convergence_in_fewer_iterations(speech_wav):
    """The accelerated iteration: fewer iterations than librosa's 60 reach its spectral convergence,
    and relaxation (γ > 1) converges further than fast Griffin-Lim (γ = 1) in as many iterations."""
    c = AudioConfig()
    wav, _ = load_wav(speech_wav, c.sample_rate)
    stft = STFT(c.n_fft, c.hop_length, c.win_length)
    magnitude = stft(torch.from_numpy(wav)[None]).abs()

    def convergence(settings: GriffinLimConfig, n_iter: int) -> float:
        return float(spectral_convergence(magnitude, GriffinLim(c, settings).reconstruct(magnitude, n_iter=n_iter), stft))

    ref = librosa.griffinlim(magnitude[0].numpy(), n_iter=60, hop_length=c.hop_length, win_length=c.win_length,
                             n_fft=c.n_fft, random_state=0)
    sc_ref = float(spectral_convergence(magnitude, torch.from_numpy(ref)[None], stft))
    assert convergence(GriffinLimConfig(), 46) <= sc_ref < 0.15
    fast = GriffinLimConfig(relaxation=1.0)
    assert convergence(GriffinLimConfig(), 32) < 0.95 * convergence(fast, 32)


def test_griffin_lim_started_from_the_true_phases_keeps_the_signal(speech_wav):
    """Started from a consistent spectrum's own phases, the iteration stays at its waveform (a
    projection of a consistent spectrum is itself); from random phases it does not get there."""
    c = AudioConfig()
    wav, _ = load_wav(speech_wav, c.sample_rate)
    signal = torch.from_numpy(wav)[None]
    spectrum = STFT(c.n_fft, c.hop_length, c.win_length)(signal)
    length = (spectrum.shape[-1] - 1) * c.hop_length
    vocoder = GriffinLim(c)
    started = vocoder.reconstruct(spectrum.abs(), n_iter=8, phase=spectrum.angle())
    scratch = vocoder.reconstruct(spectrum.abs(), n_iter=8)
    scale = float(signal[:, :length].abs().max())
    assert float((started - signal[:, :length]).abs().max()) < 1e-4 * scale
    assert float((scratch - signal[:, :length]).abs().max()) > 0.1 * scale


def test_mel_round_trip_is_recognisable(speech_wav):
    """wav → mel → Griffin-Lim → mel stays close to the original mel."""
    c = AudioConfig()
    wav, _ = load_wav(speech_wav, c.sample_rate)
    mel = MelSpectrogram(c)(torch.from_numpy(wav))
    out, lengths = GriffinLim(c)(mel[None])
    out = out[0]
    assert abs(out.shape[-1] - len(wav)) < c.hop_length and int(lengths[0]) == out.shape[-1]
    mel2 = MelSpectrogram(c)(out)
    frames = min(mel.shape[-1], mel2.shape[-1])
    voiced = mel[:, :frames] > -6
    # compare with loudness aligned (Griffin-Lim output is peak-normalised)
    diff = (mel2[:, :frames] - mel[:, :frames])[voiced]
    assert (diff - diff.median()).abs().mean() < 0.6
    assert torch.corrcoef(torch.stack([mel[:, :frames].flatten(), mel2[:, :frames].flatten()]))[0, 1] > 0.95


def test_wav_io_errors(tmp_path):
    with pytest.raises(TTSError, match="no such audio file"):
        load_wav(tmp_path / "missing.wav")
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    with pytest.raises(TTSError, match="empty"):
        load_wav(empty)
    text = tmp_path / "text.wav"
    text.write_text("this is not audio at all")
    with pytest.raises(TTSError, match="not a readable audio file"):
        load_wav(text)


def test_wav_io_resample_and_trim(tmp_path):
    sr = 16000
    t = np.arange(sr) / sr
    tone = 0.5 * np.sin(2 * np.pi * 440 * t)
    wav = np.concatenate([np.zeros(sr // 2), tone, np.zeros(sr // 2)]).astype(np.float32)
    save_wav(tmp_path / "a.wav", wav, sr)
    loaded, out_sr = load_wav(tmp_path / "a.wav", 22050)
    assert out_sr == 22050 and abs(len(loaded) - 2 * 22050) < 10
    trimmed = trim_silence(loaded, top_db=40)
    assert abs(len(trimmed) - 22050) < 2048


def test_anti_phase_stereo_is_not_mixed_into_silence(tmp_path, caplog):
    tone = 0.5 * np.sin(np.arange(22050) * 0.05).astype(np.float32)
    sf.write(tmp_path / "anti.wav", np.stack([tone, -tone], axis=1), 22050, subtype="FLOAT")
    wav, _ = load_wav(tmp_path / "anti.wav")
    assert np.abs(wav).max() > 0.4 and "channels cancel out" in caplog.text
    sf.write(tmp_path / "same.wav", np.stack([tone, tone], axis=1), 22050, subtype="FLOAT")
    np.testing.assert_allclose(load_wav(tmp_path / "same.wav")[0], tone, atol=1e-6)
