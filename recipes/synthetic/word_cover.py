"""Sentences that say common English words a corpus says too rarely.

A voice misreads the words its training text seldom says (docs/everyday_voice/coverage_errors.json:
13 % of words never said are misheard, 2 % of words said 100 times or more), although every diphone
of them is well covered. This module lists the most frequent English words (wordfreq's ``en`` list,
which ships inside its wheel; no download) that a corpus's training text says fewer than
``min_count`` times and writes carrier sentences that say each of them until it has ``min_count``
occurrences, three words per sentence in varied positions, statements and questions
("She wrote kettle, coins and attic on the board."). The words are mentioned, not used, so any
word fits any slot; the voice learns how each is pronounced, the sentences' grammar stays plain.

Only words of three or more letters that the CMU dictionary knows are taken (the frontend and the
speaking engine then agree on them; abbreviations like "uk" or "dont" drop out), and no profanity
or slur.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable

from tts.errors import TTSError

#: carrier sentences, each with three slots; a slot at the start is capitalized
TEMPLATES = (
    "The next three words are {a}, {b} and {c}.",
    "She wrote {a}, {b} and {c} on the board.",
    "On the list I found {a}, {b} and {c}.",
    "He said {a}, then {b}, then {c}.",
    "Please repeat after me: {a}, {b}, {c}.",
    "Can you spell {a}, {b} and {c}?",
    "{a}, {b} and {c} were the words of the day.",
    "The first card said {a}, the second {b}, the third {c}.",
    "I heard {a} and {b}, but not {c}.",
    "Was it {a}, {b} or {c}?",
    "Her notes read {a}, {b}, and finally {c}.",
    "They practised the words {a}, {b} and {c} together.",
    "The teacher pointed at {a}, then at {b} and {c}.",
    "We looked up {a}, {b} and {c} in the dictionary.",
    "Did he say {a} or {b}? I think he said {c}.",
    "Write down {a}, {b} and {c}, please.",
    "The answers to the puzzle were {a}, {b} and {c}.",
    "My brother kept saying {a}, {b} and {c}.",
    "{a} comes before {b}, and {c} comes last.",
    "Is the word {a}, or is it {b} or {c}?",
)

#: words no corpus of this project says: strong profanity and slurs
BLOCKED = frozenset("""
asshole bastard bitch bitches bullshit cock cocks cunt dick dicks fag faggot fags fuck fucked fucker
fuckers fucking fucks motherfucker nigga niggas nigger niggers porn porno pussy retard retarded shit
shits shitty slut sluts twat whore whores wank wanker
""".split())

_WORD = re.compile(r"[a-z]+")


def word_counts(texts: Iterable[str]) -> Counter[str]:
    """How often each lower-case word (letters only; "don't" counts as "don" and "t") occurs."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(_WORD.findall(text.lower()))
    return counts


def common_words(top: int) -> list[str]:
    """The ``top`` most frequent English words (wordfreq) that qualify: three or more letters, in the
    CMU dictionary, not blocked; most frequent first."""
    try:
        from wordfreq import top_n_list
    except ImportError as exc:  # an extra of this project: pip install -e '.[corpus]'
        raise TTSError("wordfreq is not installed: run make setup (or pip install -e '.[corpus]')") from exc
    from tts.text.g2p import cmu_dictionary

    known = cmu_dictionary()
    return [w for w in top_n_list("en", top) if _WORD.fullmatch(w) and len(w) >= 3 and w in known and w not in BLOCKED]


def carrier_sentences(words: list[str], counts: Counter[str], min_count: int, seed: int) -> list[str]:
    """Sentences that bring every word of ``words`` to ``min_count`` occurrences, counting those in
    ``counts``: a word short by k appears in k sentences (never twice in one), three words each, in
    the :data:`TEMPLATES` taken in turn from a seeded shuffle. Groups left with fewer than three
    words are filled up with the most frequent words of ``words``."""
    rng = random.Random(seed)
    pool = [w for w in words for _ in range(max(0, min_count - counts[w]))]
    rng.shuffle(pool)
    groups: list[list[str]] = []
    open_groups: list[list[str]] = []  # fewer than three words yet
    for word in pool:
        group = next((g for g in open_groups if word not in g), None)
        if group is None:
            group = []
            open_groups.append(group)
            groups.append(group)
        group.append(word)
        if len(group) == 3:
            open_groups.remove(group)
    for group in open_groups:
        group += [w for w in words if w not in group][: 3 - len(group)]
    templates = list(TEMPLATES)
    sentences = []
    for i, group in enumerate(groups):
        if i % len(templates) == 0:
            rng.shuffle(templates)
        text = templates[i % len(templates)].format(a=group[0], b=group[1], c=group[2])
        sentences.append(text[0].upper() + text[1:])
    return sentences
