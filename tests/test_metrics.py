import shutil
import subprocess

import numpy as np
import pytest

from tts.metrics import ErrorCounts, Failure, attention_report, error_counts, most_diagonal_head, speech_steps
from tts.metrics.asr import normalize_for_scoring
from tts.metrics.mcd import mel_cepstral_distortion, mel_cepstrum
from tts.plots import alignment_figure


def diagonal(steps=60, n=20):
    a = np.zeros((steps, n))
    a[np.arange(steps), np.minimum(np.arange(steps) * n // steps, n - 1)] = 1.0
    return a


def test_perfect_diagonal_has_no_failures():
    report = attention_report(diagonal())
    assert report.ok and report.failures == {} and report.describe_failures() == []
    assert report.focus_rate == 1.0 and report.monotonicity == 1.0 and report.diagonal_correlation > 0.99
    assert report.coverage == 1.0


def test_jump_back_is_a_repeat():
    a = diagonal()
    back = np.zeros_like(a[:10])
    back[np.arange(10), np.arange(10) // 2 + 3] = 1.0  # after reaching token ~13, attention returns to 3..7
    report = attention_report(np.concatenate([a[:40], back, a[40:]]))
    assert report.repeats == 1 and report.failures == {Failure.REPEAT: 1} and report.monotonicity < 1
    assert report.describe_failures() == ["repeat (1x)"]


@pytest.mark.parametrize("offset", [-6, 6])
def test_one_step_flicker_of_the_peak_is_not_a_repeat(offset):
    a = diagonal()
    a[30] = 0.0
    a[30, 10 + offset] = 1.0  # one step on a side lobe behind (or ahead), then back on the diagonal
    assert attention_report(a).repeats == 0
    assert attention_report(a, flicker_steps=0).repeats == 1  # the raw peak track counts it


def test_never_reaching_the_end_is_an_early_stop():
    report = attention_report(diagonal()[:30])  # stops half way through the text
    assert report.early_stop and report.failures == {Failure.EARLY_STOP: 1} and not report.skipped_tokens


def test_the_end_is_the_last_sounding_token():
    """'... compute that"!' ends on T, then three silent tokens: reading T reads to the end."""
    symbols = ["K", "AH0", "M", "P", "Y", "UW1", "T", " ", "DH", "AE1", "T", '"', "!", "~"]
    a = diagonal(60, len(symbols))[:48]  # the peak's last token is 10: the final T
    assert a.argmax(axis=1).max() == 10
    assert attention_report(a).early_stop  # without symbols the end is token 13, 3 past the peak
    assert not attention_report(a, symbols=symbols).early_stop
    assert not attention_report(a[:39], symbols=symbols).early_stop  # peak 8: within end_tolerance = 2
    assert attention_report(a[:34], symbols=symbols).early_stop  # peak 7: "that" not read


def test_skipped_tokens_are_found():
    a = diagonal(60, 20)
    a[:, 8] = 0.0
    a[a.sum(axis=1) == 0, 9] = 1.0  # token 8 is never attended
    report = attention_report(a)
    assert report.skipped_tokens == [8] and report.failures == {Failure.SKIP: 1}
    assert report.describe_failures() == ["skip (1 tokens)"]


def test_the_first_token_is_read_only_when_speech_is_made_on_it():
    """Attention parked on token 0 during a lead-in silence, then jumping to token 2 when the
    speech starts, skipped tokens 0 and 1; a faint smear over the whole utterance does not read
    them either. A token read between two peaks (near them) still counts."""
    lead = np.zeros((10, 20))
    lead[:, 0] = 1.0
    speaking = diagonal(60, 20)
    speaking[:, :2] = 0.0
    speaking[speaking.sum(axis=1) == 0, 2] = 1.0
    a = np.concatenate([lead, speaking])
    speech = np.r_[np.zeros(10, bool), np.ones(60, bool)]
    assert not attention_report(a).first_token_skipped  # the silent steps fool the meter ...
    report = attention_report(a, speech=speech)  # ... unless it knows which steps make speech
    assert report.first_token_skipped and report.skipped_tokens == [0, 1]
    assert attention_report(a).start_token == 0 and report.start_token == 2  # reading began on token 2
    assert attention_report(diagonal()).start_token == 0
    smeared = 0.99 * speaking
    smeared[:, :2] += 0.005  # 0.6 of weight in all, far from the peak for most of the utterance
    assert smeared[:, 0].sum() > 0.25 and attention_report(smeared).first_token_skipped
    between = diagonal(60, 20)
    between[between[:, 8] == 1.0, 9] = 0.6  # token 8 never the peak but read next to it
    between[:, 8] *= 0.4
    assert attention_report(between).skipped_tokens == []


def test_speech_steps_marks_the_decoder_steps_that_are_not_silent():
    mel = np.full((80, 9), np.log(1e-5))
    mel[:, 4:7] = 0.0  # loud frames 4, 5, 6
    assert speech_steps(mel, 1).tolist() == [False] * 4 + [True] * 3 + [False] * 2
    assert speech_steps(mel, 2).tolist() == [False, False, True, True, False]  # ceil(9 / 2) steps
    assert speech_steps(mel, 1, top_db=1000).all()


def test_a_stop_closure_inside_speech_is_speech_and_a_pause_is_not():
    mel = np.full((80, 60), np.log(1e-5))
    for start, end in ((5, 15), (21, 30), (42, 50)):  # speech, a 6-frame closure, speech, a 12-frame pause, speech
        mel[:, start:end] = 0.0
    speech = speech_steps(mel, 1)
    assert speech[5:30].all() and not speech[30:42].any()
    assert not speech[:5].any() and not speech[50:].any()  # lead-in and trailing silence stay silence
    assert not speech_steps(mel, 1, min_pause_frames=6)[15:21].any()


def test_silent_tokens_are_not_skips():
    a = diagonal(60, 20)
    for token in (5, 8):  # a word boundary and a phoneme, never attended: their steps go to the next token
        a[a[:, token] == 1.0, token + 1] = 1.0
        a[:, token] = 0.0
    symbols = ["DH", "AH0", " ", "K", "AE1", " ", "T", "S", "AE1", "T", ",", " ", "AA1", "N", " ", "DH", "AH0",
               "M", "AE1", "T"]
    assert attention_report(a).skipped_tokens == [5, 8]
    assert attention_report(a, symbols=symbols).skipped_tokens == [8]
    assert attention_report(a, symbols=symbols[:8] + ["."] + symbols[9:]).ok
    with pytest.raises(ValueError, match="19 symbols for an alignment over 20 tokens"):
        attention_report(a, symbols=symbols[:-1])


def test_step_limit_is_reported():
    assert attention_report(diagonal(), step_limit_hit=True).failures == {Failure.STEP_LIMIT: 1}


def test_most_diagonal_head_is_the_sharp_diagonal_one():
    rng = np.random.default_rng(0)
    heads = rng.dirichlet(np.ones(20), size=(2, 3, 60))          # (L, H, T_steps, T_text): diffuse noise
    heads[1, 2] = 0.8 * diagonal() + 0.2 / 20
    heads[0, 1] = 0.4 * diagonal() + 0.6 / 20                    # diagonal too, but less focused
    assert most_diagonal_head(heads) == (1, 2)


def test_alignment_figure_axes_carry_the_data():
    a = diagonal(40, 6)
    mel = np.random.default_rng(0).normal(size=(80, 80))
    stop = np.linspace(0, 1, 40)
    tokens = ["HH", "AH0", "L", "OW1", ".", "~"]
    fig = alignment_figure(a, mel=mel, stop_probs=stop, tokens=tokens, reduction_factor=2, title="hello")
    mel_ax, att_ax, stop_ax = fig.axes
    np.testing.assert_array_equal(att_ax.images[0].get_array(), a.T)
    assert [t.get_text() for t in att_ax.get_yticklabels()] == tokens
    assert att_ax.get_ylabel() == "input token" and "decoder step" in stop_ax.get_xlabel()
    np.testing.assert_allclose(stop_ax.lines[0].get_ydata(), stop)
    assert stop_ax.lines[1].get_ydata()[0] == 0.5  # threshold line
    assert mel_ax.images[0].get_extent()[1] == pytest.approx(80 / 2 - 0.5)  # mel drawn in decoder steps
    assert fig._suptitle.get_text() == "hello"


def test_error_rates_on_known_strings():
    assert error_counts("a b c", "a x c d") == ErrorCounts(substitutions=1, insertions=1, words=3, char_errors=3,
                                                           chars=5)
    assert error_counts("one two three", "three") == ErrorCounts(deletions=2, words=3, char_errors=8, chars=13)
    counts = error_counts("The cat sat on the mat.", "the cat sat on a mat")
    assert counts == ErrorCounts(substitutions=1, words=6, char_errors=3, chars=22)
    assert counts.wer == pytest.approx(1 / 6) and counts.cer == pytest.approx(3 / 22)
    assert error_counts("It costs $5.", "it costs five dollars").wer == 0.0
    assert normalize_for_scoring("Dr. Who's 2nd!") == "doctor who's second"
    assert error_counts("hello world", "").wer == 1.0 and error_counts("", "uh").insertions == 1
    total = counts + error_counts("hello world", "hello")
    assert (total.word_errors, total.deletions, total.words) == (2, 1, 8) and total.wer == pytest.approx(2 / 8)


def test_mcd_has_the_cepstral_scale():
    n_mels, frames = 80, 20
    omega = np.pi * (np.arange(n_mels) + 0.5) / n_mels
    log_mel = np.repeat((2 * 0.1 * np.cos(3 * omega))[:, None], frames, axis=1)  # c_3 = 0.1, others 0
    assert mel_cepstrum(log_mel)[2] == pytest.approx(np.full(frames, 0.1))
    # 10 / ln 10 · sqrt(2 · 0.1²) dB against a flat spectrum
    assert mel_cepstral_distortion(log_mel, np.zeros_like(log_mel)) == pytest.approx(0.6142, abs=1e-3)


def test_mcd_is_zero_for_identical_and_grows_with_distortion():
    rng = np.random.default_rng(0)
    mel = rng.normal(-5, 2, size=(80, 100))
    assert mel_cepstral_distortion(mel, mel) == pytest.approx(0.0, abs=1e-9)
    stretched = np.repeat(mel, 2, axis=1)  # same content, twice as slow: DTW absorbs it
    assert mel_cepstral_distortion(stretched, mel) < 1e-6
    noisy = mel + rng.normal(0, 1, size=mel.shape)
    assert mel_cepstral_distortion(noisy, mel) > mel_cepstral_distortion(mel + rng.normal(0, 0.2, size=mel.shape), mel)


def test_recognizer_seeds_a_fresh_whisper_for_every_transcription(monkeypatch):
    """Whisper samples at higher temperatures when greedy decoding looks unsure, and CTranslate2
    seeds each worker thread's sampler once, when it first samples: the meter loads a fresh model
    (new threads) and seeds it before every call, so a transcript depends on its waveform alone."""
    ctranslate2 = pytest.importorskip("ctranslate2")
    from types import SimpleNamespace

    from tts.metrics import Recognizer

    events = []
    monkeypatch.setattr(ctranslate2, "set_random_seed", lambda seed: events.append(("seed", seed)))

    class FakeWhisper:
        def __init__(self):
            events.append(("load",))

        def transcribe(self, audio, **options):
            events.append(("transcribe", len(audio), options["beam_size"]))
            return [SimpleNamespace(text=" Hello"), SimpleNamespace(text=" world. ")], None

    recognizer = Recognizer.__new__(Recognizer)
    recognizer.seed = 7
    monkeypatch.setattr(recognizer, "fresh_model", FakeWhisper)
    for _ in range(2):
        assert recognizer(np.zeros(22050, dtype=np.float32), 22050) == "Hello world."
    assert events == [("seed", 7), ("load",), ("transcribe", 16000, 1)] * 2  # resampled to Whisper's 16 kHz


def test_a_transcript_of_babble_does_not_depend_on_what_was_heard_before(tmp_path):
    """Speech played backwards makes Whisper unsure, so it samples: heard alone, after other babble
    or by another recognizer, the same words (with one model for every call, both of these
    sentences were heard differently the second time)."""
    pytest.importorskip("faster_whisper")
    if not shutil.which("espeak-ng"):
        pytest.skip("espeak-ng makes the speech")
    from tts.audio import load_wav
    from tts.metrics import Recognizer

    babble = []
    for k, text in enumerate(["The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. "
                              "It is easy to tell the depth of a well.",
                              "Four hours of steady work faced us. A large size in stockings is hard to sell. "
                              "The boy was there when the sun rose."]):
        subprocess.run(["espeak-ng", "-w", str(tmp_path / f"{k}.wav"), text], check=True, capture_output=True)
        wav, sample_rate = load_wav(tmp_path / f"{k}.wav")
        babble.append(np.ascontiguousarray(wav[::-1]))
    recognizer = Recognizer(threads=1)
    alone = recognizer(babble[0], sample_rate)
    recognizer(babble[1], sample_rate)
    assert alone and recognizer(babble[0], sample_rate) == alone == Recognizer(threads=1)(babble[0], sample_rate)


def test_dnsmos_hears_speech_above_noise(speech_wav):
    pytest.importorskip("speechmos")
    from tts.audio import load_wav
    from tts.metrics.mos import MOSPredictor

    predictor = MOSPredictor()
    wav, sr = load_wav(speech_wav)
    speech = predictor(wav, sr)
    noise = predictor(np.random.default_rng(0).normal(0, 0.1, sr).astype(np.float32), sr)
    assert noise.p808 + 0.5 < speech.p808 <= 5.0 and noise.bak < speech.bak
