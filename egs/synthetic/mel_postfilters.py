"""Does a postfilter on the predicted log-mel close the DNSMOS gap to the reference voice, or does
it only change what Griffin-Lim and DNSMOS see? Each postfilter is scored on the model's mels and
on the recordings' mels (the ceiling of ``tts evaluate``) through the same Griffin-Lim.

    python egs/synthetic/mel_postfilters.py [--checkpoint CKPT] [--data data/synthetic]
        [--split test] [--limit 100] [--out out/mel_postfilters.json]

Writes DNSMOS P.808 means per postfilter, ``{"model": ..., "reference": ..., "gap": ...}``, and
prints them. ``m`` is a log-mel (n_mels, T_mel); ``smooth_t`` / ``smooth_f`` a 3-point moving
average along time / along the mel bands. Results: tts/pretrained/MODEL_CARD.md, "mel postfilters".
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from mel_scoring import P808, script_arguments, write_result
from scipy.ndimage import uniform_filter1d
from tqdm import tqdm

from tts.audio import MelSpectrogram, edge_silence, load_wav
from tts.data.corpus import read_metadata, read_split
from tts.synthesis import Synthesizer

Postfilter = Callable[[np.ndarray], np.ndarray]


def variance_scaling(a: float) -> Postfilter:
    """Each band's deviation from its mean over the utterance, times ``a`` (global variance)."""
    return lambda m: m.mean(1, keepdims=True) + a * (m - m.mean(1, keepdims=True))


def unsharp(amount: float, axis: int) -> Postfilter:
    """``m + amount · (m − smooth(m))`` along ``axis`` (1: time, 0: mel bands); a negative
    ``amount`` smooths."""
    return lambda m: m + amount * (m - uniform_filter1d(m, 3, axis=axis, mode="nearest"))


POSTFILTERS: dict[str, Postfilter] = {
    "none": lambda m: m,
    **{f"variance x{a}": variance_scaling(a) for a in (1.05, 1.10, 1.15)},
    "sharpen time 0.5": unsharp(0.5, axis=1),
    **{f"sharpen bands {b}": unsharp(b, axis=0) for b in (0.5, 1.0)},
    **{f"smooth time {c}": unsharp(-c, axis=1) for c in (0.3, 0.7)},
}


def main() -> None:
    args = script_arguments(__doc__, "test", 100, "out/mel_postfilters.json")

    synthesizer = Synthesizer.from_checkpoint(args.checkpoint)
    audio = synthesizer.config.audio
    metadata = {u.id: u for u in read_metadata(args.data)}
    utterances = [metadata[i] for i in read_split(args.data, args.split)[: args.limit] if i in metadata]
    mel_fn, p808 = MelSpectrogram(audio), P808(synthesizer)

    scores: dict[str, dict[str, list[float]]] = {k: {"model": [], "reference": []} for k in POSTFILTERS}
    batch = synthesizer.settings.batch_size
    for start in tqdm(range(0, len(utterances), batch), desc="postfilters", unit="batch"):
        chunk = utterances[start:start + batch]
        for utterance, result in zip(chunk, synthesizer([u.normalized for u in chunk])):
            wav = edge_silence(load_wav(utterance.wav_path(args.data), audio.sample_rate)[0], audio)
            reference = mel_fn(torch.from_numpy(wav)).numpy()
            for name, postfilter in POSTFILTERS.items():
                scores[name]["model"].append(p808(postfilter(result.mel)))
                scores[name]["reference"].append(p808(postfilter(reference)))
    summary = {}
    for name, sides in scores.items():
        model, reference = float(np.mean(sides["model"])), float(np.mean(sides["reference"]))
        summary[name] = {"model": round(model, 3), "reference": round(reference, 3), "gap": round(reference - model, 3)}
    write_result(args.out, {"split": args.split, "utterances": len(utterances), "dnsmos_p808": summary}, summary)


if __name__ == "__main__":
    main()
