#!/usr/bin/env python3
"""Where the fast student loses DNSMOS to its teacher: the bundled voice's mels of N validation
sentences through HiFi-GAN V1 and the Vocos student, and hybrids of the two made in the STFT
domain (n_fft 1024, hop 256): one's magnitudes with the other's phases, and one below 4 kHz with
the other above; with ``--consistency K ...`` also the student's own spectrum (its head's magnitudes
and phases, which the inverse STFT overlap-adds as they are) made consistent by K iterations of the
project's accelerated Griffin-Lim started from the student's phases. Prints each variant minus the
teacher, per sentence, mean ± SE (P.808, OVRL).

    python egs/synthetic/student_gap_probe.py [--sentences 20] [--data data/synthetic] [--consistency 0 8]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import librosa
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tts.data.corpus import read_metadata, read_split  # noqa: E402
from tts.metrics.mos import MOSPredictor  # noqa: E402
from tts.synthesis import Synthesizer  # noqa: E402
from tts.vocoder_loader import vocoder_for  # noqa: E402
from tts.vocoders import GriffinLim, VocosGenerator  # noqa: E402

N_FFT, HOP, SPLIT_HZ = 1024, 256, 4000


def hybrids(teacher: np.ndarray, student: np.ndarray, sample_rate: int) -> dict[str, np.ndarray]:
    """The two waveforms ``(T_wav,)`` and their STFT-domain hybrids, all of the same length."""
    n = min(len(teacher), len(student))
    teacher, student = teacher[:n], student[:n]
    t = librosa.stft(teacher, n_fft=N_FFT, hop_length=HOP)
    s = librosa.stft(student, n_fft=N_FFT, hop_length=HOP)
    low = (librosa.fft_frequencies(sr=sample_rate, n_fft=N_FFT) < SPLIT_HZ)[:, None]

    def back(spectrum: np.ndarray) -> np.ndarray:
        return librosa.istft(spectrum, hop_length=HOP, length=n)

    return {"teacher": teacher, "student": student, "teacher_roundtrip": back(t),
            "student_magnitude_teacher_phase": back(np.abs(s) * np.exp(1j * np.angle(t))),
            "teacher_magnitude_student_phase": back(np.abs(t) * np.exp(1j * np.angle(s))),
            "student_below_4k_teacher_above": back(np.where(low, s, t)),
            "teacher_below_4k_student_above": back(np.where(low, t, s))}


@torch.no_grad()
def consistent(student: VocosGenerator, griffin_lim: GriffinLim, mel: np.ndarray, iterations: int) -> np.ndarray:
    """The student's head's spectrum of one log-mel ``(n_mels, T_mel)`` after ``iterations`` + 1
    projections onto consistent spectra (accelerated Griffin-Lim from its own phases) → ``(T_wav,)``."""
    magnitude, phase = student.spectrum(torch.from_numpy(mel)[None].float())
    return griffin_lim.reconstruct(magnitude, iterations, phase=phase)[0].numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=20)
    parser.add_argument("--data", default="data/synthetic")
    parser.add_argument("--consistency", type=int, nargs="*", default=[], metavar="K",
                        help="also the student's spectrum after K Griffin-Lim iterations from its phases")
    args = parser.parse_args()
    torch.set_num_threads(1)
    synthesizer = Synthesizer.from_checkpoint()
    texts = {u.id: u.text for u in read_metadata(args.data)}
    results = synthesizer([texts[i] for i in read_split(args.data, "val")[:args.sentences]])
    teacher, student = vocoder_for("hifigan"), vocoder_for("vocos-student")
    assert isinstance(student, VocosGenerator)
    griffin_lim = GriffinLim(student.audio)
    mos, sample_rate = MOSPredictor(), synthesizer.config.audio.sample_rate
    rows = []
    for result in results:
        variants = hybrids(synthesizer.vocode(result.mel, teacher), synthesizer.vocode(result.mel, student), sample_rate)
        n = len(variants["teacher"])
        variants |= {f"student_consistent_{k}": consistent(student, griffin_lim, result.mel, k)[:n]
                     for k in args.consistency}
        rows.append({name: mos(wave, sample_rate) for name, wave in variants.items()})
    summary: dict[str, dict[str, list[float]]] = {}
    for name in rows[0]:
        for meter in ("p808", "ovrl"):
            d = np.array([getattr(row[name], meter) - getattr(row["teacher"], meter) for row in rows])
            error = float(d.std(ddof=1) / np.sqrt(len(d)))
            summary.setdefault(name, {})[meter] = [round(float(d.mean()), 4), round(error, 4)]
    print(json.dumps({"sentences": len(rows), "minus_teacher": summary}, indent=1))


if __name__ == "__main__":
    main()
