"""Offline speech engines (Debian packages) that read text aloud: the voice of the synthetic
corpus (Festival's HTS ``slt``, or flite's ``slt``), used by its recipe and, as the ceiling, by
the robustness suite."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tts.audio import load_wav, peak_normalize, speech_bounds
from tts.data.timings import PhoneTiming, phones_from_ends
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


#: text2wave's hooks with one more: after each utterance it appends the end time of every phone
#: (plus the time of the utterances before it) and the phone's name to ``phone_ends_file``. The
#: audio is byte for byte text2wave's own.
FESTIVAL_PHONE_ENDS = """
(set! phone_ends (fopen phone_ends_file "w"))
(define (save_phone_ends utt)
  (let ((info (wave.info (utt.wave utt))))
    (let ((offset (/ (- totalnumsamples (get_param 'num_samples info 0)) (get_param 'sample_rate info 16000))))
      (mapcar (lambda (seg) (format phone_ends "%f %s\\n" (+ offset (item.feat seg "end")) (item.name seg)))
              (utt.relation.items utt 'Segment)))))
(set! tts_hooks (list utt.synth save_record_wave_fp save_phone_ends))
"""


@dataclass
class Spoken:
    """What an engine said: ``wav`` ``(T_wav,)`` and, from Festival, the ``phones`` on its clock
    (None from flite)."""

    wav: np.ndarray
    phones: list[PhoneTiming] | None


def speak(text: str, engine: str, sample_rate: int) -> np.ndarray:
    """``text`` read by the engine's ``slt`` voice: ``(T_wav,)`` at ``sample_rate``, trimmed
    (40 dB) and peak-normalized to 0.95, as the synthetic corpus stores it."""
    return speak_timed(text, engine, sample_rate).wav


def speak_timed(text: str, engine: str, sample_rate: int) -> Spoken:
    """:func:`speak`'s audio with, from Festival, where each phone lies in it (trimming included)."""
    with tempfile.TemporaryDirectory() as tmp:
        raw, ends_file = Path(tmp) / "raw.wav", Path(tmp) / "phone_ends.txt"
        if engine == "festival":
            text_file, hooks = Path(tmp) / "text.txt", Path(tmp) / "phone_ends.scm"
            text_file.write_text(text + "\n")
            hooks.write_text(f'(set! phone_ends_file "{ends_file}")\n' + FESTIVAL_PHONE_ENDS)
            cmd = ["text2wave", "-eval", "(voice_cmu_us_slt_arctic_hts)", "-eval", str(hooks), str(text_file),
                   "-o", str(raw)]
        else:
            cmd = ["flite", "-voice", "slt", "-t", text, "-o", str(raw)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0 or not raw.is_file():
            raise TTSError(f"{engine} failed on {text[:60]!r}: {proc.stderr.strip()[:200]}")
        wav, _ = load_wav(raw, sample_rate)
        ends = ([(float(end), phone) for end, phone in (line.split() for line in ends_file.read_text().splitlines())]
                if engine == "festival" else None)
    start, stop = speech_bounds(wav, top_db=40.0)
    trimmed = peak_normalize(wav[start:stop], 0.95)
    phones = None if ends is None else phones_from_ends(ends, start / sample_rate, len(trimmed) / sample_rate)
    return Spoken(trimmed, phones)
