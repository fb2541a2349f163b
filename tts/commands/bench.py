"""Speed and quality benchmarks that print JSON (``tts bench <name>``); never run in tests."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from tts.audio import STFT, load_wav, spectral_convergence
from tts.config import AudioConfig
from tts.errors import TTSError
from tts.text import SymbolInventory
from tts.vocoders import GriffinLim

BENCH_TEXT = ("The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with "
              "a single step, and the early bird catches the worm while the cat watches from the porch.")


def speech_clip(seconds: float, config: AudioConfig, wav_path: str | None = None) -> np.ndarray:
    """A speech clip of exactly ``seconds``: from ``wav_path``, else spoken by espeak-ng (looped)."""
    if wav_path is None:
        if shutil.which("espeak-ng") is None:
            raise RuntimeError("espeak-ng is not installed (apt-get install -y espeak-ng) and no --wav was given")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "speech.wav"
            subprocess.run(["espeak-ng", "-w", str(path), BENCH_TEXT], check=True, capture_output=True)
            wav, _ = load_wav(path, config.sample_rate)
    else:
        wav, _ = load_wav(wav_path, config.sample_rate)
    n = int(seconds * config.sample_rate)
    return np.tile(wav, int(np.ceil(n / len(wav))))[:n]


def synchronize(device: str) -> None:
    """Wait for queued GPU work, so that a wall-clock timer measures it (nothing on the CPU)."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def peak_memory_mib(device: str) -> float:
    """Peak memory since the last :func:`reset_peak_memory`: allocated GPU memory on CUDA, the
    process's peak resident set on the CPU (which only grows)."""
    if torch.device(device).type == "cuda":
        return round(torch.cuda.max_memory_allocated(device) / 2**20, 1)
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def reset_peak_memory(device: str) -> None:
    """Start a new peak for :func:`peak_memory_mib` (on CUDA; the CPU's cannot be reset)."""
    if torch.device(device).type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


#: Griffin-Lim must beat ``librosa.griffinlim`` (60 iterations) by this factor at no worse spectral convergence
GRIFFIN_LIM_TARGET = 3.0


def bench_griffin_lim(seconds: float = 10.0, iters: int = 64, threads: int = 2, device: str = "cpu",
                      wav_path: str | None = None, repeats: int = 3) -> dict:
    """Our Griffin-Lim against ``librosa.griffinlim`` (60 iterations, CPU) on the same magnitude.

    Both reconstruct a waveform from the true STFT magnitude of a speech clip. Reports ours at
    ``iters`` iterations and at the fewest iterations whose spectral convergence (lower is better)
    is no worse than librosa's, each with its best wall time of ``repeats`` runs and its speed-up.
    """
    import librosa

    torch.set_num_threads(threads)
    config = AudioConfig()
    wav = speech_clip(seconds, config, wav_path)
    stft = STFT(config.n_fft, config.hop_length, config.win_length)
    magnitude = stft(torch.from_numpy(wav)[None]).abs()
    vocoder = GriffinLim(config).to(device)

    def best_time(fn):
        times, out = [], None
        for _ in range(repeats):
            start = time.perf_counter()
            out = fn()
            synchronize(device)
            times.append(time.perf_counter() - start)
        return min(times), out

    def convergence(wav: torch.Tensor) -> float:
        return round(float(spectral_convergence(magnitude, wav.float().cpu(), stft)), 5)

    def ours(n_iter: int) -> torch.Tensor:
        return vocoder.reconstruct(magnitude.to(device), n_iter=n_iter)

    ref_s, ref = best_time(lambda: librosa.griffinlim(
        magnitude[0].numpy(), n_iter=60, hop_length=config.hop_length, win_length=config.win_length,
        n_fft=config.n_fft, random_state=0))
    ref_convergence = convergence(torch.from_numpy(ref)[None])
    low, high = 1, iters  # bisect for the fewest iterations that converge as far as librosa's 60
    if convergence(ours(high)) > ref_convergence:
        low = high = None
    while low is not None and low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if convergence(ours(middle)) <= ref_convergence else (middle + 1, high)

    def entry(n_iter: int) -> dict:
        ours_s, out = best_time(lambda: ours(n_iter))
        return {"iterations": n_iter, "seconds": round(ours_s, 4), "spectral_convergence": convergence(out),
                "speedup": round(ref_s / ours_s, 2)}

    matched = entry(high) if high is not None else None
    return {
        "clip_seconds": seconds,
        "threads": threads,
        "device": device,
        "librosa": {"iterations": 60, "seconds": round(ref_s, 4), "spectral_convergence": ref_convergence},
        "ours": entry(iters),
        "ours_at_librosa_convergence": matched,
        "target_speedup": GRIFFIN_LIM_TARGET,
        "target_met": matched is not None and matched["speedup"] >= GRIFFIN_LIM_TARGET,
    }


def bench_vocoder(seconds: float = 10.0, threads: int = 2, iters: int = 64, device: str = "cpu",
                  configs: list[str] | None = None, wav_path: str | None = None, repeats: int = 3) -> dict:
    """Real-time factor (seconds of compute per second of audio, batch 1) of Griffin-Lim and of
    each neural vocoder config (``configs/hifigan_v*.yaml`` by default; untrained weights, which
    run as fast as trained ones) on the mel of a ``seconds``-long speech clip, with ``threads``
    CPU threads or on ``device``; with each generator's parameters and float16 size."""
    from tts.audio import MelSpectrogram
    from tts.config import VocoderExperimentConfig, load_config
    from tts.vocoders import build_vocoder

    torch.set_num_threads(threads)
    root = Path(__file__).resolve().parents[2] / "configs"
    configs = configs or [str(p) for p in sorted(root.glob("hifigan_v*.yaml"))]
    audio = AudioConfig()
    mel = MelSpectrogram(audio)(torch.from_numpy(speech_clip(seconds, audio, wav_path)))[None].to(device)

    def real_time_factor(vocoder: torch.nn.Module, **options) -> float:
        vocoder(mel, **options)  # warm-up
        times = []
        for _ in range(repeats):
            synchronize(device)
            start = time.perf_counter()
            with torch.no_grad():
                vocoder(mel, **options)
            synchronize(device)
            times.append(time.perf_counter() - start)
        return round(min(times) / seconds, 4)

    result = {"clip_seconds": seconds, "threads": threads, "device": device,
              "griffin-lim": {"iterations": iters, "rtf": real_time_factor(GriffinLim(audio).to(device), n_iter=iters)}}
    for path in configs:
        config = load_config(path, schema=VocoderExperimentConfig)
        generator = build_vocoder(config.vocoder, config.audio).for_inference().to(device)
        n_params = sum(p.numel() for p in generator.parameters())
        result[Path(path).stem] = {"parameters_m": round(n_params / 1e6, 3), "fp16_mb": round(n_params * 2 / 1e6, 1),
                                   "rtf": real_time_factor(generator)}
    return result


#: what ``tts bench model`` asks of our model against the reference, as speed-up factors
MODEL_TARGETS = {"train_mel_frames_per_second": 2.0, "inference_fp32_batch1": 1.5, "inference_int8_batch1": 3.0}
#: on a GPU (issue 23), absolute: ms per decoder step at batch 1 (at most), end-to-end synthesis at
#: batch 64 with Griffin-Lim in times real time (at least); training against the reference's AMP step (factor)
GPU_TARGETS = {"inference_batch1_ms_per_decoder_step": 0.5, "synthesis_batch64_times_real_time": 50.0,
               "train_mel_frames_per_second": 2.0}
#: what ``--precisions`` may name: int8 runs on the CPU only, bf16 is autocast on either device
PRECISIONS = ("fp32", "bf16", "int8")


def check_precisions(precisions: list[str], device: str) -> list[str]:
    """``precisions`` in a fixed order, refused where the device cannot run them."""
    unknown = sorted(set(precisions) - set(PRECISIONS))
    if unknown:
        raise TTSError(f"--precisions {' '.join(unknown)}: choose from {', '.join(PRECISIONS)}")
    if "int8" in precisions and torch.device(device).type != "cpu":
        raise TTSError("--precisions int8 runs on the CPU only; use fp32 and bf16 with --device cuda")
    return [p for p in PRECISIONS if p in precisions]


def reference_batch_lengths(batch_size: int = 8, text: tuple[int, int] = (80, 120), mel: tuple[int, int] = (400, 600),
                            seed: int = 1234) -> tuple[list[int], list[int]]:
    """The timing harness's batch layout (``../shared/bench/nvidia_baseline.py``): text lengths evenly
    spaced from the longest down (sorted), mel lengths evenly spaced, shuffled by a seeded permutation
    so that they do not follow the text lengths."""
    text_lengths = [round(text[1] - i * (text[1] - text[0]) / (batch_size - 1)) for i in range(batch_size)]
    mel_lengths = [round(mel[0] + i * (mel[1] - mel[0]) / (batch_size - 1)) for i in range(batch_size)]
    order = torch.randperm(batch_size, generator=torch.Generator().manual_seed(seed)).tolist()
    return text_lengths, [mel_lengths[i] for i in order]


def run_reference(command: str | None = None, json_path: str | None = None) -> dict | None:
    """The reference's figures: the JSON line a timing harness prints (``command``, run now, in a
    shell, its progress on stderr passing through) or stored earlier (``json_path``)."""
    if json_path is not None:
        return json.loads(Path(json_path).read_text())
    if command is None:
        return None
    done = subprocess.run(command, shell=True, stdout=subprocess.PIPE, text=True)
    lines = [line for line in done.stdout.splitlines() if line.strip().startswith("{")]
    if done.returncode != 0 or not lines:
        raise TTSError(f"the reference command exited {done.returncode} without a JSON line: {command}")
    return json.loads(lines[-1])


def bench_model(threads: int = 2, config_path: str | None = None, train_steps: int = 5, inference_steps: int = 500,
                inference_runs: int = 3, seed: int = 0, reference_command: str | None = None,
                reference_json: str | None = None, device: str = "cpu", precisions: list[str] | None = None,
                batch_sizes: list[int] | None = None, griffin_lim_iters: int = 64) -> dict:
    """Acoustic model speed on this machine, with the inputs of the reference timing harness.

    Training: mel frames/s of one full step (forward, loss, backward, clipping 1.0, Adam) on a
    batch of 8 (text 120…80 tokens, mel 400…600 frames), median of ``train_steps`` after one
    warm-up, in fp32 and, with bf16 among ``precisions``, under bf16 autocast.
    Inference: ms per decoder step, encoder and postnet included, for a 100-token input forced to
    exactly ``inference_steps`` steps, per precision (default fp32 and int8 on the CPU, fp32 and
    bf16 on CUDA) and batch size (default 1 and 16, and 64 on CUDA); median of ``inference_runs``
    after one warm-up. Synthesis: the same decoding followed by Griffin-Lim
    (``griffin_lim_iters``) on the device, as seconds and times real time for the whole batch.
    Peak memory per phase on CUDA, the process's peak resident set on the CPU.
    The model is the config's (default: NVIDIA's sizes, configs/tacotron2.yaml). With a reference
    (the harness's command, run first in the same process tree, or its stored JSON) the result
    holds its figures and the speed-up factors; ``targets_met`` checks :data:`MODEL_TARGETS` on the
    CPU and :data:`GPU_TARGETS` on CUDA.
    """
    import contextlib

    from tts.config import load_config
    from tts.data import Batch
    from tts.models import build_model
    from tts.models.quantize import quantize_int8
    from tts.training.losses import TTSLoss

    on_gpu = torch.device(device).type == "cuda"
    precisions = check_precisions(precisions or (["fp32", "bf16"] if on_gpu else ["fp32", "int8"]), device)
    batch_sizes = sorted(set(batch_sizes or ([1, 16, 64] if on_gpu else [1, 16])))
    reference = run_reference(reference_command, reference_json)
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    config = load_config(config_path or Path(__file__).resolve().parents[2] / "configs" / "tacotron2.yaml")
    n_symbols = len(SymbolInventory())
    model = build_model(config.model, n_symbols, config.audio).to(device)
    r = model.reduction_factor
    g = torch.Generator().manual_seed(seed)
    text_list, mel_list = reference_batch_lengths()
    text_lengths, mel_lengths = torch.tensor(text_list), torch.tensor(mel_list)
    t_mel = max(mel_list) + (-max(mel_list)) % r
    ids = torch.randint(3, n_symbols, (8, max(text_list)), generator=g) * (
        torch.arange(max(text_list))[None] < text_lengths[:, None])
    stop = (torch.arange(t_mel)[None] >= mel_lengths[:, None] - 1).float()
    mels = torch.randn(8, config.audio.n_mels, t_mel, generator=g) * 2.0 - 5.0
    batch = Batch(ids, text_lengths, mels, mel_lengths, stop, [str(i) for i in range(8)]).to(device)
    criterion = TTSLoss(config.loss)
    frames = int(mel_lengths.sum())

    def autocast(precision: str):
        return (torch.autocast(torch.device(device).type, dtype=torch.bfloat16) if precision == "bf16"
                else contextlib.nullcontext())

    def train_entry(precision: str) -> dict:
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-6)
        model.train()
        reset_peak_memory(device)
        times = []
        for _ in range(train_steps + 1):  # the first step warms up allocators
            synchronize(device)
            start = time.perf_counter()
            with autocast(precision):
                loss = criterion(model(batch), batch)["loss"]
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            synchronize(device)
            times.append(time.perf_counter() - start)
        seconds = float(np.median(times[1:]))
        return {"batch": 8, "frames": frames, "seconds_per_step": round(seconds, 3),
                "mel_frames_per_second": round(frames / seconds, 1), "peak_memory_mib": peak_memory_mib(device)}

    train = {precision: train_entry(precision) for precision in precisions if precision != "int8"}
    model.eval()
    text = torch.randint(3, n_symbols, (1, 100), generator=g).to(device)
    forced = {"stop_threshold": 2.0, "max_decoder_steps": inference_steps, "max_frames_per_token": 1e4,
              "stop_after_last_token": False}
    vocoder = GriffinLim(config.audio).to(device)

    @torch.no_grad()
    def decode(m: torch.nn.Module, precision: str, batch_size: int, steps: int = inference_steps):
        with autocast(precision):
            return m.inference(text.repeat(batch_size, 1), **{**forced, "max_decoder_steps": steps})

    @torch.no_grad()
    def inference_entry(m: torch.nn.Module, precision: str, batch_size: int) -> tuple[float, torch.Tensor]:
        """Median seconds of a forced decoding at ``batch_size``, and its mel."""
        decode(m, precision, batch_size, steps=5)
        runs, out = [], None
        for _ in range(inference_runs):
            synchronize(device)
            start = time.perf_counter()
            out = decode(m, precision, batch_size)
            synchronize(device)
            runs.append(time.perf_counter() - start)
        return float(np.median(runs)), out

    @torch.no_grad()
    def vocoder_seconds(mel: torch.Tensor) -> float:
        vocoder(mel.float(), n_iter=griffin_lim_iters)  # warm-up (FFT plans)
        runs = []
        for _ in range(inference_runs):
            synchronize(device)
            start = time.perf_counter()
            vocoder(mel.float(), n_iter=griffin_lim_iters)
            synchronize(device)
            runs.append(time.perf_counter() - start)
        return float(np.median(runs))

    ms_per_step, synthesis, inference_memory = {}, {}, {}
    item_seconds = inference_steps * r * config.audio.hop_length / config.audio.sample_rate
    gl_seconds: dict[int, float] = {}
    for precision in precisions:
        m = quantize_int8(model) if precision == "int8" else model
        reset_peak_memory(device)
        for batch_size in batch_sizes:
            key = f"{precision}_batch{batch_size}"
            seconds, out = inference_entry(m, precision, batch_size)
            ms_per_step[key] = round(seconds / out.alignments.shape[1] * 1e3, 3)
            if batch_size not in gl_seconds:
                gl_seconds[batch_size] = vocoder_seconds(out.mel)
            total = seconds + gl_seconds[batch_size]
            synthesis[key] = {"seconds": round(total, 4), "times_real_time": round(batch_size * item_seconds / total, 2)}
        inference_memory[precision] = peak_memory_mib(device)
    result = {
        "device": device, "threads": threads,
        "parameters_millions": round(sum(p.numel() for p in model.parameters()) / 1e6, 2),
        "model": config.model.name, "reduction_factor": r, "attention": model.attention_name,
        "train": train,
        "inference_ms_per_decoder_step": ms_per_step,
        "inference_decoder_steps": inference_steps,
        "synthesis": {"vocoder": f"griffin-lim, {griffin_lim_iters} iterations", "audio_seconds_per_item":
                      round(item_seconds, 3), "griffin_lim_seconds": {f"batch{b}": round(s, 3) for b, s in
                                                                      gl_seconds.items()}, **synthesis},
        "inference_peak_memory_mib": inference_memory,
    }
    hop_ms = 1000 * config.audio.hop_length / config.audio.sample_rate
    result["inference_realtime_factor_batch1"] = {p: round(ms_per_step[f"{p}_batch1"] / (hop_ms * r), 3)
                                                  for p in precisions if 1 in batch_sizes}
    fastest_train = max(entry["mel_frames_per_second"] for entry in train.values())
    if reference is not None:
        result["reference"] = {key: reference.get(key) for key in ("impl", "revision", "cpu", "device", "threads",
                                                                   "contended")}
        result["reference"]["train_mel_frames_per_second"] = reference["train"]["mel_frames_per_second"]
        reference_ms = reference["inference"]["ms_per_decoder_step_incl_encoder_postnet"]
        result["reference"]["inference_ms_per_decoder_step"] = reference_ms
        speedup = {"train_mel_frames_per_second": fastest_train / reference["train"]["mel_frames_per_second"]}
        speedup.update({f"inference_{p}_batch1": reference_ms / ms_per_step[f"{p}_batch1"]
                        for p in precisions if 1 in batch_sizes})
        result["speedup_over_reference"] = {key: round(value, 2) for key, value in speedup.items()}
        if not on_gpu:
            result["targets_met"] = {key: speedup[key] >= target for key, target in MODEL_TARGETS.items()
                                     if key in speedup}
    if on_gpu:
        met = {}
        if 1 in batch_sizes:
            met["inference_batch1_ms_per_decoder_step"] = (min(ms_per_step[f"{p}_batch1"] for p in precisions)
                                                           <= GPU_TARGETS["inference_batch1_ms_per_decoder_step"])
        if 64 in batch_sizes:
            met["synthesis_batch64_times_real_time"] = (
                max(synthesis[f"{p}_batch64"]["times_real_time"] for p in precisions)
                >= GPU_TARGETS["synthesis_batch64_times_real_time"])
        if reference is not None:
            met["train_mel_frames_per_second"] = (result["speedup_over_reference"]["train_mel_frames_per_second"]
                                                  >= GPU_TARGETS["train_mel_frames_per_second"])
        result["targets_met"] = met
    return result


def bench_attention(kinds: list[str] | None = None, max_steps: int = 400, check_every: int = 25,
                    threads: int = 2, seed: int = 0, guided: bool = True) -> dict:
    """Steps each attention mechanism needs to align on the toy overfit task.

    The same small Tacotron2 (r = 2) is trained on two utterances of the toy tone corpus with
    Adam (2e-3), with or without the guided attention loss; every ``check_every`` steps the
    teacher-forced alignments are measured. "Aligned" = diagonal correlation > 0.9 and focus
    rate > 0.5 on both items.
    """
    from tts.config import config_from_dict
    from tts.data import FeatureDataset, compute_features
    from tts.data.toy import make_toy_corpus
    from tts.metrics import attention_report
    from tts.models import build_model
    from tts.models.attention import available
    from tts.models.layers import decoder_steps
    from tts.training.losses import TTSLoss

    torch.set_num_threads(threads)
    config = config_from_dict({
        "data": {"max_frames_per_batch": 2000, "num_workers": 0},
        "loss": {"guided_attention": {"enabled": guided}},
        "model": {"tacotron2": {
            "embedding_dim": 64, "encoder_conv_layers": 2, "encoder_conv_channels": 64, "encoder_lstm_dim": 64,
            "prenet_dims": [64, 64], "attention_rnn_dim": 128, "decoder_rnn_dim": 128, "reduction_factor": 2,
            "postnet_layers": 3, "postnet_channels": 64, "attention": {"attention_dim": 64}}}})
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = make_toy_corpus(Path(tmp))
        cache = compute_features(root, config, num_workers=1, progress=False)
        dataset = FeatureDataset(cache, root, "train")
        batch = dataset.collate(2)([dataset[0], dataset[2]])
        for kind in kinds or available():
            config.model.tacotron2.attention.kind = kind
            torch.manual_seed(seed)
            model = build_model(config.model, len(SymbolInventory()), config.audio)
            optimizer = torch.optim.Adam(model.parameters(), 2e-3)
            criterion = TTSLoss(config.loss)
            aligned_at, start, last = None, time.perf_counter(), None
            for step in range(1, max_steps + 1):
                output = model(batch)
                terms = criterion(output, batch, step)
                optimizer.zero_grad()
                terms["loss"].backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                if step % check_every == 0 or step == max_steps:
                    reports = [attention_report(output.alignments[i, : decoder_steps(int(batch.mel_lengths[i]), 2),
                                                                  : int(batch.text_lengths[i])].detach().numpy())
                               for i in range(2)]
                    last = reports
                    if all(r.diagonal_correlation > 0.9 and r.focus_rate > 0.5 for r in reports):
                        aligned_at = step
                        break
            results[kind] = {
                "steps_to_alignment": aligned_at, "seconds": round(time.perf_counter() - start, 1),
                "final_focus_rate": round(min(r.focus_rate for r in last), 3),
                "final_diagonal_correlation": round(min(r.diagonal_correlation for r in last), 3)}
    return {"task": "toy overfit, 2 utterances, r=2", "guided_attention": guided, "max_steps": max_steps,
            "threads": threads, "results": results}


def bench_frontend(text_file: str | None = None, limit: int | None = None) -> dict:
    """The frontend on a transcript list (default: LJSpeech's 13,100 normalized transcripts from
    NVIDIA's filelists): milliseconds per utterance on one thread, the words only the neural G2P
    could pronounce, the longest token sequence and every character the inventory dropped."""
    import gzip
    import logging

    from tts.text import Tokenizer
    from tts.text.g2p import get_g2p

    torch.set_num_threads(1)
    path = Path(text_file) if text_file else Path(__file__).resolve().parents[2] / "recipes/ljspeech/nvidia_filelists.tsv.gz"
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        texts = [line.rstrip("\n").split("\t")[-1] for line in fh if line.strip()][:limit]
    tokenizer = Tokenizer()
    g2p = get_g2p()
    tokenizer.encode(texts[0])  # load the tagger and the network outside the timing
    g2p.neural_words.clear()
    warnings: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warnings.append(record.getMessage())

    handler = Collect(logging.WARNING)
    logging.getLogger("tts.text").addHandler(handler)
    try:
        start = time.perf_counter()
        lengths = [len(tokenizer.encode(text)) for text in texts]
        seconds = time.perf_counter() - start
    finally:
        logging.getLogger("tts.text").removeHandler(handler)
    longest = int(np.argmax(lengths))
    return {"utterances": len(texts), "source": str(path.name), "ms_per_utterance": round(1000 * seconds / len(texts), 3),
            "neural_g2p_words": {"distinct": len(g2p.neural_words), "occurrences": sum(g2p.neural_words.values()),
                                 "most_common": g2p.neural_words.most_common(25)},
            "longest_token_sequence": {"tokens": lengths[longest], "text": texts[longest]},
            "warnings": sorted(set(warnings))}
