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
             use_speaker: bool | None = None) -> dict:
    """Evaluate ``split`` (its first ``limit`` utterances) against its recordings with the
    synthesizer's settings; a multi-speaker voice says each utterance as the corpus's speaker of
    it, and is scored per speaker and for speaker similarity (``use_speaker``, default: for a
    multi-speaker voice). Returns the summary written to ``out/summary.json``."""
    out = Path(out)
    metadata = {u.id: u for u in read_metadata(data_root)}
    wanted = read_split(data_root, split)[:limit]
    utterances = [metadata[i] for i in wanted if i in metadata]
    if not utterances:
        raise TTSError(f"split '{split}' of {data_root} has no utterances in metadata.csv")
    audio = synthesizer.config.audio
    speakers = bool(synthesizer.speakers)
    for utt in utterances:
        synthesizer.speaker_index(utt.speaker if speakers else None)  # every speaker known, before any work
    items = [Item(u.id, u.normalized, edge_silence(load_wav(u.wav_path(data_root), audio.sample_rate)[0], audio),
                  speaker=u.speaker if speakers else "") for u in utterances]
    meters = Meters.create(use_asr, use_mos, speakers if use_speaker is None else use_speaker)
    scored = score(synthesizer, items, out, meters, progress)
    summary = {"checkpoint_step": synthesizer.step, "split": split, **summarize(scored)}
    write_tables([s.row for s in scored], summary, out)
    return summary
