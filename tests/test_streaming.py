"""Streaming synthesis: chunks leave while the decoder runs and add up to the whole utterance's audio."""

import numpy as np
import pytest
import torch

from tts.streaming import DECODER_THREADS, Streamer
from tts.synthesis import Synthesizer


@pytest.fixture(scope="module")
def bundled():
    return Synthesizer.from_checkpoint()  # the pretrained HiFi-GAN: chunked within a sentence


def test_streamed_chunks_add_up_to_the_whole_utterance(bundled):
    text = "The quick brown fox jumps over the lazy dog. It ran away!"
    (whole,) = bundled([text])
    streamer = Streamer(bundled, first_chunk_frames=8, largest_chunk_frames=16)
    chunks = list(streamer(text))
    assert len(chunks) > 4  # several chunks per sentence, and the pause between the sentences
    streamed = np.concatenate(chunks)
    assert streamed.shape == whole.waveform.shape
    assert float(np.abs(streamed - whole.waveform).max()) < 1e-3  # float rounding of batched vs chunked products


def test_griffin_lim_streams_sentence_by_sentence(tiny_experiment):
    synthesizer = Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt",
                                              changes={"max_frames_per_token": 2, "griffin_lim.iterations": 2})
    text = "A cat sat. Dogs run fast."
    chunks = list(Streamer(synthesizer)(text))
    assert len(chunks) == 3  # sentence, pause, sentence
    np.testing.assert_allclose(np.concatenate(chunks), synthesizer([text])[0].waveform, atol=1e-4)  # batch of 1 vs 2
    with pytest.raises(Exception, match="nothing to speak"):
        next(Streamer(synthesizer)("?!"))


def test_the_background_decoder_computes_on_one_thread_and_the_consumer_keeps_its_count(bundled, monkeypatch):
    before = torch.get_num_threads()
    counts: list[int] = []
    decode = bundled.decode

    def counting_decode(*args, **kwargs):
        counts.append(torch.get_num_threads())
        return decode(*args, **kwargs)

    monkeypatch.setattr(bundled, "decode", counting_decode)
    torch.set_num_threads(2)
    try:
        chunks = list(Streamer(bundled, first_chunk_frames=8)("A cat sat."))
        assert counts == [DECODER_THREADS] == [1] and torch.get_num_threads() == 2 and len(chunks) > 1
    finally:
        torch.set_num_threads(before)
