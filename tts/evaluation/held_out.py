"""A checkpoint on a corpus split, against its recordings: attention failures, MCD, WER/CER and
DNSMOS against the reference voice through the same vocoder (:mod:`tts.evaluation.scoring`)."""

from __future__ import annotations

from pathlib import Path

from tts.audio import edge_silence, load_wav
from tts.data.corpus import read_metadata, read_split
from tts.errors import TTSError
from tts.evaluation.scoring import Item, Meters, score, summarize, write_tables
from tts.synthesis import Synthesizer


def evaluate(synthesizer: Synthesizer, data_root: str | Path, out: str | Path, split: str = "test",
             limit: int | None = None, use_asr: bool = True, use_mos: bool = True, progress: bool = True,
             use_speaker: bool | None = None, speaker: str | None = None) -> dict:
    """Evaluate ``split`` (its first ``limit`` utterances) against its recordings with the
    synthesizer's settings. A multi-speaker voice says each utterance as the corpus's speaker of
    it, or all as ``speaker`` (e.g. its closest voice to a speaker it does not know). On a voice
    or a corpus of several speakers every figure is also given per speaker, with speaker
    similarity (``use_speaker``; default: then). Returns the summary written to ``out/summary.json``."""
    out = Path(out)
    metadata = {u.id: u for u in read_metadata(data_root)}
    wanted = read_split(data_root, split)[:limit]
    utterances = [metadata[i] for i in wanted if i in metadata]
    if not utterances:
        raise TTSError(f"split '{split}' of {data_root} has no utterances in metadata.csv")
    audio = synthesizer.config.audio
    several = bool(synthesizer.speakers)
    said_as = {u.id: (speaker or u.speaker) if several else speaker for u in utterances}
    for name in set(said_as.values()):
        synthesizer.speaker_index(name)  # every speaker known (or none asked of one voice), before any work
    items = [Item(u.id, u.normalized, edge_silence(load_wav(u.wav_path(data_root), audio.sample_rate)[0], audio),
                  speaker=u.speaker, said_as=said_as[u.id]) for u in utterances]
    any_speaker = several or any(u.speaker for u in utterances)
    meters = Meters.create(use_asr, use_mos, any_speaker if use_speaker is None else use_speaker)
    scored = score(synthesizer, items, out, meters, progress)
    summary = {"checkpoint_step": synthesizer.step, "precision": synthesizer.precision, "split": split, **summarize(scored)}
    write_tables([s.row for s in scored], summary, out)
    return summary
