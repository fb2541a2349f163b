"""Attention-based text-to-speech: Tacotron2 with pluggable attention, Transformer-TTS,
an offline English frontend, mel features and a Griffin-Lim vocoder."""

__version__ = "0.1.0"
