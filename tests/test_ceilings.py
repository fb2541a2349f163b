"""The ceiling's transcripts kept between evaluations (tts.evaluation.ceilings): reused only for the
same reference mel, vocoder, recognizer and machine, and the evaluation's figures unchanged."""

import json

import numpy as np
import pytest
import torch
from conftest import CountingRecognizer, recordings, tiny_synthesizer

from tts.config import AudioConfig, GriffinLimConfig
from tts.config.vocoder import VocosConfig
from tts.evaluation.ceilings import CeilingTranscripts, cache_root, ceiling_transcripts
from tts.evaluation.scoring import Meters, score
from tts.vocoders import GriffinLim
from tts.vocoders.vocos import VocosGenerator


def small_vocos(seed: int) -> VocosGenerator:
    torch.manual_seed(seed)
    return VocosGenerator(VocosConfig(dim=16, hidden=32, layers=1), AudioConfig()).eval()


def test_a_vocoders_fingerprint_is_its_weights_and_settings():
    first, same, other = small_vocos(0), small_vocos(0), small_vocos(1)
    assert first.fingerprint() == same.fingerprint() != other.fingerprint()
    with torch.no_grad():
        next(same.parameters())[0].flatten()[0] += 1e-7  # one weight, one last bit
    assert same.fingerprint() != first.fingerprint()
    assert GriffinLim().fingerprint() == GriffinLim().fingerprint()
    assert GriffinLim().fingerprint() != GriffinLim(settings=GriffinLimConfig(iterations=3)).fingerprint()
    assert GriffinLim(AudioConfig(fmax=7600.0)).fingerprint() != GriffinLim().fingerprint()


def test_a_transcript_is_reused_only_for_the_same_mel_vocoder_and_recognizer(tmp_path):
    mel = np.random.default_rng(0).standard_normal((80, 30)).astype(np.float32)
    kept = CeilingTranscripts(tmp_path, small_vocos(0), CountingRecognizer())
    assert kept.get(mel) is None
    kept.put(mel, "hello there")
    assert CeilingTranscripts(tmp_path, small_vocos(0), CountingRecognizer()).get(mel) == "hello there"
    assert kept.get(mel + 1e-6) is None and kept.get(mel[:, :29]) is None
    assert CeilingTranscripts(tmp_path, small_vocos(1), CountingRecognizer()).get(mel) is None
    assert CeilingTranscripts(tmp_path, small_vocos(0), CountingRecognizer("counting 2")).get(mel) is None
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(threads + 1)  # other threads, other last bits
        assert CeilingTranscripts(tmp_path, small_vocos(0), CountingRecognizer()).get(mel) is None
    finally:
        torch.set_num_threads(threads)
    (entry,) = tmp_path.glob("*/*.json")
    entry.write_text("{not json")
    assert kept.get(mel) is None  # a damaged file is not a transcript
    assert (kept.hits, kept.misses) == (0, 4)


def test_the_cache_folder_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("TTS_CACHE_DIR", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    assert ceiling_transcripts(GriffinLim(), CountingRecognizer()).folder == tmp_path / "c" / "ceilings"
    monkeypatch.setenv("TTS_CACHE_DIR", "off")
    assert cache_root() is None and ceiling_transcripts(GriffinLim(), CountingRecognizer()) is None
    monkeypatch.delenv("TTS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "tts"


def test_a_folder_that_cannot_be_written_stops_keeping_and_the_evaluation_goes_on(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("")
    kept = CeilingTranscripts(blocker / "ceilings", GriffinLim(), CountingRecognizer())
    mel = np.zeros((80, 5), dtype=np.float32)
    kept.put(mel, "a")
    kept.put(mel, "b")
    assert kept.get(mel) is None
    assert [r.message for r in caplog.records].count(caplog.records[0].message) == 1
    assert "not kept" in caplog.records[0].message and "TTS_CACHE_DIR" in caplog.records[0].message


def test_a_second_evaluation_hears_only_our_speech_and_scores_the_same(tiny_experiment, tiny_corpus, tmp_path,
                                                                      monkeypatch):
    """Ours is transcribed every time; the ceiling (the recording through our vocoder) once, and
    its vocoder pass is skipped when no MOS is asked: the rows are the same."""
    monkeypatch.setenv("TTS_CACHE_DIR", str(tmp_path / "cache"))
    synth, items = tiny_synthesizer(tiny_experiment), recordings(tiny_corpus, 3)
    vocoded = []
    vocode = synth.vocode
    monkeypatch.setattr(synth, "vocode", lambda mel, vocoder=None: vocoded.append(mel.shape) or vocode(mel, vocoder))
    rows = []
    for run, calls in (("first", 6), ("second", 3)):  # ours and the ceiling, then ours alone
        recognizer = CountingRecognizer()
        vocoded.clear()
        scored = score(synth, items, tmp_path / run, Meters(recognizer=recognizer), progress=False)
        rows.append([{k: v for k, v in s.row.items() if k != "rtf"} for s in scored])
        assert recognizer.calls == len(vocoded) == calls
    assert rows[0] == rows[1]
    assert all(r["reference_transcript"].endswith(" samples") for r in rows[1])
    assert len(list((tmp_path / "cache" / "ceilings").glob("*/*.json"))) == 3
    entry = json.loads(next((tmp_path / "cache" / "ceilings").glob("*/*.json")).read_text())
    assert set(entry) == {"transcript"}


@pytest.mark.parametrize("value", ["off", "OFF"])
def test_keeping_turned_off_hears_the_ceiling_every_time(tiny_experiment, tiny_corpus, tmp_path, monkeypatch, value):
    monkeypatch.setenv("TTS_CACHE_DIR", value)
    synth, items = tiny_synthesizer(tiny_experiment), recordings(tiny_corpus, 1)
    for run in ("first", "second"):
        recognizer = CountingRecognizer()
        score(synth, items, tmp_path / run, Meters(recognizer=recognizer), progress=False)
        assert recognizer.calls == 2
