"""An interrupted evaluation resumes at the first batch it had not scored (tts.evaluation.journal):
the same rows as an uninterrupted run, nothing synthesized twice, and nothing reused from another
checkpoint or other settings."""

import dataclasses
import json

import pytest
from conftest import CountingRecognizer, recordings, tiny_synthesizer

from tts.evaluation.journal import JOURNAL
from tts.evaluation.scoring import Meters, score, write_tables
from tts.synthesis import Synthesizer


class Interrupted(Exception):
    pass


ORIGINAL_CALL = Synthesizer.__call__


def counting_calls(monkeypatch, fail_at: int | None = None) -> list[int]:
    """Count the synthesizer's batches (their sizes); raise at batch ``fail_at`` (1-based) as a kill would."""
    sizes: list[int] = []

    def counted(self, texts, *args, **kwargs):
        if fail_at is not None and len(sizes) + 1 == fail_at:
            raise Interrupted
        sizes.append(len(texts))
        return ORIGINAL_CALL(self, texts, *args, **kwargs)

    monkeypatch.setattr(Synthesizer, "__call__", counted)
    return sizes


def without_timing(scored) -> list[dict]:
    return [{k: v for k, v in s.row.items() if k != "rtf"} for s in scored]


@pytest.fixture
def setup(tiny_experiment, tiny_corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("TTS_CACHE_DIR", "off")
    synth = tiny_synthesizer(tiny_experiment)
    settings = dataclasses.replace(synth.settings, batch_size=2)
    return synth, settings, recordings(tiny_corpus, 5)  # batches of 2, 2 and 1


def test_an_interrupted_evaluation_resumes_with_the_rows_of_an_uninterrupted_one(setup, tmp_path, monkeypatch):
    synth, settings, items = setup
    whole = score(synth, items, tmp_path / "whole", Meters(recognizer=CountingRecognizer()), False, settings)

    sizes = counting_calls(monkeypatch, fail_at=3)
    with pytest.raises(Interrupted):
        score(synth, items, tmp_path / "cut", Meters(recognizer=CountingRecognizer()), False, settings)
    lines = (tmp_path / "cut" / JOURNAL).read_text().splitlines()
    assert sizes == [2, 2] and len(lines) == 2
    (tmp_path / "cut" / JOURNAL).write_text("\n".join(lines) + '\n{"key": "cut sh')  # a kill mid-write

    sizes = counting_calls(monkeypatch)
    recognizer = CountingRecognizer()
    resumed = score(synth, items, tmp_path / "cut", Meters(recognizer=recognizer), False, settings)
    assert sizes == [1] and recognizer.calls == 2  # only the last item: ours and its ceiling
    assert without_timing(resumed) == without_timing(whole)
    assert [s.ours for s in resumed] == [s.ours for s in whole]
    assert [s.ceiling for s in resumed] == [s.ceiling for s in whole]
    assert (tmp_path / "cut" / JOURNAL).exists()  # until the folder's tables are written
    write_tables([s.row for s in resumed], {}, tmp_path / "cut")
    assert not (tmp_path / "cut" / JOURNAL).exists()


def test_groups_scored_into_one_folder_resume_past_the_finished_ones(setup, tmp_path, monkeypatch):
    """A suite scores its categories one after another into one folder: cut in the second, the
    first is read back whole."""
    synth, settings, items = setup
    first, second = items[:2], items[2:]  # one batch, then two
    sizes = counting_calls(monkeypatch, fail_at=3)
    score(synth, first, tmp_path, Meters(), False, settings)
    with pytest.raises(Interrupted):
        score(synth, second, tmp_path, Meters(), False, settings)
    assert sizes == [2, 2]
    sizes = counting_calls(monkeypatch)
    score(synth, first, tmp_path, Meters(), False, settings)
    score(synth, second, tmp_path, Meters(), False, settings)
    assert sizes == [1]


def test_batches_kept_under_other_settings_or_meters_are_scored_again(setup, tmp_path, monkeypatch):
    synth, settings, items = setup
    counting_calls(monkeypatch, fail_at=2)
    with pytest.raises(Interrupted):
        score(synth, items, tmp_path, Meters(recognizer=CountingRecognizer()), False, settings)
    kept = (tmp_path / JOURNAL).read_text()
    assert len(kept.splitlines()) == 1 and json.loads(kept)["records"][0]["row"]["id"] == items[0].id

    other_settings = dataclasses.replace(settings, max_frames_per_token=3.0)
    for changed, meters in ((other_settings, Meters(recognizer=CountingRecognizer())),
                            (settings, Meters(recognizer=CountingRecognizer("counting 2"))),
                            (settings, Meters())):
        (tmp_path / JOURNAL).write_text(kept)
        sizes = counting_calls(monkeypatch)
        score(synth, items, tmp_path, meters, False, changed)
        assert sizes == [2, 2, 1]


def test_a_synthesizers_fingerprint_is_its_weights_tokenizer_and_vocoder(tiny_experiment):
    first, same = (Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt") for _ in range(2))
    assert first.fingerprint() == same.fingerprint()
    gl = Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt", changes={"griffin_lim.iterations": 3})
    assert gl.fingerprint() != first.fingerprint()  # another vocoder setting
    import torch

    with torch.no_grad():
        next(same.model.parameters()).flatten()[0] += 1e-6
    assert same.fingerprint() != first.fingerprint()
