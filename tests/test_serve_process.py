"""``tts serve`` as a user meets it: a real process on a loopback port, real HTTP clients under
load, and the page driven in headless Chromium (Debian's chromium and chromium-driver, installed by
``make setup``)."""

import json
import shutil
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from tts.benchmarks.serve import free_port, resident_mb, running_service

FAST = {"max_frames_per_token": 2}


@pytest.fixture(scope="module")
def server(tiny_experiment):
    """``tts serve`` with the tiny voice, as a user starts it: its base URL and process."""
    with running_service(["--voice", f"tiny={tiny_experiment / 'checkpoint_00000004.pt'}", "--vocoder", "griffin-lim",
                          "--max-jobs", "64"]) as started:
        yield started


def post(base: str, text: str) -> tuple[int, bytes]:
    request = urllib.request.Request(f"{base}/synthesize", data=json.dumps({"text": text, "settings": FAST}).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_concurrent_requests_are_all_answered_and_bad_ones_are_4xx(server):
    """21 requests at once, one of them empty: 20 WAVs and one 400; the process keeps serving."""
    base, process = server
    with ThreadPoolExecutor(21) as pool:
        answers = list(pool.map(lambda text: post(base, text), [f"Sentence number {i}." for i in range(20)] + [""]))
    assert [code for code, _ in answers[:20]] == [200] * 20 and all(body[:4] == b"RIFF" for _, body in answers[:20])
    assert answers[20][0] == 400 and b"give the text" in answers[20][1]
    assert urllib.request.urlopen(f"{base}/", timeout=10).read().startswith(b"<!doctype html>")
    assert process.poll() is None


def test_memory_stays_at_its_baseline_under_repeated_load(server):
    """Three rounds of 50 concurrent requests: no error, and the resident memory after the third is
    within 60 MB of what it was after the first (the first round sets the allocator's high-water mark)."""
    base, process = server
    after: list[float] = []
    for round_ in range(3):
        with ThreadPoolExecutor(50) as pool:
            codes = [code for code, _ in pool.map(lambda i: post(base, f"Load test {round_} item {i}."), range(50))]
        assert codes == [200] * 50
        health = json.loads(urllib.request.urlopen(f"{base}/health", timeout=10).read())
        assert health["jobs"] == 0                      # every job released its place
        after.append(resident_mb(process.pid))
    assert after[2] - after[0] < 60, f"resident memory grew from {after[0]:.0f} to {after[2]:.0f} MB"


CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")


@pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None, reason="chromium / chromium-driver not installed "
                    "(make setup installs them)")
def test_the_page_speaks_a_typed_sentence_in_headless_chromium(server, tmp_path):
    """Type a sentence, press Speak: an audio element with a playable WAV and the alignment figure appear."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    base, _ = server
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--autoplay-policy=no-user-gesture-required", f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get(f"{base}/")
        wait = WebDriverWait(driver, 120)
        wait.until(lambda d: d.find_element(By.ID, "voice").get_attribute("value") == "tiny")
        assert driver.find_element(By.ID, "vocoder").get_attribute("value") == "griffin-lim"  # the default
        text = driver.find_element(By.ID, "text")
        text.clear()
        text.send_keys("A cat sat on the mat.")
        driver.find_element(By.ID, "speak").click()
        wait.until(lambda d: "of audio" in d.find_element(By.ID, "status").text or "error" in d.find_element(
            By.ID, "status").text)
        status = driver.find_element(By.ID, "status").text
        assert "of audio in" in status and "real-time factor" in status and "through griffin-lim" in status, status
        audio = driver.find_element(By.ID, "audio")
        assert audio.get_attribute("src").startswith("data:audio/wav;base64,UklGR")  # base64 of "RIFF"
        # the browser decodes it: a finite positive duration once its metadata loaded
        wait.until(lambda d: d.execute_script("return document.getElementById('audio').readyState") >= 1)
        duration = driver.execute_script("return document.getElementById('audio').duration")
        assert 0.1 < duration < 60
        width = driver.execute_script("const f = document.getElementById('figure'); return f.complete && f.naturalWidth")
        assert width and width > 100                    # the alignment figure, decoded as an image
        warnings = [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#warnings li")]
        assert any("step limit" in w for w in warnings)  # a barely trained model never stops: the page says so
        # markup in what a client sends comes back as text: in the warnings, and in an error message
        markup = '<img src=x onerror="window.pwned=1">'
        text.clear()
        text.send_keys(f"A cat {markup} sat.")
        driver.find_element(By.ID, "speak").click()
        wait.until(lambda d: "of audio" in d.find_element(By.ID, "status").text)
        driver.execute_script("const v = document.getElementById('voice'); v.options[0].value = arguments[0];", markup)
        driver.find_element(By.ID, "speak").click()
        wait.until(lambda d: "no voice" in d.find_element(By.ID, "status").text)
        assert markup in driver.find_element(By.ID, "status").text
        assert driver.execute_script("return window.pwned") is None and not driver.find_elements(By.CSS_SELECTOR,
                                                                                                   "#status img")
    finally:
        driver.quit()


def test_a_client_that_leaves_mid_stream_frees_its_job_and_the_service_keeps_serving(server):
    import http.client

    base, process = server
    connection = http.client.HTTPConnection(base.removeprefix("http://"), timeout=120)
    text = " ".join(f"Sentence number {i} goes on for a while." for i in range(12))
    connection.request("POST", "/synthesize?stream=1", body=json.dumps({"text": text, "settings": FAST}),
                       headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    assert response.status == 200 and response.read(44)[:4] == b"RIFF"   # the header, then the first audio
    response.read(2000)
    connection.close()                                                    # gone, mid-stream
    jobs = None
    for _ in range(300):
        jobs = json.loads(urllib.request.urlopen(f"{base}/health", timeout=10).read())["jobs"]
        if jobs == 0:
            break
        time.sleep(0.2)
    assert jobs == 0, "the abandoned stream still holds its job"
    assert post(base, "Still here.")[0] == 200 and process.poll() is None


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far."""
    import os

    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settles(base: str, pid: int, seconds: float = 60.0) -> tuple[int, float]:
    """Wait until /health counts no job; then the CPU seconds the process uses in the next second."""
    deadline, jobs = time.monotonic() + seconds, -1
    while time.monotonic() < deadline:
        jobs = json.loads(urllib.request.urlopen(f"{base}/health", timeout=10).read())["jobs"]
        if jobs == 0:
            break
        time.sleep(0.1)
    time.sleep(0.5)  # the step that was running when the job was given up
    before = cpu_seconds(pid)
    time.sleep(1.0)
    return jobs, cpu_seconds(pid) - before


#: a decode that never stops on its own: about 40,000 steps of the tiny voice
RUNAWAY = {"text": " ".join(["Sentence number one goes on for a while and then some more."] * 4),
           "settings": {"stop_threshold": 1.0, "max_decoder_steps": 100000, "max_frames_per_token": 1000,
                        "split_sentences": False}}


@pytest.fixture(scope="module")
def impatient_server(tiny_experiment):
    """tts serve with a one-second timeout."""
    with running_service(["--voice", f"tiny={tiny_experiment / 'checkpoint_00000004.pt'}", "--vocoder", "griffin-lim",
                          "--timeout", "1"]) as started:
        yield started


def test_a_request_that_times_out_stops_its_decoding(impatient_server):
    """Its 504 comes after the timeout, and the decoding stops then: /health counts no job and the
    process goes idle (before, the decode ran on for its ~40,000 steps while /health said 0)."""
    base, process = impatient_server
    request = urllib.request.Request(f"{base}/synthesize", data=json.dumps(RUNAWAY).encode(),
                                     headers={"Content-Type": "application/json"})
    start = time.monotonic()
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(request, timeout=60)
    assert answer.value.code == 504 and time.monotonic() - start < 10
    jobs, busy = settles(base, process.pid)
    assert jobs == 0 and busy < 0.3, f"{jobs} job(s), {busy:.2f} CPU seconds in one idle second"
    assert post(base, "Still here.")[0] == 200


def test_a_streaming_client_that_leaves_during_a_runaway_decode_stops_it(impatient_server):
    import http.client

    base, process = impatient_server
    connection = http.client.HTTPConnection(base.removeprefix("http://"), timeout=60)
    connection.request("POST", "/synthesize?stream=1", body=json.dumps(RUNAWAY),
                       headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    assert response.status == 200 and response.read(44)[:4] == b"RIFF"
    time.sleep(0.5)
    assert json.loads(urllib.request.urlopen(f"{base}/health", timeout=10).read())["jobs"] == 1
    connection.close()                                    # gone while the decoder runs
    jobs, busy = settles(base, process.pid)
    assert jobs == 0 and busy < 0.3, f"{jobs} job(s), {busy:.2f} CPU seconds in one idle second"


def serve_fails(*options: str) -> tuple[int, list[str]]:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "tts.cli", "serve", *options], capture_output=True, text=True,
                          timeout=300)
    return done.returncode, [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]


def test_start_up_failures_are_one_error_line_before_anything_claims_to_serve(tiny_experiment, tmp_path):
    import socket

    voice = ["--voice", f"tiny={tiny_experiment / 'checkpoint_00000004.pt'}", "--vocoder", "griffin-lim"]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        code, lines = serve_fails(*voice, "--port", str(taken.getsockname()[1]))
    assert code == 2 and len(lines) == 1 and "is in use" in lines[0] and lines[0].startswith("error: "), lines
    code, lines = serve_fails(*voice, "--port", "70000")
    assert code == 2 and len(lines) == 1 and "a port from 1 to 65535" in lines[0], lines
    (tmp_path / "broken.pt").write_bytes(b"not a checkpoint")
    code, lines = serve_fails("--voice", f"x={tmp_path / 'broken.pt'}", "--vocoder", "griffin-lim",
                              "--port", str(free_port()))
    assert code == 2 and len(lines) == 1 and "not a readable checkpoint" in lines[0], lines
    code, lines = serve_fails(*voice, "--host", "no-such-host.invalid", "--port", str(free_port()))
    assert code == 2 and len(lines) == 1 and "--host no-such-host.invalid" in lines[0], lines
