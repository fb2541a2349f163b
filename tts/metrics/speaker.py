"""Speaker similarity (SECS): the cosine similarity of two utterances' speaker embeddings, as
ESPnet's ``evaluate_secs.py`` reports it, from the offline GE2E encoder
(:mod:`tts.audio.speaker_encoder`)."""

from __future__ import annotations

import numpy as np

from tts.audio.speaker_encoder import SpeakerEmbedder


class SpeakerSimilarity(SpeakerEmbedder):
    """``embed(wav, sample_rate) → (256,)``; ``similarity(a, b)``: the cosine of two embeddings."""

    @staticmethod
    def similarity(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.dot(a, b) / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-9))
