"""The HTTP service: synthesis as WAV (or JSON with the alignment figure) for applications, and a
page where a person types text and listens.

Built on Starlette (ASGI, run by uvicorn): small, typed, well kept, and its test client drives the
same application in-process. Every voice and vocoder is loaded once, at start. Requests that arrive
together (within ``batch_window`` seconds, for the same voice, vocoder and settings) are synthesized
as one batch on the service's compute thread, so the event loop keeps answering; its sentences are decoded
``batch_size`` at a time (the voices' ``inference.batch_size``, 64 here where a command's default is
8: a request waits for its whole batch, and one step of 64 costs far less than eight of 8). One
batch (or stream chunk) computes at a time: concurrent ones would each start a team of CPU threads,
and teams that share cores wait for each other (docs/speed.md, "Sharing the CPU"); requests that
arrive while a batch runs join the next one. That thread is always the same one, and it also loaded
the models: PyTorch's team of CPU threads belongs to the thread that starts it, so work (or loading)
on a second thread would keep a second team on the same cores, and every batch took twice as long
(docs/serving.md, "One compute thread"). Where the thread count was chosen from the idle cores,
each batch takes the cores other processes left idle (looked at every 30 s at most). Limits have
clear answers: a text over ``max_chars`` (413), a body over ``max_body_bytes`` (413), more than
``max_jobs`` requests waiting or running (503), a synthesis over ``timeout`` seconds (504). Bad
requests get a 4xx with ``{"error": "..."}`` and the service keeps serving.

Work nobody waits for stops: a request that times out or whose client leaves gives up its job,
and a batch whose jobs have all been given up stops between two decoder steps (so does a stream
whose client leaves); ``/health`` counts the jobs whose work has not ended. JSON answers escape
``<``, ``>`` and ``&`` and, like every answer, carry ``X-Content-Type-Options: nosniff``, so text a
client sent can never run as a page's script.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator, TypeVar

import numpy as np
import soundfile as sf
import torch
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tts.config import InferenceConfig, resolve_inference
from tts.errors import Cancelled, TTSError
from tts.plots import figure_to_png
from tts.serve.page import PAGE
from tts.streaming import Streamer
from tts.synthesis import Result, Synthesizer
from tts.threads import SharedCores

#: seconds between two looks at whether a waiting request's client is still there
DISCONNECT_POLL = 0.25

T = TypeVar("T")


class Compute:
    """Where the service computes: on one thread of its own (``executor``), which also loads the
    models (:meth:`call`), one batch or stream chunk at a time (whoever holds ``lock``), on the
    thread count ``cores`` allows now (:class:`~tts.threads.SharedCores`; None: the count the
    process started with), the batches counted in ``batches``."""

    def __init__(self, cores: SharedCores | None = None):
        self.lock = asyncio.Lock()
        self.cores = cores
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tts-compute")
        self.batches = {"count": 0, "requests": 0}  # the batches computed so far and the requests they held

    def count_batch(self, requests: int) -> None:
        """A batch of ``requests`` starts computing."""
        self.batches["count"] += 1
        self.batches["requests"] += requests

    def call(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` on the compute thread, waited for (loading, before the service serves)."""
        return self.executor.submit(work, *args).result()

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` on the compute thread, awaited (call it holding ``lock``)."""
        threads = None
        if self.cores is not None:
            self.cores.adjust()
            threads = self.cores.threads

        def on_compute_thread() -> T:
            if threads is not None:  # a thread's count is its own: set it in the thread that computes
                torch.set_num_threads(threads)
            return work(*args)

        return await asyncio.get_running_loop().run_in_executor(self.executor, on_compute_thread)


class SafeJSONResponse(JSONResponse):
    """JSON with ``<``, ``>`` and ``&`` escaped (``\\u003c`` ...), as valid JSON as before but inert as
    HTML, and ``nosniff``: a client's text quoted in an answer can never be run by a browser."""

    def __init__(self, content: Any, status_code: int = 200):
        super().__init__(content, status_code=status_code)

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode("utf-8")


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
    batch_size: int = 64


class RequestError(Exception):
    """A request the service refuses: an HTTP status and one message."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


@dataclass
class Job:
    """One request's text, the future its answer comes in, and whether its request gave it up."""

    text: str
    done: asyncio.Future
    given_up: bool = False
    batch: list["Job"] = field(default_factory=list)
    cancel: threading.Event | None = None

    def give_up(self) -> None:
        """Nobody waits for this job any more; the last job of a running batch to be given up stops it."""
        self.given_up = True
        if self.cancel is not None and all(job.given_up for job in self.batch):
            self.cancel.set()


@dataclass
class Batcher:
    """Collects the jobs of one (voice, vocoder, speaker, settings) that arrive together and
    synthesizes them as one batch once ``compute`` is free (every job that arrived meanwhile
    included); ``finished(n)`` hears when n jobs' work has ended."""

    synthesizer: Synthesizer
    settings: InferenceConfig
    speaker: str | None
    window: float
    finished: Callable[[int], None]
    compute: Compute
    pending: list[Job] = field(default_factory=list)
    flushing: bool = False

    def submit(self, text: str) -> Job:
        job = Job(text, asyncio.get_running_loop().create_future())
        self.pending.append(job)
        if not self.flushing:
            self.flushing = True
            asyncio.get_running_loop().create_task(self._flush())
        return job

    async def _flush(self) -> None:
        await asyncio.sleep(self.window)
        async with self.compute.lock:
            jobs, self.pending, self.flushing = self.pending, [], False
            live = [job for job in jobs if not job.given_up]
            self.finished(len(jobs) - len(live))
            if not live:
                return
            self.compute.count_batch(len(live))
            cancel = threading.Event()
            for job in live:
                job.batch, job.cancel = live, cancel
            try:
                results = await self.compute.run(self.synthesizer, [job.text for job in live], self.settings, cancel,
                                                  self.speaker)
            except Cancelled:
                return  # every request of the batch had gone
            except Exception as exc:  # noqa: BLE001 - every waiting request hears of it
                for job in live:
                    if not job.given_up and not job.done.done():
                        job.done.set_exception(exc)
                return
            finally:
                self.finished(len(live))
        for job, result in zip(live, results):
            if not job.given_up and not job.done.done():
                job.done.set_result(result)


class Service:
    """The voices (name → vocoder name → synthesizer), the limits and the running batches."""

    def __init__(self, voices: dict[str, dict[str, Synthesizer]], limits: Limits, compute: Compute | None = None):
        if not voices:
            raise TTSError("tts serve needs at least one voice")
        self.voices, self.limits = voices, limits
        self.default_voice = next(iter(voices))
        self.batchers: dict[tuple[str, ...], Batcher] = {}
        self.jobs = 0
        self.compute = compute or Compute()

    def describe(self) -> dict[str, Any]:
        return {"status": "ok", "voices": {name: sorted(by_vocoder) for name, by_vocoder in self.voices.items()},
                "default_voice": self.default_voice,
                "default_vocoders": {name: next(iter(by_vocoder)) for name, by_vocoder in self.voices.items()},
                "speakers": {name: next(iter(by_vocoder.values())).speakers for name, by_vocoder in self.voices.items()},
                "precision": {name: next(iter(by_vocoder.values())).precision for name, by_vocoder in self.voices.items()},
                "jobs": self.jobs, "batches": dict(self.compute.batches),
                "limits": {"max_chars": self.limits.max_chars, "max_jobs": self.limits.max_jobs}}

    def parse(self, body: bytes, content_type: str) -> tuple[str, str, str, str | None, InferenceConfig]:
        """The text, voice, vocoder, speaker (None for a voice of one speaker; default: its first)
        and settings a request asks for; a bad one raises RequestError."""
        if "application/json" not in content_type:
            raise RequestError(415, f"send JSON (Content-Type: application/json), not {content_type or 'nothing'}")
        try:
            request = json.loads(body, parse_constant=lambda name: math.nan)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RequestError(400, f"the body is not valid JSON ({exc})") from None
        if not isinstance(request, dict):
            raise RequestError(400, 'the body must be a JSON object like {"text": "Hello."}')
        unknown = sorted(set(request) - {"text", "voice", "vocoder", "speaker", "settings"})
        if unknown:
            raise RequestError(400, f"unknown field(s) {', '.join(unknown)}: send text, voice, vocoder, speaker, "
                                    f"settings")
        text = request.get("text")
        if not isinstance(text, str) or not text.strip():
            raise RequestError(400, 'give the text to say: {"text": "Hello."}')
        if len(text) > self.limits.max_chars:
            raise RequestError(413, f"the text has {len(text)} characters; this service says at most "
                                    f"{self.limits.max_chars} per request")
        for name in ("voice", "vocoder", "speaker"):
            if request.get(name) is not None and not isinstance(request[name], str):
                raise RequestError(400, f"{name} must be a name (a string), not {type(request[name]).__name__}")
        voice = request.get("voice") or self.default_voice
        if voice not in self.voices:
            raise RequestError(404, f"no voice {voice!r} (voices: {', '.join(self.voices)})")
        vocoders = self.voices[voice]
        vocoder = request.get("vocoder") or next(iter(vocoders))
        if vocoder not in vocoders:
            raise RequestError(404, f"voice {voice!r} has no vocoder {vocoder!r} (it has {', '.join(vocoders)})")
        synthesizer = vocoders[vocoder]
        speakers = synthesizer.speakers
        speaker = request.get("speaker") or (speakers[0] if speakers else None)
        if speaker is not None and speaker not in speakers:
            raise RequestError(404 if speakers else 400,
                               f"voice {voice!r} has no speaker {speaker!r} (it has {', '.join(speakers)})" if speakers
                               else f"voice {voice!r} has one speaker: send no speaker")
        changes = request.get("settings") or {}
        if not isinstance(changes, dict) or set(changes) - set(REQUEST_SETTINGS):
            raise RequestError(400, f"settings must be an object that changes some of {', '.join(REQUEST_SETTINGS)}")
        try:
            settings = resolve_inference(synthesizer.settings, changes)
        except TTSError as exc:
            raise RequestError(422, str(exc)) from None
        return text, voice, vocoder, speaker, settings

    def _admit(self, text: str, synthesizer: Synthesizer) -> None:
        """Refuse a request when the service is full (503) or its text has nothing to say (400), before any work."""
        if self.jobs >= self.limits.max_jobs:
            raise RequestError(503, f"busy: {self.jobs} requests are waiting or running; try again shortly")
        try:
            synthesizer.prepare(text)
        except TTSError as exc:
            raise RequestError(400, str(exc)) from None

    def _finished(self, n: int) -> None:
        self.jobs -= n

    def stream(self, text: str, synthesizer: Synthesizer, settings: InferenceConfig,
               speaker: str | None = None) -> StreamingResponse:
        """A WAV streamed chunk by chunk (:class:`~tts.streaming.Streamer`); a client that goes
        away stops the decoding at its next step."""
        self._admit(text, synthesizer)

        async def chunks() -> AsyncIterator[bytes]:
            cancel = threading.Event()
            pieces = Streamer(synthesizer)(text, settings, cancel, speaker)
            self.jobs += 1  # counted while it runs: a stream never started holds no place
            try:
                yield streaming_wav_header(synthesizer.config.audio.sample_rate)
                while (samples := await self._next_chunk(pieces)) is not None:
                    yield pcm16(samples)
            finally:
                cancel.set()
                self.jobs -= 1

        return StreamingResponse(chunks(), media_type="audio/wav")

    async def _next_chunk(self, pieces: Iterator[np.ndarray]) -> np.ndarray | None:
        """A stream's next audio chunk (None at its end), computed when no batch is."""
        async with self.compute.lock:
            return await self.compute.run(next, pieces, None)

    async def synthesize(self, text: str, synthesizer: Synthesizer, settings: InferenceConfig,
                         key: tuple[str, ...], disconnected: Callable[[], Awaitable[bool]],
                         speaker: str | None = None) -> Result:
        """The request's result, or a :class:`RequestError`; its job is given up when the request
        times out or ``disconnected()`` says the client left."""
        self._admit(text, synthesizer)
        self.jobs += 1  # given back by the batcher when the job's work ends
        batcher = self.batchers.setdefault(key, Batcher(synthesizer, settings, speaker, self.limits.batch_window,
                                                        self._finished, self.compute))
        job = batcher.submit(text)
        deadline = time.monotonic() + self.limits.timeout
        try:
            while not job.done.done():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RequestError(504, f"synthesis took over {self.limits.timeout:g} s; send a shorter text")
                await asyncio.wait({job.done}, timeout=min(left, DISCONNECT_POLL))
                if not job.done.done() and await disconnected():
                    raise RequestError(499, "the client left")
            return job.done.result()
        except TTSError as exc:
            raise RequestError(400, str(exc)) from None
        except RequestError:
            job.give_up()
            raise


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
        return SafeJSONResponse(service.describe())

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
            text, voice, vocoder, speaker, settings = service.parse(body, request.headers.get("content-type", ""))
            synthesizer = service.voices[voice][vocoder]
            if request.query_params.get("stream") == "1":
                return service.stream(text, synthesizer, settings, speaker)
            result = await service.synthesize(text, synthesizer, settings,
                                              (voice, vocoder, speaker or "", repr(settings)),
                                              request.is_disconnected, speaker)
        except RequestError as exc:
            return SafeJSONResponse({"error": exc.message}, status_code=exc.status)
        warnings = warnings_of(result)
        if request.query_params.get("format") == "json":
            figure = figure_to_png(result.figure(synthesizer.step, settings.stop_threshold))
            return SafeJSONResponse({"audio": base64.b64encode(wav_bytes(result)).decode(),
                                     "sample_rate": result.sample_rate, "seconds": round(result.duration, 3),
                                     "figure": base64.b64encode(figure).decode(), "warnings": warnings,
                                     "voice": voice, "vocoder": vocoder, "speaker": speaker,
                                     "timings": {k: round(v, 4) for k, v in result.timings.items()}})
        headers = {"X-TTS-Seconds": f"{result.duration:.3f}", "X-TTS-Warnings": str(len(warnings))}
        return Response(wav_bytes(result), media_type="audio/wav", headers=headers)

    return Starlette(routes=[Route("/", page), Route("/health", health),
                             Route("/synthesize", synthesize, methods=["POST"])], middleware=[Middleware(NoSniff)])


class NoSniff:
    """ASGI middleware: every answer (the service's own, Starlette's 404 and 405 too) carries
    ``X-Content-Type-Options: nosniff``, so a browser takes it for what it says it is."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).append("X-Content-Type-Options", "nosniff")
            await send(message)

        await self.app(scope, receive, send_marked)
