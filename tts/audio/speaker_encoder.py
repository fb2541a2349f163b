"""An offline speaker encoder: a waveform → a d-vector (256 numbers of unit length) that places
voices, used to condition a multi-speaker model (``model.speakers.vectors: ge2e``) and to measure
speaker similarity (:mod:`tts.metrics.speaker`).

The encoder is a GE2E d-vector network (Wan et al. 2018: three LSTM layers of 256 over 40-band
mel frames of 16 kHz audio, a linear layer with ReLU, unit length), with the weights that the
``Resemblyzer`` wheel (MIT) ships as ``resemblyzer/pretrained.pt``, trained on LibriSpeech,
VoxCeleb 1 and 2. Only that file is read; the package, which would pull a voice-activity
detector, is never imported. An utterance's embedding is the normalized mean of the embeddings
of 1.6 s windows that overlap by half (the whole utterance when it is shorter).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from tts.package_data import package_dir

SAMPLE_RATE = 16000
N_MELS, WINDOW, HOP = 40, 400, 160   # 25 ms windows every 10 ms
PARTIAL_FRAMES = 160                 # 1.6 s
TARGET_DBFS = -30.0
INSTALL = "run 'make setup' (or pip install --no-deps Resemblyzer==0.1.4)"
#: the size of a d-vector
DIM = 256


class SpeakerEncoder(nn.Module):
    """mel frames ``(B, T, 40)`` → speaker embeddings ``(B, 256)`` of unit length."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(N_MELS, DIM, num_layers=3, batch_first=True)
        self.linear = nn.Linear(DIM, DIM)

    def forward(self, mels: torch.Tensor) -> torch.Tensor:
        _, (hidden, _) = self.lstm(mels)
        embedding = torch.relu(self.linear(hidden[-1]))
        return embedding / embedding.norm(dim=1, keepdim=True).clamp_min(1e-5)

    @classmethod
    def pretrained(cls) -> "SpeakerEncoder":
        """The encoder with Resemblyzer's weights, in eval mode on the CPU."""
        path = package_dir("resemblyzer", "the speaker encoder", INSTALL) / "pretrained.pt"
        state = torch.load(path, map_location="cpu", weights_only=False)["model_state"]
        encoder = cls()
        encoder.load_state_dict({k: v for k, v in state.items() if not k.startswith("similarity_")})
        return encoder.eval()


def mel_frames(wav: np.ndarray, sample_rate: int) -> np.ndarray:
    """A waveform ``(T_wav,)`` → the encoder's input ``(T, 40)``: 16 kHz, loudness at −30 dBFS, power mel."""
    import librosa

    audio = librosa.resample(np.asarray(wav, dtype=np.float32), orig_sr=sample_rate, target_sr=SAMPLE_RATE) \
        if sample_rate != SAMPLE_RATE else np.asarray(wav, dtype=np.float32)
    rms = float(np.sqrt(np.mean(audio ** 2))) if audio.size else 0.0
    if rms > 0:
        audio = audio * (10 ** (TARGET_DBFS / 20) / rms)
    mel = librosa.feature.melspectrogram(y=audio, sr=SAMPLE_RATE, n_fft=WINDOW, hop_length=HOP, n_mels=N_MELS)
    return mel.T.astype(np.float32)


class SpeakerEmbedder:
    """``embed(wav, sample_rate) → (256,)``: an utterance's d-vector."""

    def __init__(self) -> None:
        self.encoder = SpeakerEncoder.pretrained()

    @torch.no_grad()
    def embed(self, wav: np.ndarray, sample_rate: int) -> np.ndarray:
        frames = mel_frames(wav, sample_rate)
        if len(frames) <= PARTIAL_FRAMES:
            windows = [frames]
        else:
            starts = list(range(0, len(frames) - PARTIAL_FRAMES + 1, PARTIAL_FRAMES // 2))
            if starts[-1] + PARTIAL_FRAMES < len(frames):
                starts.append(len(frames) - PARTIAL_FRAMES)  # the end is covered too
            windows = [frames[s:s + PARTIAL_FRAMES] for s in starts]
        partials = torch.cat([self.encoder(torch.from_numpy(w)[None]) for w in windows])
        mean = partials.mean(dim=0)
        return (mean / mean.norm().clamp_min(1e-5)).numpy()
