"""Offline speech engines (Debian packages) that read text aloud: the voice of the synthetic
corpus (Festival's HTS ``slt``, or flite's ``slt``), used by its recipe and, as the ceiling, by
the robustness suite."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from tts.audio import load_wav, peak_normalize, trim_silence
from tts.errors import TTSError

ENGINES: dict[str, dict[str, Any]] = {
    "festival": {"binary": "text2wave", "packages": ["festival", "festvox-us-slt-hts"]},
    "flite": {"binary": "flite", "packages": ["flite"]},
}


def check_engine(engine: str) -> None:
    """Fail with the install line when the engine is missing."""
    if engine not in ENGINES:
        raise TTSError(f"unknown speech engine '{engine}' (choose one of {', '.join(sorted(ENGINES))})")
    if shutil.which(ENGINES[engine]["binary"]) is None:
        raise TTSError(f"{engine} is not installed: run 'apt-get install -y {' '.join(ENGINES[engine]['packages'])}' "
                       f"(or 'make system-deps')")


def speak(text: str, engine: str, sample_rate: int) -> np.ndarray:
    """``text`` read by the engine's ``slt`` voice: ``(T_wav,)`` at ``sample_rate``, trimmed
    (40 dB) and peak-normalized to 0.95, as the synthetic corpus stores it."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.wav"
        if engine == "festival":
            text_file = Path(tmp) / "text.txt"
            text_file.write_text(text + "\n")
            cmd = ["text2wave", "-eval", "(voice_cmu_us_slt_arctic_hts)", str(text_file), "-o", str(raw)]
        else:
            cmd = ["flite", "-voice", "slt", "-t", text, "-o", str(raw)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0 or not raw.is_file():
            raise TTSError(f"{engine} failed on {text[:60]!r}: {proc.stderr.strip()[:200]}")
        wav, _ = load_wav(raw, sample_rate)
    return peak_normalize(trim_silence(wav, top_db=40.0), 0.95)
