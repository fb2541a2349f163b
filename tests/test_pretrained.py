"""The bundled model (tts/pretrained/) loads, speaks one sentence and its attention behaves."""

import subprocess
import sys

import numpy as np
import pytest

from tts.checkpoint import PRETRAINED
from tts.errors import TTSError
from tts.synthesis import Synthesizer


@pytest.fixture(scope="module")
def bundled():
    return Synthesizer.from_checkpoint()


def test_bundled_model_speaks_with_a_monotonic_alignment(bundled):
    result = bundled(["The weather is nice today."])[0]
    report = result.segments[0].report
    peaks = result.alignment.argmax(axis=1)
    assert not report.step_limit_hit, "the stop token never fired"
    assert report.monotonicity > 0.9 and np.all(np.diff(peaks) >= -2), report.summary()
    assert peaks.max() >= len(result.tokens) - 3, "attention never reached the last tokens"
    assert 0.8 < result.duration < 5.0 and np.abs(result.waveform).max() > 0.05


@pytest.mark.parametrize("text", ["Go.", "Why?", "Wait.", "Please.", "Could I help?",
                                  "Fire engines raced past the old school.", "I"])
def test_bundled_model_reads_from_the_first_phoneme_and_stops_by_itself(bundled, text):
    """The location-sensitive model this one replaced skipped the first phoneme of half the test
    sentences ("Could I" → "Good I", "Fire engines" → "Higher engines") and ran "Go." to the step
    limit; this one ran "I" to the limit until synthesis closed a text ending on a word with a stop.
    Trained with a lead-in silence, it jumps to the silent end during the lead-in of some single
    words and stops there ("Wait." after 3 steps) unless its stored attention window holds it."""
    result = bundled([text])[0]
    report = result.segments[0].report
    assert report.ok and not report.first_token_skipped, f"{text!r}: {report.summary()}"


def test_bundled_model_is_released_with_its_attention_window_and_lead_in(bundled):
    assert bundled.settings.attention_window == [1, 2]
    result = bundled(["Wait."])[0]
    lead = int(0.15 * result.sample_rate)
    assert np.abs(result.waveform[: lead // 2]).max() < 0.5 * np.abs(result.waveform).max()
    assert 0.3 < result.duration < 1.5


def test_missing_bundled_model_is_one_clear_line(monkeypatch, tmp_path):
    import tts.checkpoint

    monkeypatch.setattr(tts.checkpoint, "PRETRAINED", tmp_path / "gone.pt")
    with pytest.raises(TTSError, match="bundled model .* is missing: restore it with 'git checkout"):
        Synthesizer.from_checkpoint()


def test_corrupt_bundled_model_is_one_clear_line(monkeypatch, tmp_path):
    import tts.checkpoint

    broken = tmp_path / "broken.pt"
    broken.write_bytes(PRETRAINED.read_bytes()[:1000])
    monkeypatch.setattr(tts.checkpoint, "PRETRAINED", broken)
    with pytest.raises(TTSError, match="bundled model is unreadable .* restore it with 'git checkout"):
        Synthesizer.from_checkpoint()


def test_synthesize_without_checkpoint_uses_the_bundled_model(tmp_path):
    out = subprocess.run([sys.executable, "-m", "tts.cli", "synthesize", "--text", "Hello there.", "--out",
                          str(tmp_path / "hello.wav"), "--no-plots"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "hello.wav").stat().st_size > 10_000
