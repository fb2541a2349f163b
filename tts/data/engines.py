"""Offline speech engines (Debian packages) that read text aloud: the voices of the synthetic
corpora (Festival's HTS ``slt`` by default; several for a corpus of many speakers), used by their
recipe and, as the ceiling, by the robustness suite."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tts.audio import load_wav, peak_normalize, speech_bounds
from tts.data.timings import PhoneTiming, phones_from_ends
from tts.errors import TTSError

FESTIVAL_VOICES = Path("/usr/share/festival/voices")
#: seconds an engine may take over one utterance (a few at most on an idle machine)
ENGINE_TIMEOUT = 300


@dataclass(frozen=True)
class Voice:
    """A voice an engine speaks with: the ``engine`` (``festival`` or ``flite``), the engine's
    ``name`` for it, what it sounds like and the Debian ``packages`` it needs."""

    engine: str
    name: str
    description: str
    packages: tuple[str, ...]


#: every voice a synthetic corpus can be spoken with, by the speaker name its corpus gives it
VOICES: dict[str, Voice] = {
    "slt": Voice("festival", "cmu_us_slt_arctic_hts", "US female, HTS", ("festival", "festvox-us-slt-hts")),
    "ked": Voice("festival", "ked_diphone", "US male, diphone", ("festival", "festvox-kdlpc16k")),
    "kal": Voice("festival", "kal_diphone", "US male, diphone", ("festival", "festvox-kallpc16k")),
    "awb": Voice("flite", "awb", "Scottish male, clustergen", ("flite",)),
    "rms": Voice("flite", "rms", "US male, clustergen", ("flite",)),
    "slt-flite": Voice("flite", "slt", "slt's speaker through flite's clustergen", ("flite",)),
}
#: each engine's voice for a corpus of one speaker
ENGINE_VOICES = {"festival": "slt", "flite": "slt-flite"}
ENGINES = sorted(ENGINE_VOICES)
_BINARIES = {"festival": "text2wave", "flite": "flite"}


def check_engine(engine: str) -> None:
    """Fail with the install line when the engine (or its single-speaker voice) is missing."""
    if engine not in ENGINE_VOICES:
        raise TTSError(f"unknown speech engine '{engine}' (choose one of {', '.join(ENGINES)})")
    check_voice(ENGINE_VOICES[engine])


def check_voice(speaker: str) -> None:
    """Fail with the install line when ``speaker``'s engine or voice is missing (an unknown name lists them)."""
    if speaker not in VOICES:
        raise TTSError(f"unknown voice '{speaker}' (choose from {', '.join(VOICES)})")
    voice = VOICES[speaker]
    install = f"run 'apt-get install -y {' '.join(voice.packages)}' (or 'make system-deps')"
    if shutil.which(_BINARIES[voice.engine]) is None:
        raise TTSError(f"{voice.engine} is not installed: {install}")
    if voice.engine == "festival":
        installed = any(FESTIVAL_VOICES.glob(f"*/{voice.name}"))
    else:
        listed = subprocess.run(["flite", "-lv"], capture_output=True, text=True, timeout=60).stdout
        installed = voice.name in listed.replace("Voices available:", "").split()
    if not installed:
        raise TTSError(f"{voice.engine} has no voice {voice.name} (speaker {speaker}): {install}")


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


def speak(text: str, speaker: str, sample_rate: int) -> np.ndarray:
    """``text`` read by the voice of ``speaker`` (:data:`VOICES`): ``(T_wav,)`` at ``sample_rate``,
    trimmed (40 dB) and peak-normalized to 0.95, as the synthetic corpus stores it."""
    return speak_timed(text, speaker, sample_rate).wav


def run_engine(cmd: list[str], attempts: int = 2) -> subprocess.CompletedProcess:
    """An engine's command, its output captured. One that runs past :data:`ENGINE_TIMEOUT` (a
    machine paused or overloaded meanwhile) is run again, ``attempts`` times in all, then a
    :class:`TTSError`: a corpus build loses no utterance to a passing stall."""
    for _ in range(attempts):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=ENGINE_TIMEOUT)
        except subprocess.TimeoutExpired:
            continue
    raise TTSError(f"{cmd[0]} took more than {ENGINE_TIMEOUT} s, {attempts} times: is the machine overloaded? "
                   f"Run the recipe again to go on")


def speak_timed(text: str, speaker: str, sample_rate: int) -> Spoken:
    """:func:`speak`'s audio with, from Festival, where each phone lies in it (trimming included)."""
    voice = VOICES[speaker]
    with tempfile.TemporaryDirectory() as tmp:
        raw, ends_file = Path(tmp) / "raw.wav", Path(tmp) / "phone_ends.txt"
        if voice.engine == "festival":
            text_file, hooks = Path(tmp) / "text.txt", Path(tmp) / "phone_ends.scm"
            text_file.write_text(text + "\n")
            hooks.write_text(f'(set! phone_ends_file "{ends_file}")\n' + FESTIVAL_PHONE_ENDS)
            cmd = ["text2wave", "-eval", f"(voice_{voice.name})", "-eval", str(hooks), str(text_file),
                   "-o", str(raw)]
        else:
            cmd = ["flite", "-voice", voice.name, "-t", text, "-o", str(raw)]
        proc = run_engine(cmd)
        if proc.returncode != 0 or not raw.is_file():
            raise TTSError(f"{voice.engine} ({voice.name}) failed on {text[:60]!r}: {proc.stderr.strip()[:200]}")
        wav, _ = load_wav(raw, sample_rate)
        ends = ([(float(end), phone) for end, phone in (line.split() for line in ends_file.read_text().splitlines())]
                if voice.engine == "festival" else None)
    start, stop = speech_bounds(wav, top_db=40.0)
    trimmed = peak_normalize(wav[start:stop], 0.95)
    phones = None if ends is None else phones_from_ends(ends, start / sample_rate, len(trimmed) / sample_rate)
    return Spoken(trimmed, phones)
