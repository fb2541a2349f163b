#!/usr/bin/env python3
"""Where the fast student loses DNSMOS to its teacher: the bundled voice's mels of N validation
sentences (``--split train``: of the training split, which the student learned from) through
HiFi-GAN V1 and the Vocos student, and hybrids of the two made in the STFT domain (n_fft 1024,
hop 256): one's magnitudes with the other's phases, and one below 4 kHz with the other above; with
``--consistency K ...`` also the student's own spectrum (its head's magnitudes and phases, which
the inverse STFT overlap-adds as they are) made consistent by K iterations of the project's
accelerated Griffin-Lim started from the student's phases. ``--inputs`` names which mels
of the same sentences: the voice's own (``free_running``, as synthesis makes them), its teacher-forced
ones (``teacher_forced``, what the student was distilled on) or the recordings' (``recording``): if
the student trails its teacher on the voice's own mels by more than on the mels it learned from, it
generalizes to them worse than the teacher does (the last two read the voice's feature cache:
``tts features --data D --config <the bundled voice's config as YAML>``, as ``vocos_student.sh``
makes it). ``--bf16`` adds the student under bfloat16 autocast, as its training runs it (the
discriminators judged that rounding, the release serves fp32).
Prints, per input, each variant minus the teacher, per sentence, mean ± SE (P.808, OVRL).

    python egs/synthetic/student_gap_probe.py [--sentences 20] [--data data/synthetic] [--consistency 0 8] \
        [--inputs free_running teacher_forced recording] [--split val|train] [--bf16]
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

from tts import checkpoint  # noqa: E402
from tts.data.corpus import read_metadata, read_split  # noqa: E402
from tts.metrics.mos import MOSPredictor  # noqa: E402
from tts.synthesis import Synthesizer  # noqa: E402
from tts.training.teacher_forcing import teacher_forced_mels  # noqa: E402
from tts.vocoder_loader import vocoder_for  # noqa: E402
from tts.vocoders import GriffinLim, VocosGenerator  # noqa: E402

N_FFT, HOP, SPLIT_HZ = 1024, 256, 4000
INPUTS = ("free_running", "teacher_forced", "recording")


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


def input_mels(kind: str, synthesizer: Synthesizer, data: str, ids: list[str]) -> list[np.ndarray]:
    """The bundled voice's log-mels ``(n_mels, T_mel)`` of the utterances ``ids`` (of the training
    or validation split) of corpus ``data``, the ``kind`` of :data:`INPUTS`."""
    if kind == "free_running":
        texts = {u.id: u.text for u in read_metadata(data)}
        return [result.mel for result in synthesizer([texts[i] for i in ids])]
    forced, cache, _ = teacher_forced_mels(checkpoint.PRETRAINED, data, synthesizer.config.audio, splits=("train", "val"))
    folder = forced if kind == "teacher_forced" else cache / "mels"
    return [np.load(folder / f"{i}.npy").astype(np.float32) for i in ids]


def minus_teacher(rows: list[dict]) -> dict[str, dict[str, list[float]]]:
    """Each variant's per-sentence DNSMOS minus the teacher's: ``{variant: {meter: [mean, SE]}}``."""
    summary: dict[str, dict[str, list[float]]] = {}
    for name in rows[0]:
        for meter in ("p808", "ovrl"):
            d = np.array([getattr(row[name], meter) - getattr(row["teacher"], meter) for row in rows])
            error = float(d.std(ddof=1) / np.sqrt(len(d)))
            summary.setdefault(name, {})[meter] = [round(float(d.mean()), 4), round(error, 4)]
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=20)
    parser.add_argument("--data", default="data/synthetic")
    parser.add_argument("--consistency", type=int, nargs="*", default=[], metavar="K",
                        help="also the student's spectrum after K Griffin-Lim iterations from its phases")
    parser.add_argument("--inputs", nargs="+", choices=INPUTS, default=["free_running"],
                        help="which mels of the sentences the vocoders read (default: the voice's own)")
    parser.add_argument("--split", choices=("val", "train"), default="val",
                        help="train: the first sentences of the training split, which the student learned from")
    parser.add_argument("--bf16", action="store_true",
                        help="also the student under bfloat16 autocast, the precision it is trained in")
    args = parser.parse_args()
    torch.set_num_threads(1)
    synthesizer = Synthesizer.from_checkpoint()
    ids = read_split(args.data, args.split)[:args.sentences]
    teacher, student = vocoder_for("hifigan"), vocoder_for("vocos-student")
    assert isinstance(student, VocosGenerator)
    griffin_lim = GriffinLim(student.audio)
    mos, sample_rate = MOSPredictor(), synthesizer.config.audio.sample_rate
    mels = {kind: input_mels(kind, synthesizer, args.data, ids) for kind in args.inputs}  # all, before any vocoding
    by_input = {}
    for kind in args.inputs:
        rows = []
        for mel in mels[kind]:
            variants = hybrids(synthesizer.vocode(mel, teacher), synthesizer.vocode(mel, student), sample_rate)
            n = len(variants["teacher"])
            variants |= {f"student_consistent_{k}": consistent(student, griffin_lim, mel, k)[:n]
                         for k in args.consistency}
            if args.bf16:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    variants["student_bf16"] = synthesizer.vocode(mel, student).astype(np.float32)[:n]
            rows.append({name: mos(wave, sample_rate) for name, wave in variants.items()})
        by_input[kind] = minus_teacher(rows)
    print(json.dumps({"split": args.split, "sentences": len(ids), "minus_teacher": by_input}, indent=1))


if __name__ == "__main__":
    main()
