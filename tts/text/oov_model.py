"""Pronunciations for words in no dictionary: g2p-en's letter-to-phoneme network (a GRU encoder
over letters and a greedy GRU decoder over ARPAbet, 64-dim embeddings, 128-dim states), run in
numpy from the weights inside the ``g2p-en`` wheel. The package itself is never imported: it pulls
nltk and inflect (seconds at start-up) and asks nltk to download data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tts import package_data
from tts.errors import TTSError
from tts.text.symbols import ARPABET

LETTERS = ["<pad>", "<unk>", "</s>", *"abcdefghijklmnopqrstuvwxyz"]
_STRESSLESS_VOWELS = {p[:-1] for p in ARPABET if p[-1].isdigit()}
#: the network's outputs: four specials, then the consonants and stressed vowels in sorted order,
#: with one stressless "UW" (as g2p-en was trained)
PHONES = ["<pad>", "<unk>", "<s>", "</s>", *sorted([p for p in ARPABET if p not in _STRESSLESS_VOWELS] + ["UW"])]
START, END = PHONES.index("<s>"), PHONES.index("</s>")
_LETTER_IDS = {letter: i for i, letter in enumerate(LETTERS) if len(letter) == 1}
MAX_PHONES = 20


def package_dir() -> Path:
    """Where the ``g2p-en`` wheel put its data files (found without importing it)."""
    return package_data.package_dir("g2p_en", "the G2P (words outside the dictionary)")


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


class _GRU:
    """One GRU layer (PyTorch's gate order r, z, n) over row vectors of shape (1, D)."""

    def __init__(self, weights: np.lib.npyio.NpzFile, prefix: str) -> None:
        self.w_input = weights[f"{prefix}_w_ih"].T  # (D, 3H)
        self.w_state = weights[f"{prefix}_w_hh"].T  # (H, 3H)
        self.b_input = weights[f"{prefix}_b_ih"]
        self.b_state = weights[f"{prefix}_b_hh"]
        self.size = self.w_state.shape[0]

    def __call__(self, x: np.ndarray, h: np.ndarray) -> np.ndarray:
        """x: (1, D), h: (1, H) → the next h: (1, H)."""
        from_input = x @ self.w_input + self.b_input
        from_state = h @ self.w_state + self.b_state
        split = 2 * self.size
        reset, update = np.split(_sigmoid(from_input[:, :split] + from_state[:, :split]), 2, axis=-1)
        candidate = np.tanh(from_input[:, split:] + reset * from_state[:, split:])
        return (1 - update) * candidate + update * h


class OovModel:
    """A lower-case word → ARPAbet with stress, e.g. ``"zorblax"`` → ``["Z", "AO1", "R", ...]``."""

    def __init__(self, path: Path | None = None) -> None:
        weights = np.load(path or package_dir() / "checkpoint20.npz")
        self.letter_embedding = weights["enc_emb"]  # (len(LETTERS), 64)
        self.phone_embedding = weights["dec_emb"]  # (len(PHONES), 64)
        self.encoder = _GRU(weights, "enc")
        self.decoder = _GRU(weights, "dec")
        self.out_weight, self.out_bias = weights["fc_w"].T, weights["fc_b"]  # (128, len(PHONES)), (len(PHONES),)
        if self.out_bias.shape[0] != len(PHONES) or self.letter_embedding.shape[0] != len(LETTERS):
            raise TTSError(f"g2p-en's network in {path or package_dir()} does not have the expected "
                           f"{len(LETTERS)} letters and {len(PHONES)} phones (reinstall g2p-en)")

    def __call__(self, word: str) -> list[str]:
        unknown = LETTERS.index("<unk>")
        letters = [_LETTER_IDS.get(c, unknown) for c in word] + [LETTERS.index("</s>")]
        h = np.zeros((1, self.encoder.size), np.float32)
        for letter in letters:
            h = self.encoder(self.letter_embedding[letter][None], h)
        phones: list[str] = []
        previous = START
        for _ in range(MAX_PHONES):
            h = self.decoder(self.phone_embedding[previous][None], h)
            previous = int((h @ self.out_weight + self.out_bias).argmax())
            if previous == END:
                break
            phones.append(PHONES[previous])
        return phones
