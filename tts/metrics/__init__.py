"""Leaves of the package: measures of what a model did. They take arrays and strings, never
models, and import nothing above text and audio."""

from tts.metrics.asr import ErrorCounts, Recognizer, error_counts, normalize_for_scoring
from tts.metrics.attention import AttentionReport, Failure, attention_report, most_diagonal_head, speech_steps
from tts.metrics.mcd import mel_cepstral_distortion, mel_cepstrum

__all__ = ["AttentionReport", "ErrorCounts", "Failure", "Recognizer", "attention_report", "speech_steps", "error_counts",
           "mel_cepstral_distortion", "mel_cepstrum", "most_diagonal_head", "normalize_for_scoring"]
