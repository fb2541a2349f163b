"""A toy corpus of "tone speech": every phoneme is a distinct harmonic tone, spaces are pauses.

It is a perfectly learnable, monotonic text-to-audio mapping in LJSpeech's layout, made in a
second with no speech engine: the tests and the attention benchmark train on it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

TOY_TEXTS = [
    "A cat sat on the mat.",
    'He said "hello" to me.',
    "Dogs run fast.",
    "The sun is hot today.",
    "We met at 10:45.",
    "Birds fly south in the fall.",
    "It's a big red box.",
    "I see two blue cars.",
    "She reads a good book.",
    "Fish swim in the lake.",
]


def tone_speech(text: str, sample_rate: int = 22050, seconds_per_symbol: float = 0.06) -> np.ndarray:
    """``(T_wav,)`` float32: a tone per phoneme of ``text`` (pitch and timbre from its id)."""
    from tts.text import Tokenizer

    tokenizer = Tokenizer()
    symbols = tokenizer.encode_verbose(text).symbols
    n = int(seconds_per_symbol * sample_rate)
    t = np.arange(n) / sample_rate
    ramp = np.minimum(1.0, np.minimum(np.arange(n), np.arange(n)[::-1]) / (0.01 * sample_rate))
    pieces = [np.zeros(int(0.05 * sample_rate))]
    for symbol in symbols:
        if symbol == " " or not tokenizer.inventory.is_phoneme(symbol):
            pieces.append(np.zeros(n // 2))
            continue
        k = tokenizer.inventory.id(symbol)
        f0 = 110.0 + 9.0 * (k % 40)
        tilt = 0.5 + (k % 7) / 7
        tone = sum(np.sin(2 * np.pi * f0 * h * t) / h ** tilt for h in range(1, 12) if f0 * h < 7000)
        pieces.append(ramp * tone)
    pieces.append(np.zeros(int(0.05 * sample_rate)))
    wav = np.concatenate(pieces)
    return (0.6 * wav / np.abs(wav).max()).astype(np.float32)


def make_toy_corpus(root: Path, texts: list[str] = TOY_TEXTS, val: int = 2, test: int = 1,
                    sample_rate: int = 22050) -> Path:
    """Write the corpus (metadata with LJSpeech-style quotes, wavs, splits) under ``root``."""
    import soundfile as sf

    root = Path(root)
    (root / "wavs").mkdir(parents=True, exist_ok=True)
    lines, ids = [], []
    for i, text in enumerate(texts, 1):
        uid = f"TINY-{i:04d}"
        sf.write(root / "wavs" / f"{uid}.wav", tone_speech(text, sample_rate), sample_rate, subtype="PCM_16")
        lines.append(f"{uid}|{text}|{text}")
        ids.append(uid)
    (root / "metadata.csv").write_text("\n".join(lines) + "\n")
    (root / "splits").mkdir(exist_ok=True)
    n_train = len(ids) - val - test
    for name, part in (("train", ids[:n_train]), ("val", ids[n_train:n_train + val]), ("test", ids[n_train + val:])):
        (root / "splits" / f"{name}.txt").write_text("".join(f"{i}\n" for i in part))
    return root
