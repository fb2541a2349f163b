"""What the research scripts beside this file share: their command line, DNSMOS P.808 of a log-mel
through the synthesizer's vocoder, and writing their JSON result."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from tts.metrics.mos import MOSPredictor
from tts.synthesis import Synthesizer


def script_arguments(doc: str, split: str, limit: int, out: str) -> argparse.Namespace:
    """``--checkpoint``, ``--data``, ``--split``, ``--limit``, ``--out`` with this script's defaults."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--checkpoint", default=None, help="default: the bundled model")
    parser.add_argument("--data", default="data/synthetic")
    parser.add_argument("--split", default=split)
    parser.add_argument("--limit", type=int, default=limit)
    parser.add_argument("--out", default=out)
    return parser.parse_args()


class P808:
    """DNSMOS P.808 of a log-mel ``(n_mels, T_mel)`` floored at silence and vocoded by ``synthesizer``."""

    def __init__(self, synthesizer: Synthesizer):
        self.synthesizer, self.mos = synthesizer, MOSPredictor()

    def __call__(self, mel: np.ndarray) -> float:
        audio = self.synthesizer.config.audio
        floored = np.maximum(mel, audio.silence).astype(np.float32)
        return self.mos(self.synthesizer.vocode(floored), audio.sample_rate).p808


def write_result(out: str, payload: dict[str, Any], shown: dict[str, Any]) -> None:
    """``payload`` as JSON at ``out`` (folders made), and ``shown`` printed."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1))
    print(json.dumps(shown, indent=1))
