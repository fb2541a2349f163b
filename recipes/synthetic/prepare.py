#!/usr/bin/env python3
"""Build an offline LJSpeech-format corpus spoken by Festival's HTS `slt` voice (or flite's).

    python recipes/synthetic/prepare.py --out data/synthetic [--size 3000] [--engine festival|flite]
    python recipes/synthetic/prepare.py --texts ljspeech --out data/LJSpeech-standin --size 700

``--speakers slt,awb,rms,ked``: a corpus of several speakers, each voice of
:data:`tts.data.engines.VOICES` saying its own share of the sentences (round robin; ids
``<speaker>-00001``...), its name in the fourth field of ``metadata.csv``, ``--n-val`` and
``--n-test`` held out per speaker. One name makes a single-voice corpus that names its speaker
(for adapting a multi-speaker model to it).

``--texts fortunes`` (default): sentences from Debian's `fortunes` / `fortunes-min` (5–25
plain-ASCII words, no all-caps, no dialogue markers, no URLs, deduplicated), chosen
deterministically from ``--seed``, with ``splits/`` held out at random.

``--short N`` adds N training-only utterances of one to four words (ids ``SHT*``): half the fortune
files' own short sentences ("Keep cool." "Huh?"), half single words taken from the training
sentences. A corpus of 5–25-word sentences never shows a model a one-word utterance, and it
learns neither to start nor to stop one. No text of the robustness suite
(``tts/evaluation/suites/robustness.yaml``) is among them; the val and test splits are unchanged.

``--texts broad``: sentences of 5–25 words from the fortune files and LJSpeech's transcripts
(17,400 candidates), chosen by a greedy cover of ARPAbet diphones (``diphone_cover.py``; a diphone counts
until it occurs ``--cover-target`` times), no robustness-suite text among them; the coverage goes
to ``coverage.json``. 8,000 of them hold 1,245 of the 39 × 39 diphones (1,041 at least ten times),
where the 3,000 fortunes of the default corpus hold 1,149 (841).

``--texts words``: carrier sentences that say the ``--words-top`` most frequent English words until
each occurs ``--words-min-count`` times in the training text of ``--words-from`` and this corpus
together (``word_cover.py``; ids ``WRD*``), for a voice that misreads the common words its corpus
seldom says. ``--size`` is ignored: the words decide how many sentences there are.

``--texts ljspeech``: an offline stand-in for LJSpeech-1.1 in its exact layout (``metadata.csv``
``id|text|normalized text`` and ``wavs/<id>.wav``, no splits): LJSpeech's own normalized
transcripts with their ids, from NVIDIA's filelists (``recipes/ljspeech/nvidia_filelists.tsv.gz``):
all 500 test and 100 val utterances and ``size - 600`` train ones (below 600, NVIDIA's
proportions of ``size``). ``bash egs/ljspeech/run.sh --data-dir <it>`` then runs on it offline.

The text is normalized with the project's frontend before it is spoken, so audio and transcript
agree on how numbers and abbreviations are read. Wavs are resampled to 22050 Hz, trimmed and
peak-normalized. With Festival, each utterance's phone timings (where every phone starts and ends
in the stored wav) go to ``timings/<id>.tsv`` (:mod:`tts.data.timings`); re-running on a corpus
made before they were recorded speaks each utterance again for its timings and checks that the
audio is byte for byte the stored wav. Re-running resumes, after a finished or an interrupted run alike
(``texts.tsv`` records every id's text before synthesis starts): a finished wav is kept only if
its id still has the same text, so audio of two runs never mixes under one id.
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tts.audio import save_wav  # noqa: E402
from tts.data.corpus import (  # noqa: E402
    Utterance,
    make_speaker_splits,
    make_splits,
    read_metadata,
    read_split,
    require_corpus,
    write_metadata,
    write_splits,
)
from tts.data.engines import ENGINE_VOICES, ENGINES, VOICES, check_engine, check_voice, speak_timed  # noqa: E402
from tts.data.timings import timings_path, write_timings  # noqa: E402
from tts.data.workers import share_out, stop_signals_raise  # noqa: E402
from tts.errors import Stopped, TTSError, report_to_user  # noqa: E402
from tts.text import normalize_text  # noqa: E402
from tts.text.sentences import sentences  # noqa: E402

FORTUNE_DIR = Path("/usr/share/games/fortunes")
LJSPEECH_FILELISTS = Path(__file__).resolve().parents[1] / "ljspeech" / "nvidia_filelists.tsv.gz"
_URL_RE = re.compile(r"https?:|www\.|\.com\b|@")
_DIALOGUE_RE = re.compile(r"(^|\s)[A-Z][a-zA-Z]*:\s")


def check_system(voices: list[str]) -> None:
    for voice in voices:
        check_voice(voice)
    if not any(FORTUNE_DIR.glob("*.dat")):
        raise TTSError("the fortune files are not installed: run 'apt-get install -y fortunes fortunes-min' "
                       "(or 'make system-deps')")


def entry_sentences(entry: str) -> list[str]:
    """Split a fortune entry into sentences, dropping attribution lines ("-- Mark Twain")."""
    lines: list[str] = []
    for line in entry.splitlines():
        if line.strip().startswith(("--", "- ", "-")) and lines:
            break
        lines.append(line)
    return sentences(" ".join(lines))


def clean_sentence(text: str, min_words: int = 5, max_words: int = 25) -> str | None:
    """A sentence if it qualifies (``min_words``–``max_words`` plain-ASCII words, no all-caps,
    dialogue or URLs), else None."""
    words = text.split()
    if not min_words <= len(words) <= max_words:
        return None
    if not text.isascii() or any(not (c.isprintable()) for c in text):
        return None
    if _URL_RE.search(text) or _DIALOGUE_RE.search(text) or re.search(r"\bQ:|\bA:", text):
        return None
    letters = [c for c in text if c.isalpha()]
    if not letters or sum(c.isupper() for c in letters) > 0.5 * len(letters):
        return None
    if re.search(r"[\[\]{}<>|\\/_*#=~^`]", text) or text.count('"') % 2:
        return None
    if text[-1] not in ".!?":
        return None
    return text


def read_sentences(min_words: int = 5, max_words: int = 25) -> list[str]:
    """All qualifying sentences of ``min_words``–``max_words`` words from the fortune files (the
    `off/` folder is excluded), deduplicated."""
    seen, sentences = set(), []
    for path in sorted(p for p in FORTUNE_DIR.iterdir() if p.is_file() and not p.suffix):
        for entry in path.read_text(encoding="latin-1").split("\n%\n"):
            if "\t" in entry:  # tab-indented entries are verse, tables or dialogue
                continue
            for sentence in filter(None, (clean_sentence(s, min_words, max_words) for s in entry_sentences(entry))):
                if sentence.lower() not in seen:
                    seen.add(sentence.lower())
                    sentences.append(sentence)
    return sentences


def speak_job(job: tuple[str, str, str, str, int]) -> tuple[str, str, str]:
    """Synthesize one utterance to its final wav (and, from Festival, its phone timings); returns
    (id, what happened, error or ''). What happened: ``spoken``; ``kept`` (both files were there);
    ``timed`` (a wav from before timings were recorded, spoken again: the same audio, timings
    added) or ``changed`` (spoken again, and the audio differs: both files replaced)."""
    uid, text, voice, out_dir, sample_rate = job
    final = Path(out_dir) / "wavs" / f"{uid}.wav"
    timings = timings_path(out_dir, uid)
    had_wav = final.is_file() and final.stat().st_size > 1000
    if had_wav and (VOICES[voice].engine != "festival" or timings.is_file()):
        return uid, "kept", ""
    try:
        spoken = speak_timed(text, voice, sample_rate)
    except TTSError as exc:
        return uid, "failed", str(exc)
    tmp_final = final.with_suffix(".tmp.wav")
    save_wav(tmp_final, spoken.wav, sample_rate)
    outcome = "spoken"
    if had_wav:
        outcome = "timed" if tmp_final.read_bytes() == final.read_bytes() else "changed"
    if spoken.phones is not None:
        write_timings(timings, spoken.phones)
    os.replace(tmp_final, final)
    return uid, outcome, ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="corpus root to create")
    parser.add_argument("--texts", choices=["fortunes", "ljspeech", "broad", "words"], default="fortunes",
                        help="broad: fortunes and LJSpeech's transcripts, chosen for diphone coverage; "
                             "words: carrier sentences for the common words a corpus seldom says")
    parser.add_argument("--words-from", type=Path, help="words: the corpus whose training text is counted")
    parser.add_argument("--words-top", type=int, default=20000, help="words: how many of the most frequent words")
    parser.add_argument("--words-min-count", type=int, default=2, help="words: occurrences each word should reach")
    parser.add_argument("--cover-target", type=int, default=5,
                        help="broad: a diphone counts toward the cover until it occurs this many times")
    parser.add_argument("--size", type=int, default=3000, help="number of utterances")
    parser.add_argument("--engine", choices=ENGINES, default="festival", help="the voice of a single-speaker corpus")
    parser.add_argument("--speakers", type=lambda text: [v.strip() for v in text.split(",") if v.strip()],
                        default=[], help=f"comma-separated voices of a multi-speaker corpus ({', '.join(VOICES)})")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--n-val", type=int, default=100)
    parser.add_argument("--n-test", type=int, default=100)
    parser.add_argument("--sample-rate", type=int, default=22050)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--short", type=int, default=0, metavar="N",
                        help="add N training-only utterances of 1-4 words (fortunes only)")
    args = parser.parse_args(argv)
    if args.short < 0 or (args.short and (args.texts != "fortunes" or args.speakers)):
        parser.error("--short takes a count >= 0 and goes with --texts fortunes and one speaker")
    if args.texts == "words" and (args.words_from is None or args.words_top < 1 or args.words_min_count < 1):
        parser.error("--texts words needs --words-from CORPUS, --words-top >= 1 and --words-min-count >= 1")
    if args.speakers and args.texts == "ljspeech":
        parser.error("--speakers makes a corpus of its own: not with --texts ljspeech (LJSpeech has one speaker)")
    if len(set(args.speakers)) < len(args.speakers):
        parser.error(f"--speakers names a voice twice: {','.join(args.speakers)}")
    try:
        voices = args.speakers or [ENGINE_VOICES[args.engine]]
        if args.texts in ("fortunes", "broad", "words"):
            check_system(voices)
        else:
            check_engine(args.engine)
        with stop_signals_raise("the corpus recipe"):
            build(args)
    except (TTSError, Stopped) as exc:
        return report_to_user(exc)
    return 0


def fortune_utterances(size: int, seed: int) -> list[Utterance]:
    candidates = read_sentences()
    if len(candidates) < size:
        raise TTSError(f"only {len(candidates)} usable sentences in {FORTUNE_DIR}, asked for {size}")
    random.Random(seed).shuffle(candidates)
    return [Utterance(f"SYN{i:05d}", s, normalize_text(s)) for i, s in enumerate(candidates[:size], 1)]


def comparable(text: str) -> str:
    """``text`` lowercased with only its letters, digits and spaces, to compare texts."""
    return " ".join(re.sub(r"[^a-z0-9' ]", " ", text.lower()).split())


def short_utterances(count: int, train_texts: list[str], seed: int) -> list[Utterance]:
    """``count`` utterances of one to four words, half the fortune files' short sentences and half
    single words of ``train_texts`` (three letters or more, each once; either kind fills in when
    the other runs out), none a robustness-suite text."""
    from tts.evaluation.robustness import load_suite

    suite = load_suite("robustness")
    held_out = {comparable(t) for texts in suite["categories"].values() for t in texts}
    rng = random.Random(seed)
    phrases = [t for t in read_sentences(min_words=1, max_words=4) if comparable(t) not in held_out]
    rng.shuffle(phrases)
    words = sorted({w.strip(".,;:!?\"'()") for text in train_texts for w in text.split()} - held_out)
    words = [w for w in words if re.fullmatch(r"[a-z]{3,}", w)]
    rng.shuffle(words)
    n_phrases = max((count + 1) // 2, count - len(words))
    texts = phrases[:n_phrases] + [w.capitalize() + "." for w in words[:count - min(n_phrases, len(phrases))]]
    if len(texts) < count:
        raise TTSError(f"only {len(texts)} short texts available, asked for --short {count}")
    return [Utterance(f"SHT{i:05d}", t, normalize_text(t)) for i, t in enumerate(texts, 1)]


def ljspeech_utterances(size: int, seed: int) -> list[Utterance]:
    """LJSpeech ids and normalized texts from NVIDIA's filelists: every test and val utterance and
    ``size - 600`` train ones, or NVIDIA's proportions of ``size`` (at least one val and test)."""
    with gzip.open(LJSPEECH_FILELISTS, "rt", encoding="utf-8") as fh:
        rows = [line.rstrip("\n").split("\t", 2) for line in fh]
    by_split = {name: [(uid, text) for uid, split, text in rows if split == name] for name in ("train", "val", "test")}
    if not 3 <= size <= len(rows):
        raise TTSError(f"--size for the LJSpeech stand-in must lie in 3..{len(rows)}, got {size}")
    held = {name: len(by_split[name]) if size >= 600 else max(1, round(size * len(by_split[name]) / len(rows)))
            for name in ("val", "test")}
    counts = {**held, "train": size - sum(held.values())}
    rng = random.Random(seed)
    chosen = sorted(pair for name, n in counts.items() for pair in rng.sample(by_split[name], n))
    return [Utterance(uid, text, normalize_text(text)) for uid, text in chosen]


def broad_utterances(size: int, target: int, out: Path) -> list[Utterance]:
    """``size`` sentences of 5–25 words from the fortune files (ids ``FRT*``) and LJSpeech's
    transcripts (their own ids), chosen by a greedy diphone cover (:mod:`diphone_cover`), none a
    robustness-suite text; the coverage goes to ``out/coverage.json``."""
    import json

    from diphone_cover import coverage_report, diphones, greedy_cover, phones
    from tqdm import tqdm

    from tts.evaluation.robustness import load_suite
    from tts.text import Tokenizer

    if not LJSPEECH_FILELISTS.is_file():
        raise TTSError(f"{LJSPEECH_FILELISTS} is missing (LJSpeech's transcripts): restore it with "
                       f"'git checkout -- {LJSPEECH_FILELISTS.relative_to(LJSPEECH_FILELISTS.parents[2])}'")
    held_out = {comparable(t) for texts in load_suite("robustness")["categories"].values() for t in texts}
    texts = {f"FRT{i:05d}": s for i, s in enumerate(read_sentences(), 1)}
    with gzip.open(LJSPEECH_FILELISTS, "rt", encoding="utf-8") as fh:
        texts.update({uid: text for uid, _, text in (line.rstrip("\n").split("\t", 2) for line in fh)
                      if 5 <= len(text.split()) <= 25})
    texts = {uid: t for uid, t in texts.items() if comparable(t) not in held_out}
    if len(texts) < size:
        raise TTSError(f"only {len(texts)} candidate sentences, asked for {size}")
    tokenizer, sounds, lengths = Tokenizer(), {}, {}
    for uid, text in tqdm(sorted(texts.items()), desc="phonemes", unit="sentence"):
        try:
            sequence = phones(text, tokenizer)
        except TTSError as exc:
            print(f"warning: left out {uid}: {exc}")
            continue
        sounds[uid], lengths[uid] = diphones(sequence), len(sequence)
    chosen = greedy_cover(sounds, lengths, size, target)
    report = {"candidates": len(sounds), "cover_target": target, **coverage_report([sounds[k] for k in chosen]),
              "from_ljspeech": sum(not k.startswith("FRT") for k in chosen)}
    (out / "coverage.json").write_text(json.dumps(report, indent=1))
    print(f"diphone coverage: {json.dumps(report)}")
    return [Utterance(uid, texts[uid], normalize_text(texts[uid])) for uid in sorted(chosen)]


def word_utterances(corpus: Path, top: int, min_count: int, seed: int) -> list[Utterance]:
    """Carrier sentences (:mod:`word_cover`) for the ``top`` most frequent English words, each brought
    to ``min_count`` occurrences counting ``corpus``'s training text; ids ``WRD*``."""
    from word_cover import carrier_sentences, common_words, word_counts

    require_corpus(corpus)
    train = set(read_split(corpus, "train"))
    counts = word_counts(u.text for u in read_metadata(corpus) if u.id in train)
    words = common_words(top)
    texts = carrier_sentences(words, counts, min_count, seed)
    short = sum(counts[w] < min_count for w in words)
    print(f"words: {short} of the {len(words)} most frequent qualifying words occur fewer than {min_count} times "
          f"in {corpus}'s training text; {len(texts)} sentences say them")
    return [Utterance(f"WRD{i:05d}", t, normalize_text(t)) for i, t in enumerate(texts, 1)]


def synthesize(out: Path, utterances: list[Utterance], args: argparse.Namespace) -> list[Utterance]:
    """Speak every utterance to ``out/wavs`` (a wav whose id changed text is redone); the ones kept.
    Failures are listed in ``synthesis_failures.tsv``."""
    from tqdm import tqdm

    # a rerun, finished or interrupted: a wav is reused only if its id still has its text. The
    # manifest is written before each run speaks, so it knows what an interrupted run said; the
    # metadata (written at the end) speaks only for ids a corpus from before the manifest lacks
    manifest = out / "texts.tsv"
    spoken = {u.id: u.normalized for u in read_metadata(out)} if (out / "metadata.csv").is_file() else {}
    if manifest.is_file():
        spoken.update(dict(line.split("\t", 1) for line in manifest.read_text(encoding="utf-8").splitlines()
                           if "\t" in line))
    for utt in utterances:
        if spoken.get(utt.id, utt.normalized) != utt.normalized:
            (out / "wavs" / f"{utt.id}.wav").unlink(missing_ok=True)
    spoken.update({u.id: u.normalized for u in utterances})
    manifest.write_text("".join(f"{uid}\t{text}\n" for uid, text in sorted(spoken.items())), encoding="utf-8")
    jobs = [(u.id, u.normalized, u.speaker or ENGINE_VOICES[args.engine], str(out), args.sample_rate)
            for u in utterances]
    failures: dict[str, str] = {}
    outcomes: Counter[str] = Counter()
    for uid, outcome, error in tqdm(share_out(speak_job, jobs, args.jobs), total=len(jobs),
                                    desc=",".join(args.speakers) or ENGINE_VOICES[args.engine], unit="utt"):
        outcomes[outcome] += 1
        if error:
            failures[uid] = error
    print("speech: " + ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items())))
    if outcomes["changed"]:
        print(f"warning: {outcomes['changed']} stored wavs differed from what {args.engine} says now "
              f"(another version of the engine?); they were replaced, with their timings")
    if failures:
        with open(out / "synthesis_failures.tsv", "a") as fh:
            fh.write("".join(f"{k}\t{v}\n" for k, v in sorted(failures.items())))
    return [u for u in utterances if u.id not in failures]


def build(args: argparse.Namespace) -> None:
    out = Path(args.out)
    (out / "wavs").mkdir(parents=True, exist_ok=True)
    (out / "synthesis_failures.tsv").unlink(missing_ok=True)
    utterances = {"fortunes": fortune_utterances, "ljspeech": ljspeech_utterances,
                  "broad": lambda size, seed: broad_utterances(size, args.cover_target, out),
                  "words": lambda size, seed: word_utterances(args.words_from, args.words_top, args.words_min_count,
                                                              seed)}[args.texts](args.size, args.seed)
    if args.speakers:
        utterances = with_speakers(utterances, args.speakers)
    kept = synthesize(out, utterances, args)
    if args.texts == "ljspeech":
        write_metadata(out, kept)
        print(f"LJSpeech stand-in ready at {out}: {len(kept)} utterances ({len(utterances) - len(kept)} failed); "
              f"prepare it with recipes/ljspeech/prepare.py --data-dir {out}")
        return
    splits = (make_speaker_splits({u.id: u.speaker for u in kept}, args.n_val, args.n_test, args.seed) if args.speakers
              else make_splits([u.id for u in kept], args.n_val, args.n_test, args.seed))
    short = []
    if args.short:
        train = set(splits["train"])
        short = synthesize(out, short_utterances(args.short, [u.text for u in kept if u.id in train], args.seed), args)
        splits["train"] = sorted(splits["train"] + [u.id for u in short])
    write_metadata(out, kept + short)
    write_splits(out, splits)
    failed = len(utterances) - len(kept) + args.short - len(short)
    print(f"corpus ready at {out}: {len(kept) + len(short)} utterances ({len(short)} short, {failed} failed), "
          f"{args.n_val} val / {args.n_test} test held out" + (" per speaker" if args.speakers else ""))


def with_speakers(utterances: list[Utterance], speakers: list[str]) -> list[Utterance]:
    """The utterances shared out among ``speakers`` in turn, each renamed ``<speaker>-<n>``."""
    counts = dict.fromkeys(speakers, 0)
    shared = []
    for i, utt in enumerate(utterances):
        speaker = speakers[i % len(speakers)]
        counts[speaker] += 1
        shared.append(Utterance(f"{speaker}-{counts[speaker]:05d}", utt.text, utt.normalized, speaker))
    return shared


if __name__ == "__main__":
    sys.exit(main())
