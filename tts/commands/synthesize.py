"""``tts synthesize``: texts → wavs, mels, alignment plots and an ``index.html`` to listen with."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from tts.commands.options import add_checkpoint, add_engine, add_inference, add_limit, add_vocoder, load_synthesizer
from tts.errors import TTSError

if TYPE_CHECKING:
    import numpy as np

    from tts.synthesis import Synthesizer
    from tts.vocoders import Vocoder


def declare(p: argparse.ArgumentParser) -> None:
    add_checkpoint(p)
    add_engine(p)
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--text")
    group.add_argument("--text-file", help="one text per line; empty lines are skipped")
    group.add_argument("--split", help="the normalized texts of a corpus split (with --data, --limit)")
    p.add_argument("--data", help="corpus root, for --split")
    add_limit(p)
    p.add_argument("--out", required=True, help="output folder, or a .wav path for a single text")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--speaker", help="who speaks, for a voice of several speakers (an unknown name lists them)")
    who.add_argument("--speaker-wav", metavar="WAV",
                     help="speak like the speaker of this recording (a voice trained on d-vectors, "
                          "model.speakers.vectors: ge2e; no training on them)")
    add_inference(p)
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (shown for more than a batch of sentences)")
    add_vocoder(p, several=True)
    p.set_defaults(func=run)


def read_texts(args: argparse.Namespace) -> list[str]:
    """The texts to say: ``--text``, the lines of ``--text-file`` or a corpus split's normalized texts."""
    if args.text is not None:
        return [args.text]
    if args.split is not None:
        from tts.data import read_metadata, read_split

        if args.data is None:
            raise TTSError("--split needs --data (the corpus root)")
        by_id = {u.id: u.normalized for u in read_metadata(args.data)}
        return [by_id[i] for i in read_split(args.data, args.split)[: args.limit] if i in by_id]
    path = Path(args.text_file)
    if path.is_dir():
        raise TTSError(f"text file {path} is a folder: give a file with one text per line")
    if not path.is_file():
        raise TTSError(f"text file {path} does not exist")
    data = path.read_bytes()
    text = data.decode("utf-8-sig", errors="replace")
    if b"\x00" in data or text.count("\ufffd") > 0.05 * max(len(text), 1):
        raise TTSError(f"text file {path} is not text (binary data or another encoding than UTF-8): give a UTF-8 "
                       f"file with one text per line")
    lines = text.splitlines()
    texts = [line.strip() for line in lines if line.strip()]
    if not texts:
        raise TTSError(f"text file {path} has no text (only empty lines)")
    if len(texts) < len(lines):
        print(f"skipped {len(lines) - len(texts)} empty line(s) in {path}")
    return texts


def vocoding_with(synthesizer: Synthesizer, vocoder: Vocoder) -> Callable[[np.ndarray], np.ndarray]:
    """mel ``(n_mels, T_mel)`` → waveform with ``vocoder`` instead of the synthesizer's own."""
    def vocode(mel: np.ndarray) -> np.ndarray:
        return synthesizer.vocode(mel, vocoder)

    return vocode


def run(args: argparse.Namespace) -> int:
    from tts.synthesis import output_names, write_outputs
    from tts.vocoder_loader import vocoder_for
    from tts.vocoders.catalogue import short_names

    texts = read_texts(args)
    given = args.vocoder or []
    names = short_names(given)  # each given once, checked before anything loads
    output_names(args.out, 1 if args.text is not None else len(texts))
    synthesizer = load_synthesizer(args)
    # checked before any text is said
    speaker = synthesizer.resolve_speaker(synthesizer.speaker_vector(args.speaker_wav) if args.speaker_wav
                                          else args.speaker)
    settings = synthesizer.settings
    split = settings.split_sentences
    if len(texts) == 1:
        synthesizer.prepare(texts[0], split)  # a single text's problem is the error itself
    valid, prepared = [], []
    for number, text in enumerate(texts, 1):
        try:
            prepared.append(synthesizer.prepare(text, split))
            valid.append(text)
        except TTSError as exc:
            print(f"skipped line {number}: {exc}")
    if not valid:
        raise TTSError(f"no line could be turned into tokens (all {len(texts)} skipped)")
    output_names(args.out, len(valid))
    compare = {name: vocoding_with(synthesizer, vocoder_for(option, synthesizer.device, synthesizer.config.audio,
                                                            settings.griffin_lim))
               for name, option in zip(names[1:], given[1:])}
    results = synthesizer.synthesize_prepared(valid, prepared, progress=not args.no_progress, speaker=speaker)
    summary = write_outputs(results, args.out, synthesizer.step, plots=not args.no_plots,
                            stop_threshold=settings.stop_threshold, compare=compare,
                            vocoder_name=synthesizer.vocoder_name, precision=synthesizer.precision)
    for row in summary["utterances"]:
        flag = f"  [{', '.join(row['failures'])}]" if row["failures"] else ""
        print(f"{row['wav']}: {row['seconds']:.2f} s audio, RTF {row['rtf']:.3f}{flag}")
    print(f"total: {summary['audio_seconds']:.2f} s audio in {summary['compute_seconds']:.2f} s "
          f"(RTF {summary['rtf']:.3f}); {summary['step_limit_hits']} step-limit hit(s)")
    return 0
