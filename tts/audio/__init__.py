"""Audio: wav IO, resampling, trimming, the STFT and the mel-spectrogram definition."""

from tts.audio.io import edge_bounds, edge_silence, load_wav, peak_normalize, resample, save_wav, speech_bounds, trim_silence
from tts.audio.mel import STFT, MelSpectrogram, spectral_convergence

__all__ = ["MelSpectrogram", "edge_bounds", "edge_silence", "STFT", "load_wav", "peak_normalize", "resample", "save_wav",
           "spectral_convergence", "speech_bounds", "trim_silence"]
