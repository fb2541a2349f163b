"""Audio: wav IO, resampling, trimming, the mel-spectrogram definition and Griffin-Lim."""

from tts.audio.griffin_lim import GriffinLim, spectral_convergence
from tts.audio.io import load_wav, peak_normalize, resample, save_wav, trim_silence
from tts.audio.mel import STFT, MelSpectrogram

__all__ = ["GriffinLim", "MelSpectrogram", "STFT", "load_wav", "peak_normalize", "resample",
           "save_wav", "spectral_convergence", "trim_silence"]
