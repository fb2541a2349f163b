"""The HTTP service: synthesis as WAV (or JSON with the alignment figure) for applications, and a
page where a person types text and listens.

Built on Starlette (ASGI, run by uvicorn): small, typed, well kept, and its test client drives the
same application in-process. Every voice and vocoder is loaded once, at start. Requests that
arrive together (within ``batch_window`` seconds, for the same voice, vocoder and settings) are
synthesized as one batch in a worker thread, so the event loop keeps answering. Limits have clear
answers: a text over ``max_chars`` (413), a body over ``max_body_bytes`` (413), more than
``max_jobs`` requests waiting or running (503), a synthesis over ``timeout`` seconds (504). Bad
requests get a 4xx with ``{"error": "..."}`` and the service keeps serving.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import math
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import soundfile as sf
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tts.config import InferenceConfig, resolve_inference
from tts.errors import TTSError
from tts.plots import figure_to_png
from tts.serve.page import PAGE
from tts.streaming import Streamer
from tts.synthesis import Result, Synthesizer

#: per-request settings a client may change (the rest of a voice's inference settings stay its own)
REQUEST_SETTINGS = ("stop_threshold", "max_decoder_steps", "max_frames_per_token", "attention_window",
                    "sentence_pause", "split_sentences")


@dataclass
class Limits:
    """What one request may ask for, and how much the service takes on at once."""

    max_chars: int = 2000
    max_body_bytes: int = 64 * 1024
    max_jobs: int = 16
    timeout: float = 120.0
    batch_window: float = 0.02


class RequestError(Exception):
    """A request the service refuses: an HTTP status and one message."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


@dataclass
class Job:
    text: str
    done: asyncio.Future


@dataclass
class Batcher:
    """Collects the jobs of one (voice, vocoder, settings) that arrive together and synthesizes
    them as one batch in a worker thread."""

    synthesizer: Synthesizer
    settings: InferenceConfig
    window: float
    pending: list[Job] = field(default_factory=list)
    flushing: bool = False

    def submit(self, text: str) -> asyncio.Future:
        job = Job(text, asyncio.get_running_loop().create_future())
        self.pending.append(job)
        if not self.flushing:
            self.flushing = True
            asyncio.get_running_loop().create_task(self._flush())
        return job.done

    async def _flush(self) -> None:
        await asyncio.sleep(self.window)
        jobs, self.pending, self.flushing = self.pending, [], False
        try:
            results = await asyncio.to_thread(self.synthesizer, [job.text for job in jobs], self.settings)
        except Exception as exc:  # noqa: BLE001 - every waiting request hears of it
            for job in jobs:
                if not job.done.done():
                    job.done.set_exception(exc)
            return
        for job, result in zip(jobs, results):
            if not job.done.done():
                job.done.set_result(result)


class Service:
    """The voices (name → vocoder name → synthesizer), the limits and the running batches."""

    def __init__(self, voices: dict[str, dict[str, Synthesizer]], limits: Limits):
        if not voices:
            raise TTSError("tts serve needs at least one voice")
        self.voices, self.limits = voices, limits
        self.default_voice = next(iter(voices))
        self.batchers: dict[tuple[str, str, str], Batcher] = {}
        self.jobs = 0

    def describe(self) -> dict[str, Any]:
        return {"status": "ok", "voices": {name: sorted(by_vocoder) for name, by_vocoder in self.voices.items()},
                "default_voice": self.default_voice, "jobs": self.jobs,
                "limits": {"max_chars": self.limits.max_chars, "max_jobs": self.limits.max_jobs}}

    def parse(self, body: bytes, content_type: str) -> tuple[str, str, str, InferenceConfig]:
        """The text, voice, vocoder and settings a request asks for; a bad one raises RequestError."""
        if "application/json" not in content_type:
            raise RequestError(415, f"send JSON (Content-Type: application/json), not {content_type or 'nothing'}")
        try:
            request = json.loads(body, parse_constant=lambda name: math.nan)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RequestError(400, f"the body is not valid JSON ({exc})") from None
        if not isinstance(request, dict):
            raise RequestError(400, 'the body must be a JSON object like {"text": "Hello."}')
        unknown = sorted(set(request) - {"text", "voice", "vocoder", "settings"})
        if unknown:
            raise RequestError(400, f"unknown field(s) {', '.join(unknown)}: send text, voice, vocoder, settings")
        text = request.get("text")
        if not isinstance(text, str) or not text.strip():
            raise RequestError(400, 'give the text to say: {"text": "Hello."}')
        if len(text) > self.limits.max_chars:
            raise RequestError(413, f"the text has {len(text)} characters; this service says at most "
                                    f"{self.limits.max_chars} per request")
        voice = request.get("voice") or self.default_voice
        if voice not in self.voices:
            raise RequestError(404, f"no voice {voice!r} (voices: {', '.join(self.voices)})")
        vocoders = self.voices[voice]
        vocoder = request.get("vocoder") or next(iter(vocoders))
        if vocoder not in vocoders:
            raise RequestError(404, f"voice {voice!r} has no vocoder {vocoder!r} (it has {', '.join(vocoders)})")
        synthesizer = vocoders[vocoder]
        changes = request.get("settings") or {}
        if not isinstance(changes, dict) or set(changes) - set(REQUEST_SETTINGS):
            raise RequestError(400, f"settings may change {', '.join(REQUEST_SETTINGS)}")
        try:
            settings = resolve_inference(synthesizer.settings, changes)
        except TTSError as exc:
            raise RequestError(422, str(exc)) from None
        return text, voice, vocoder, settings

    def _admit(self, text: str, synthesizer: Synthesizer) -> None:
        """Refuse a request when the service is full (503) or its text has nothing to say (400), before any work."""
        if self.jobs >= self.limits.max_jobs:
            raise RequestError(503, f"busy: {self.jobs} requests are waiting or running; try again shortly")
        try:
            synthesizer.prepare(text)
        except TTSError as exc:
            raise RequestError(400, str(exc)) from None

    def stream(self, text: str, synthesizer: Synthesizer, settings: InferenceConfig) -> StreamingResponse:
        """A WAV streamed chunk by chunk (:class:`~tts.streaming.Streamer`); a client that goes
        away stops it at the next chunk."""
        self._admit(text, synthesizer)

        def chunks() -> Iterator[bytes]:
            self.jobs += 1  # counted while it runs: a stream never started holds no place
            try:
                yield streaming_wav_header(synthesizer.config.audio.sample_rate)
                for samples in Streamer(synthesizer)(text, settings):
                    yield pcm16(samples)
            finally:
                self.jobs -= 1

        return StreamingResponse(chunks(), media_type="audio/wav")

    async def synthesize(self, text: str, synthesizer: Synthesizer, settings: InferenceConfig,
                         key: tuple[str, str, str]) -> Result:
        self._admit(text, synthesizer)
        self.jobs += 1
        try:
            batcher = self.batchers.setdefault(key, Batcher(synthesizer, settings, self.limits.batch_window))
            return await asyncio.wait_for(asyncio.shield(batcher.submit(text)), self.limits.timeout)
        except TTSError as exc:
            raise RequestError(400, str(exc)) from None
        except asyncio.TimeoutError:
            raise RequestError(504, f"synthesis took over {self.limits.timeout:g} s; send a shorter text") from None
        finally:
            self.jobs -= 1


def streaming_wav_header(sample_rate: int) -> bytes:
    """A 16-bit mono WAV header whose sizes say "until the stream ends" (0xFFFFFFFF), as streamed WAV does."""
    import struct

    return (b"RIFF" + struct.pack("<I", 0xFFFFFFFF) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, sample_rate,
                                                                               2 * sample_rate, 2, 16)
            + b"data" + struct.pack("<I", 0xFFFFFFFF - 36))


def pcm16(samples: np.ndarray) -> bytes:
    return (np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes()


def wav_bytes(result: Result) -> bytes:
    buffer = io.BytesIO()
    sf.write(buffer, np.clip(result.waveform, -1, 1), result.sample_rate, format="WAV", subtype="PCM_16")
    return buffer.getvalue()


def warnings_of(result: Result) -> list[str]:
    return [f"{seg.text[:60]!r}: {', '.join(kind.value for kind in seg.report.failures)}"
            for seg in result.segments if seg.report.failures]


def create_app(service: Service) -> Starlette:
    """The ASGI application: ``GET /`` (the page), ``GET /health``, ``POST /synthesize`` (WAV; with
    ``?format=json`` the audio, the alignment figure and the warnings; with ``?stream=1`` a WAV
    streamed in chunks while the decoder runs)."""

    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse(PAGE)

    async def health(request: Request) -> JSONResponse:
        return JSONResponse(service.describe())

    async def synthesize(request: Request) -> Response:
        try:
            declared = request.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > service.limits.max_body_bytes:
                raise RequestError(413, f"the body has {declared} bytes; at most {service.limits.max_body_bytes}")
            body = b""
            async for chunk in request.stream():
                body += chunk
                if len(body) > service.limits.max_body_bytes:
                    raise RequestError(413, f"the body is over {service.limits.max_body_bytes} bytes")
            text, voice, vocoder, settings = service.parse(body, request.headers.get("content-type", ""))
            synthesizer = service.voices[voice][vocoder]
            if request.query_params.get("stream") == "1":
                return service.stream(text, synthesizer, settings)
            result = await service.synthesize(text, synthesizer, settings, (voice, vocoder, repr(settings)))
        except RequestError as exc:
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        warnings = warnings_of(result)
        if request.query_params.get("format") == "json":
            figure = figure_to_png(result.figure(synthesizer.step, settings.stop_threshold))
            return JSONResponse({"audio": base64.b64encode(wav_bytes(result)).decode(), "sample_rate": result.sample_rate,
                                 "seconds": round(result.duration, 3), "figure": base64.b64encode(figure).decode(),
                                 "warnings": warnings, "voice": voice, "vocoder": vocoder,
                                 "timings": {k: round(v, 4) for k, v in result.timings.items()}})
        headers = {"X-TTS-Seconds": f"{result.duration:.3f}", "X-TTS-Warnings": str(len(warnings))}
        return Response(wav_bytes(result), media_type="audio/wav", headers=headers)

    return Starlette(routes=[Route("/", page), Route("/health", health),
                             Route("/synthesize", synthesize, methods=["POST"])])
