"""Streaming synthesis: audio leaves while the decoder runs.

:class:`Streamer` says a text sentence after sentence. Within a sentence the decoder runs in a
worker thread and hands over each step's frames (:func:`tts.models.decoding.decode`'s
``on_step``); each chunk of frames that the postnet and the vocoder can finish is vocoded
and yielded. A chunk is computed with the context the two need on each side (the postnet's
convolutions and the vocoder's receptive field, :attr:`~tts.vocoders.Vocoder.context_frames`) and
only its own samples are kept, so the streamed audio equals the sentence vocoded whole, within
float rounding. Griffin-Lim, whose every sample depends on the whole mel, streams sentence by
sentence. Between sentences comes the same silence as in :class:`~tts.synthesis.Synthesizer`.

The decoder's thread computes on :data:`DECODER_THREADS` CPU thread while the consumer's postnet and
vocoder keep the caller's count: a second team of the caller's size on the same cores makes both
wait for each other (docs/serving.md, "Streaming").
"""

from __future__ import annotations

import queue
import threading
from typing import Iterator

import numpy as np
import torch

from tts.config import InferenceConfig
from tts.models.decoding import stop_when
from tts.synthesis import Synthesizer, last_spoken
from tts.text import TokenizedText

_END = object()

#: CPU threads of the background decoder (one sentence, one step at a time: a second thread buys it little)
DECODER_THREADS = 1


class Streamer:
    """``streamer(text)`` → an iterator of waveform chunks ``(T_chunk,)`` (float32, the voice's sample
    rate). A sentence's first chunk holds ``first_chunk_frames`` mel frames (the time to first
    audio), each next one twice as many, up to ``largest_chunk_frames`` (fewer chunks, less
    context computed twice)."""

    def __init__(self, synthesizer: Synthesizer, first_chunk_frames: int = 16, largest_chunk_frames: int = 128):
        self.synthesizer = synthesizer
        self.first_chunk_frames, self.largest_chunk_frames = first_chunk_frames, largest_chunk_frames
        self.postnet_context = synthesizer.model.postnet_context_frames

    def __call__(self, text: str, settings: InferenceConfig | None = None,
                 cancel: threading.Event | None = None, speaker: str | None = None) -> Iterator[np.ndarray]:
        """The chunks of ``text`` said as ``speaker`` (a multi-speaker voice's). A consumer that
        stops early (closes the iterator) stops the decoding too, between two decoder steps; so
        does setting ``cancel`` from another thread (the iterator then raises
        :class:`~tts.errors.Cancelled`)."""
        synthesizer = self.synthesizer
        settings = settings or synthesizer.settings
        index = synthesizer.speaker_index(speaker)
        pieces = synthesizer.prepare(text, settings.split_sentences)  # a text with nothing to say fails here
        audio, r = synthesizer.config.audio, synthesizer.model.reduction_factor
        pause_steps = int(round(settings.sentence_pause * audio.sample_rate / audio.hop_length / r))
        silence = np.zeros((pause_steps * r + 1) * audio.hop_length, dtype=np.float32)
        cancel = cancel or threading.Event()
        try:
            for k, tokens in enumerate(pieces):
                if k:
                    yield silence
                if synthesizer.vocoder.context_frames is None:
                    mel = synthesizer._synthesize([tokens], settings, cancel, index)[0].mel
                    yield synthesizer.vocode(mel).astype(np.float32)
                else:
                    yield from self._sentence(tokens, settings, cancel, index)
        finally:
            cancel.set()  # a decode still running in the background stops at its next step

    def _decode_in_background(self, tokens: TokenizedText, settings: InferenceConfig,
                              cancel: threading.Event, speaker: int | None) -> queue.Queue:
        """Start decoding one sentence in a worker thread; its frames ``(r, n_mels)`` arrive in the
        queue, then the end marker (or the exception that stopped it). Setting ``cancel`` stops it."""
        synthesizer = self.synthesizer
        frames: queue.Queue = queue.Queue()
        ids = torch.tensor([tokens.ids], device=synthesizer.device)
        last = torch.tensor([last_spoken(synthesizer.tokenizer.ids_to_symbols(tokens.ids))], device=synthesizer.device)
        speakers = None if speaker is None else torch.tensor([speaker], device=synthesizer.device)

        def run() -> None:
            torch.set_num_threads(DECODER_THREADS)  # this thread's own count; the consumer's stays
            try:
                with torch.no_grad():
                    synthesizer.decode(ids, None, settings, last,
                                       on_step=stop_when(cancel, lambda step: frames.put(step[0].float().cpu())),
                                       speakers=speakers)
                frames.put(_END)
            except Exception as exc:  # noqa: BLE001 - handed to the consumer (if still there), who raises it
                frames.put(exc)

        threading.Thread(target=run, daemon=True).start()
        return frames

    @torch.no_grad()
    def _sentence(self, tokens: TokenizedText, settings: InferenceConfig,
                  cancel: threading.Event, speaker: int | None) -> Iterator[np.ndarray]:
        context_v = self.synthesizer.vocoder.context_frames or 0
        incoming = self._decode_in_background(tokens, settings, cancel, speaker)
        before: list[torch.Tensor] = []  # mel frames before the postnet, (n_mels,) each
        emitted, finished, chunk = 0, False, self.first_chunk_frames
        while True:
            item = incoming.get()
            if isinstance(item, Exception):
                raise item
            if item is _END:
                finished = True
            else:
                before.extend(item)
            total = len(before)
            ready = total if finished else total - self.postnet_context - context_v
            while ready - emitted >= chunk or (finished and emitted < total):
                end = total if finished and ready - emitted < 2 * chunk else emitted + chunk
                yield self._chunk(before, emitted, end, total, finished, context_v)
                emitted, chunk = end, min(2 * chunk, self.largest_chunk_frames)
            if finished:
                return

    def _chunk(self, before: list[torch.Tensor], start: int, end: int, total: int, finished: bool,
               context_v: int) -> np.ndarray:
        """The samples of mel frames ``[start, end)``: the postnet over the frames it needs, the
        vocoder over the refined frames it needs, and only this chunk's samples kept (the
        utterance's last frame adds none: ``T_wav = (T_mel − 1) · hop``)."""
        lo_p = max(0, start - context_v - self.postnet_context)
        hi_p = min(total, end + context_v + self.postnet_context)
        window = torch.stack(before[lo_p:hi_p], dim=1)[None].to(self.synthesizer.device)  # (1, n_mels, frames)
        refined = self.synthesizer.model.refine(window, torch.tensor([window.shape[2]], device=window.device))
        # the refined frames the vocoder needs start at lo_p; frames past hi_p are not there yet (or ever)
        samples = self.synthesizer.vocoder.chunk(refined.float(), start - lo_p, end - lo_p,
                                                 last=finished and hi_p == total)
        return samples.cpu().numpy().astype(np.float32)
