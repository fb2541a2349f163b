"""Alignment plots and attention metrics."""

from tts.analysis.metrics import AttentionReport, attention_report

__all__ = ["AttentionReport", "attention_report"]
