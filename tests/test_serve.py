"""``tts serve``: the HTTP answers, in-process through Starlette's test client (the service as a
real process, under load and in a browser: ``test_serve_process.py``)."""

import io
import json
from typing import Any, cast

import pytest
import soundfile as sf
import torch

pytest.importorskip("httpx")
from starlette.testclient import TestClient  # noqa: E402

from tts import cli  # noqa: E402
from tts.devices import computes_bf16  # noqa: E402
from tts.errors import TTSError  # noqa: E402
from tts.serve import Limits, create_app, load_service  # noqa: E402

FAST = {"max_frames_per_token": 2}
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def client(tiny_experiment):
    service = load_service({"tiny": str(tiny_experiment / "checkpoint_00000004.pt")}, ["griffin-lim"], "cpu",
                           Limits(max_chars=200, max_body_bytes=2000, max_jobs=4, timeout=60))
    with TestClient(create_app(service)) as test_client:
        yield test_client


def test_health_names_the_voices_and_vocoders(client):
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["voices"] == {"tiny": ["griffin-lim"]} and health["jobs"] == 0
    assert health["default_vocoders"] == {"tiny": "griffin-lim"} and health["precision"] == {"tiny": "fp32"}


@pytest.mark.skipif(not computes_bf16(torch.device("cpu")), reason="this CPU has no bfloat16 arithmetic (AVX2 only)")
def test_a_service_decoding_in_bf16_says_so_and_answers(tiny_experiment):
    service = load_service({"tiny": str(tiny_experiment / "checkpoint_00000004.pt")}, ["griffin-lim"], "cpu",
                           Limits(), precision="bf16")
    with TestClient(create_app(service)) as bf16:
        assert bf16.get("/health").json()["precision"] == {"tiny": "bf16"}
        response = bf16.post("/synthesize", json={"text": "A cat sat.", "settings": FAST})
        assert response.status_code == 200 and len(sf.read(io.BytesIO(response.content))[0]) > 1000


def test_an_onnx_export_serves_beside_its_checkpoint(tiny_experiment, tmp_path):
    """A voice's path may be the folder of an export (here int8): it runs on onnxruntime."""
    pytest.importorskip("onnxruntime")
    from tts.onnx import export_checkpoint

    checkpoint = str(tiny_experiment / "checkpoint_00000004.pt")
    export = export_checkpoint(checkpoint, tmp_path / "int8", {"vocoder": "griffin-lim"}, int8=True)
    service = load_service({"torch": checkpoint, "fast": str(export)}, ["griffin-lim"], "cpu", Limits())
    assert type(service.voices["fast"]["griffin-lim"].model).__name__ == "OnnxAcousticModel"
    with TestClient(create_app(service)) as both:
        assert both.get("/health").json()["precision"] == {"torch": "fp32", "fast": "int8"}
        for voice in ("torch", "fast"):
            response = both.post("/synthesize", json={"text": "A cat sat.", "voice": voice, "settings": FAST})
            assert response.status_code == 200 and len(sf.read(io.BytesIO(response.content))[0]) > 1000
        streamed = both.post("/synthesize?stream=1", json={"text": "A cat sat. Dogs run.", "voice": "fast",
                                                           "settings": FAST})
        assert streamed.status_code == 200 and streamed.content[:4] == b"RIFF" and len(streamed.content) > 2000


def test_the_default_vocoder_is_the_first_served_not_the_first_in_the_menu(tiny_experiment):
    """The page preselects ``default_vocoders``: the service's own default, not the alphabetical first."""
    from tts.serve.app import Service

    synthesizer = load_service({"tiny": str(tiny_experiment / "checkpoint_00000004.pt")}, ["griffin-lim"], "cpu",
                               Limits()).voices["tiny"]["griffin-lim"]
    health = Service({"v": {"zeta": synthesizer, "alpha": synthesizer}}, Limits()).describe()
    assert health["voices"] == {"v": ["alpha", "zeta"]} and health["default_vocoders"] == {"v": "zeta"}


def test_synthesize_answers_a_wav_and_json_with_the_figure(client):
    response = client.post("/synthesize", json={"text": "A cat sat.", "settings": FAST})
    assert response.status_code == 200 and response.headers["content-type"] == "audio/wav"
    wav, rate = sf.read(io.BytesIO(response.content))
    assert rate == 22050 and len(wav) > 1000 and float(response.headers["X-TTS-Seconds"]) == pytest.approx(
        len(wav) / rate, abs=1e-3)
    answer = client.post("/synthesize?format=json", json={"text": "A cat sat.", "voice": "tiny",
                                                          "vocoder": "griffin-lim", "settings": FAST}).json()
    import base64

    assert base64.b64decode(answer["figure"])[:8] == b"\x89PNG\r\n\x1a\n"
    assert base64.b64decode(answer["audio"])[:4] == b"RIFF"
    assert answer["warnings"] and "step limit" in answer["warnings"][0]  # a barely trained model never stops


#: bad JSON bodies, one a line: ``body | status | what the error says``
BAD_BODIES = """
{not json | 400 | not valid JSON
["a list"] | 400 | must be a JSON object
{} | 400 | give the text to say
{"text": "   "} | 400 | give the text to say
{"text": "?!?"} | 400 | nothing to speak
{"text": "Hi.", "voice": "nope"} | 404 | no voice 'nope'
{"text": "Hi.", "vocoder": "wavenet"} | 404 | no vocoder 'wavenet'
{"text": "Hi.", "speed": 2} | 400 | unknown field(s) speed
{"text": "Hi.", "settings": {"stop_threshold": NaN}} | 422 | 'inference.stop_threshold' must be >= 0 and <= 1, got nan
{"text": "Hi.", "settings": {"max_decoder_steps": 0}} | 422 | 'inference.max_decoder_steps' must be >= 1
{"text": "Hi.", "settings": {"vocoder": "x"}} | 400 | settings must be an object that changes some of
{"text": "Hi.", "settings": [1]} | 400 | settings must be an object
{"text": "Hi.", "voice": ["a", "b"]} | 400 | voice must be a name (a string), not list
{"text": "Hi.", "vocoder": {"x": 1}} | 400 | vocoder must be a name (a string), not dict
{"text": ["Hi."]} | 400 | give the text to say
{"text": "Hi.", "settings": {"sentence_pause": 1e15}} | 422 | 'inference.sentence_pause' must be >= 0 and <= 10
{"text": "Hi.", "settings": {"max_decoder_steps": 1000000000}} | 422 | must be >= 1 and <= 100000
{"text": "Hi.", "settings": {"attention_window": [1, 1e9]}} | 422 | 'inference.attention_window
{"text": "Hi.", "settings": {"split_sentences": "yes"}} | 422 | 'inference.split_sentences' must be bool
"""


@pytest.mark.parametrize("body, headers, status, message", [
    *[(body.encode(), JSON, int(status), message) for body, status, message in
      (line.split(" | ") for line in BAD_BODIES.strip().splitlines())],
    (json.dumps({"text": "x" * 201}).encode(), JSON, 413, "at most 200 per request"),
    (json.dumps({"text": "Hi. " * 600}).encode(), JSON, 413, "at most 2000"),
    (b"text=Hi", {"Content-Type": "application/x-www-form-urlencoded"}, 415, "send JSON"),
])
def test_bad_requests_get_a_4xx_with_one_message_and_the_service_keeps_serving(client, body, headers, status,
                                                                                message):
    response = client.post("/synthesize", content=body, headers=headers)
    assert response.status_code == status and message in response.json()["error"], response.text
    assert response.headers["x-content-type-options"] == "nosniff"
    assert client.get("/health").json()["jobs"] == 0
    assert client.post("/synthesize", json={"text": "Hi.", "settings": FAST}).status_code == 200


def test_a_checkpoint_that_fails_to_load_is_refused_at_start(tmp_path, capsys):
    (tmp_path / "bad.pt").write_text("not a checkpoint")
    with pytest.raises(TTSError, match="not a readable checkpoint"):
        load_service({"bad": str(tmp_path / "bad.pt")}, ["griffin-lim"], "cpu", Limits())
    assert cli.main(["serve", "--voice", "nameonly"]) == 2
    assert "error: --voice 'nameonly': give NAME=CHECKPOINT" in capsys.readouterr().err


def test_a_streamed_request_is_a_wav_that_grows_chunk_by_chunk(client):
    import numpy as np

    with client.stream("POST", "/synthesize?stream=1", json={"text": "A cat sat. Dogs run.", "settings": FAST}) as r:
        assert r.status_code == 200 and r.headers["content-type"] == "audio/wav"
        parts = list(r.iter_bytes())
    body = b"".join(parts)
    assert body[:4] == b"RIFF" and body[36:40] == b"data" and len(body) > 44 + 1000
    samples = np.frombuffer(body[44:], dtype="<i2")
    whole, rate = sf.read(io.BytesIO(client.post("/synthesize", json={"text": "A cat sat. Dogs run.",
                                                                      "settings": FAST}).content), dtype="int16")
    # the same audio up to float rounding of a batch of two sentences against one (Griffin-Lim magnifies it a little)
    assert len(samples) == len(whole) and int(np.abs(samples.astype(int) - whole.astype(int)).max()) < 0.02 * 32767
    assert client.post("/synthesize?stream=1", json={"text": "?!"}).status_code == 400
    assert client.get("/health").json()["jobs"] == 0


@pytest.mark.parametrize("body, headers", [
    ({"text": "Hi.", "voice": "<script>alert(1)</script>"}, {}),
    ({"text": "Hi.", "vocoder": "<img src=x onerror=alert(1)>"}, {}),
    ({"text": "Hi.", "<b>": 1}, {}),
    ({"text": "Hi.", "settings": {"stop_threshold": "<script>"}}, {}),
])
def test_no_answer_echoes_client_markup_and_every_answer_says_nosniff(client, body, headers):
    """A client's text quoted in an error is escaped (\\u003c, valid JSON that no browser runs)."""
    response = client.post("/synthesize", json=body, headers=headers)
    assert 400 <= response.status_code < 500
    assert b"<" not in response.content and b">" not in response.content
    assert "<" in response.json()["error"]  # the JSON still says what was sent
    assert response.headers["x-content-type-options"] == "nosniff"
    for path in ("/", "/health", "/nowhere"):
        assert client.get(path).headers["x-content-type-options"] == "nosniff"
    shown = client.post("/synthesize", content=b"<script>", headers={"Content-Type": "text/html<script>"})
    assert shown.status_code == 415 and b"<script>" not in shown.content


def test_one_batch_computes_at_a_time_and_latecomers_join_the_next():
    """Two voices' batches never run at once (their CPU thread teams would wait for each other),
    and the requests that arrive while a batch runs are synthesized together after it."""
    import asyncio
    import threading
    import time

    from tts.serve.app import Batcher, Compute

    running, overlaps, batches = [0], [], []
    guard = threading.Lock()

    def synthesizer(texts, settings, cancel, speaker):
        with guard:
            running[0] += 1
            overlaps.append(running[0])
        time.sleep(0.15)
        with guard:
            running[0] -= 1
        batches.append(list(texts))
        return [text.upper() for text in texts]

    async def scenario() -> list[str]:
        compute = Compute()
        fake: Any = synthesizer  # a Synthesizer's call signature, no model behind it
        first, second = (Batcher(fake, cast(Any, None), None, 0.01, lambda n: None, compute) for _ in range(2))
        jobs = [first.submit("a")]
        await asyncio.sleep(0.05)  # "a" is computing
        jobs += [second.submit("b")]
        await asyncio.sleep(0.02)
        jobs += [second.submit("c"), first.submit("d")]
        return [await job.done for job in jobs]

    assert asyncio.run(scenario()) == ["A", "B", "C", "D"]
    assert max(overlaps) == 1
    assert batches[0] == ["a"] and sorted(map(tuple, batches[1:])) == [("b", "c"), ("d",)]


def test_health_counts_the_batches_and_the_requests_they_held(client):
    before = client.get("/health").json()["batches"]
    assert client.post("/synthesize", json={"text": "Hi.", "settings": FAST}).status_code == 200
    after = client.get("/health").json()["batches"]
    assert after == {"count": before["count"] + 1, "requests": before["requests"] + 1}


def test_the_service_decodes_its_batch_size_of_sentences_together(tiny_experiment):
    path = str(tiny_experiment / "checkpoint_00000004.pt")
    service = load_service({"tiny": path}, ["griffin-lim"], "cpu", Limits())
    assert service.voices["tiny"]["griffin-lim"].settings.batch_size == 64
    service = load_service({"tiny": path}, ["griffin-lim"], "cpu", Limits(batch_size=5))
    assert service.voices["tiny"]["griffin-lim"].settings.batch_size == 5
    with pytest.raises(TTSError, match="'inference.batch_size' must be >= 1 and <= 1024, got 5000"):
        load_service({"tiny": path}, ["griffin-lim"], "cpu", Limits(batch_size=5000))


def test_each_batch_computes_on_the_threads_the_idle_cores_allow_now():
    """Where the count follows the idle cores, each batch's worker thread gets the count of the
    latest look (two looks: 2 threads, then 1)."""
    import asyncio

    from tts.serve.app import Compute

    class Cores:  # a SharedCores whose looks say: both cores idle, then one taken
        counts = iter([2, 1])
        threads = 0

        def adjust(self) -> None:
            self.threads = next(self.counts)

    compute = Compute(cast(Any, Cores()))
    before = torch.get_num_threads()

    async def scenario() -> list[int]:
        return [await compute.run(torch.get_num_threads) for _ in range(2)]

    try:
        assert asyncio.run(scenario()) == [2, 1]
    finally:
        torch.set_num_threads(before)


def test_the_models_load_and_every_batch_computes_on_one_thread(tiny_experiment, monkeypatch):
    """PyTorch's CPU threads belong to the thread that starts them: the service loads and computes on
    one thread of its own, never the event loop's, so no second team of threads shares the cores."""
    import asyncio
    import threading

    from tts.serve import loading

    loaded_on: list[int] = []
    load = loading.checkpoint.load

    def recording_load(*args: Any, **kwargs: Any) -> Any:
        loaded_on.append(threading.get_ident())
        return load(*args, **kwargs)

    monkeypatch.setattr(loading.checkpoint, "load", recording_load)
    service = load_service({"tiny": str(tiny_experiment / "checkpoint_00000004.pt")}, ["griffin-lim"], "cpu",
                           Limits())

    async def scenario() -> list[int]:
        return [await service.compute.run(threading.get_ident) for _ in range(3)]

    computed_on = asyncio.run(scenario())
    assert computed_on == loaded_on * 3 and loaded_on[0] != threading.get_ident()
