"""``tts bench model``: an acoustic model's training and inference speed on this machine, with the
inputs of a reference timing harness (NVIDIA/tacotron2's, docs/speed.md), optionally side by
side with it. The harness prints one JSON line: ``train.mel_frames_per_second`` and
``inference.ms_per_decoder_step_incl_encoder_postnet``, with ``impl``, ``cpu``, ``threads``."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from tts.benchmarks.inputs import CONFIGS
from tts.config import ExperimentConfig, GriffinLimConfig, load_config
from tts.data import Batch
from tts.devices import PRECISIONS, cpu_instructions, decoding_in, describe_device
from tts.errors import TTSError
from tts.evaluation.timing import forced_steps, peak_memory_mib, reset_peak_memory, timed_runs
from tts.models import AutoregressiveTTS, build_model
from tts.models.quantize import int8_kernels, quantize_int8
from tts.text import SymbolInventory
from tts.training.losses import TTSLoss
from tts.vocoder_loader import vocoder_for
from tts.vocoders import Vocoder
from tts.vocoders.catalogue import resolve

#: what the model must reach against the reference on the CPU, as speed-up factors
MODEL_TARGETS = {"train_mel_frames_per_second": 2.0, "inference_fp32_batch1": 1.5, "inference_int8_batch1": 3.0}
#: on a GPU, absolute: ms per decoder step at batch 1 (at most), end-to-end synthesis at batch 64 with
#: Griffin-Lim in times real time (at least); training against the reference's AMP step (factor)
GPU_TARGETS = {"inference_batch1_ms_per_decoder_step": 0.5, "synthesis_batch64_times_real_time": 50.0,
               "train_mel_frames_per_second": 2.0}


def check_precisions(precisions: list[str], device: str) -> list[str]:
    """``precisions`` (of :data:`~tts.devices.PRECISIONS`; bf16 is autocast on either device, timed
    even where the CPU emulates it) in a fixed order, refused where the device cannot run them."""
    if "int8" in precisions and torch.device(device).type != "cpu":
        raise TTSError("--precisions int8 runs on the CPU only; use fp32 and bf16 with --device cuda")
    return [p for p in PRECISIONS if p in precisions]


def run_reference(command: str | None = None, json_path: str | None = None) -> dict | None:
    """The reference's figures: the JSON line a timing harness prints (``command``, run now, in a
    shell, its progress on stderr passing through) or stored earlier (``json_path``)."""
    if json_path is not None:
        return dict(json.loads(Path(json_path).read_text()))
    if command is None:
        return None
    done = subprocess.run(command, shell=True, stdout=subprocess.PIPE, text=True)
    lines = [line for line in done.stdout.splitlines() if line.strip().startswith("{")]
    if done.returncode != 0 or not lines:
        raise TTSError(f"the reference command exited {done.returncode} without a JSON line: {command}")
    return dict(json.loads(lines[-1]))


def reference_batch(config: ExperimentConfig, n_symbols: int, r: int, seed: int, batch_size: int = 8,
                    text: tuple[int, int] = (80, 120), mel: tuple[int, int] = (400, 600)) -> Batch:
    """The timing harness's batch: text lengths evenly spaced from the longest down (sorted), mel
    lengths evenly spaced and shuffled by a seeded permutation (so they do not follow the text
    lengths); random ids and mels."""
    text_list = [round(text[1] - i * (text[1] - text[0]) / (batch_size - 1)) for i in range(batch_size)]
    mel_sorted = [round(mel[0] + i * (mel[1] - mel[0]) / (batch_size - 1)) for i in range(batch_size)]
    order = torch.randperm(batch_size, generator=torch.Generator().manual_seed(1234)).tolist()
    text_lengths, mel_lengths = torch.tensor(text_list), torch.tensor([mel_sorted[i] for i in order])
    g = torch.Generator().manual_seed(seed)
    t_mel = max(mel_sorted) + (-max(mel_sorted)) % r
    ids = torch.randint(3, n_symbols, (batch_size, max(text_list)), generator=g) * (
        torch.arange(max(text_list))[None] < text_lengths[:, None])
    stop = (torch.arange(t_mel)[None] >= mel_lengths[:, None] - 1).float()
    mels = torch.randn(batch_size, config.audio.n_mels, t_mel, generator=g) * 2.0 - 5.0
    return Batch(ids, text_lengths, mels, mel_lengths, stop, [str(i) for i in range(batch_size)])


def time_training(model: AutoregressiveTTS, batch: Batch, criterion: TTSLoss, precision: str, steps: int,
                  device: str) -> dict:
    """Mel frames/s of one full step (forward, loss, backward, clipping 1.0, Adam): median of ``steps``."""
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-6)
    model.train()
    reset_peak_memory(device)

    def step() -> None:
        with decoding_in(precision, device):
            loss = criterion(model(batch), batch)["loss"]
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    seconds = float(np.median(timed_runs(step, steps, device)[0]))
    frames = int(batch.mel_lengths.sum())
    return {"batch": batch.ids.shape[0], "frames": frames, "seconds_per_step": round(seconds, 3),
            "mel_frames_per_second": round(frames / seconds, 1), "peak_memory_mib": peak_memory_mib(device)}


@dataclass
class InferenceTiming:
    """Forced decodings of one 100-token text: ms per decoder step and end-to-end synthesis per key
    ``<precision>_batch<B>``; the vocoder's seconds per batch size; peak memory per precision."""

    ms_per_step: dict[str, float]
    synthesis: dict[str, dict[str, float]]
    vocoder_seconds: dict[int, float]
    peak_memory: dict[str, float]


@torch.no_grad()
def time_inference(model: AutoregressiveTTS, text: torch.Tensor, precisions: list[str], batch_sizes: list[int], steps: int,
                   item_seconds: float, vocoder: Vocoder, runs: int, device: str) -> InferenceTiming:
    """Each precision and batch size: median seconds of ``runs`` decodings forced to ``steps`` steps
    (encoder and postnet included), then the vocoder on the batch's mels ``(B, n_mels, T_mel)``."""
    forced = forced_steps(steps)
    timing = InferenceTiming({}, {}, {}, {})
    for precision in precisions:
        m = quantize_int8(model) if precision == "int8" else model
        reset_peak_memory(device)
        for batch_size in batch_sizes:
            def decode(m: AutoregressiveTTS = m, batch_size: int = batch_size) -> Any:
                with decoding_in(precision, device):
                    speakers = torch.zeros(batch_size, dtype=torch.long, device=text.device) if m.speaker_names else None
                    return m.inference(text.repeat(batch_size, 1), settings=forced, speakers=speakers)

            times, out = timed_runs(decode, runs, device)
            seconds, key = float(np.median(times)), f"{precision}_batch{batch_size}"
            timing.ms_per_step[key] = round(seconds / out.alignments.shape[1] * 1e3, 3)
            if batch_size not in timing.vocoder_seconds:
                timing.vocoder_seconds[batch_size] = float(np.median(
                    timed_runs(lambda: vocoder(out.mel.float()), runs, device)[0]))
            total = seconds + timing.vocoder_seconds[batch_size]
            timing.synthesis[key] = {"seconds": round(total, 4),
                                     "times_real_time": round(batch_size * item_seconds / total, 2),
                                     "realtime_factor": round(total / (batch_size * item_seconds), 4)}
        timing.peak_memory[precision] = peak_memory_mib(device)
    return timing


def targets_met(speedup: dict[str, float], timing: InferenceTiming, on_gpu: bool, griffin_lim: bool) -> dict[str, bool]:
    """:data:`MODEL_TARGETS` on the CPU (against the reference), :data:`GPU_TARGETS` on CUDA (the
    synthesis target only where the synthesis was timed with Griffin-Lim, as it is stated)."""
    if not on_gpu:
        return {key: speedup[key] >= target for key, target in MODEL_TARGETS.items() if key in speedup}
    met = {}
    batch1 = [v for k, v in timing.ms_per_step.items() if k.endswith("_batch1")]
    if batch1:
        met["inference_batch1_ms_per_decoder_step"] = min(batch1) <= GPU_TARGETS["inference_batch1_ms_per_decoder_step"]
    batch64 = [v["times_real_time"] for k, v in timing.synthesis.items() if k.endswith("_batch64")]
    if batch64 and griffin_lim:
        met["synthesis_batch64_times_real_time"] = max(batch64) >= GPU_TARGETS["synthesis_batch64_times_real_time"]
    if "train_mel_frames_per_second" in speedup:
        met["train_mel_frames_per_second"] = speedup["train_mel_frames_per_second"] >= GPU_TARGETS[
            "train_mel_frames_per_second"]
    return met


def bench_model(threads: int = 2, config_path: str | None = None, train_steps: int = 5, inference_steps: int = 500,
                inference_runs: int = 3, seed: int = 0, reference: dict | None = None, device: str = "cpu",
                precisions: list[str] | None = None, batch_sizes: list[int] | None = None,
                vocoder: str | None = None, griffin_lim_iters: int = 64, speakers: int = 0) -> dict:
    """Training: :func:`time_training` on the harness's batch of 8 (text 120…80 tokens, mel 400…600
    frames) in fp32 and, with bf16 among ``precisions``, under bf16 autocast. Inference and
    synthesis: :func:`time_inference` (default precisions fp32 and int8 on the CPU, fp32 and bf16 on
    CUDA; batch sizes 1 and 16, and 64 on CUDA), end to end through ``vocoder`` (a ``--vocoder``
    option; default the default vocoder; Griffin-Lim at ``griffin_lim_iters`` iterations). The
    model is the config's (default: NVIDIA's sizes,
    configs/tacotron2.yaml). With the ``reference``'s figures the result holds the speed-up factors
    and ``targets_met``. ``speakers``: a table of that many speakers (the batch's items said by
    each in turn, inference by the first), to measure what conditioning costs."""
    on_gpu = torch.device(device).type == "cuda"
    precisions = check_precisions(precisions or (["fp32", "bf16"] if on_gpu else ["fp32", "int8"]), device)
    batch_sizes = sorted(set(batch_sizes or ([1, 16, 64] if on_gpu else [1, 16])))
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    config = load_config(config_path or CONFIGS / "tacotron2.yaml",
                         [f"model.speakers.names=[{','.join(f's{i}' for i in range(speakers))}]"] if speakers else None)
    choice = resolve(vocoder or "")  # a vocoder that does not suit the config's mels fails before any timing
    griffin_lim = not choice.neural
    voice = vocoder_for(choice, device, config.audio, GriffinLimConfig(iterations=griffin_lim_iters))
    n_symbols = len(SymbolInventory())
    model = build_model(config.model, n_symbols, config.audio).to(device)
    r = model.reduction_factor
    batch = reference_batch(config, n_symbols, r, seed).to(device)
    if model.speaker_names:
        batch.speakers = (torch.arange(batch.ids.shape[0]) % len(model.speaker_names)).to(device)
    train = {p: time_training(model, batch, TTSLoss(config.loss), p, train_steps, device)
             for p in precisions if p != "int8"}
    model.eval()
    text = torch.randint(3, n_symbols, (1, 100), generator=torch.Generator().manual_seed(seed)).to(device)
    item_seconds = inference_steps * r * config.audio.hop_length / config.audio.sample_rate
    timing = time_inference(model, text, precisions, batch_sizes, inference_steps, item_seconds, voice,
                            inference_runs, device)
    hop_ms = 1000 * config.audio.hop_length / config.audio.sample_rate
    result: dict[str, Any] = {
        "device": device, "hardware": describe_device(torch.device(device)), "cpu_instructions": cpu_instructions(),
        "threads": threads, "parameters_millions": round(sum(p.numel() for p in model.parameters()) / 1e6, 2),
        "model": config.model.name, "reduction_factor": r, "attention": model.attention_name,
        "speakers": len(model.speaker_names), "train": train,
        "inference_ms_per_decoder_step": timing.ms_per_step, "inference_decoder_steps": inference_steps,
        "synthesis": {"vocoder": f"griffin-lim, {griffin_lim_iters} iterations" if griffin_lim else choice.name,
                      "audio_seconds_per_item": round(item_seconds, 3),
                      "vocoder_seconds": {f"batch{b}": round(s, 3) for b, s in timing.vocoder_seconds.items()},
                      **timing.synthesis},
        "inference_peak_memory_mib": timing.peak_memory,
        **({"int8_kernels": int8_kernels().describe()} if "int8" in precisions else {}),
        "inference_realtime_factor_batch1": {p: round(timing.ms_per_step[f"{p}_batch1"] / (hop_ms * r), 3)
                                             for p in precisions if 1 in batch_sizes}}
    speedup: dict[str, float] = {}
    if reference is not None:
        reference_ms = reference["inference"]["ms_per_decoder_step_incl_encoder_postnet"]
        result["reference"] = {**{key: reference.get(key) for key in ("impl", "revision", "cpu", "device", "threads",
                                                                      "contended")},
                               "train_mel_frames_per_second": reference["train"]["mel_frames_per_second"],
                               "inference_ms_per_decoder_step": reference_ms}
        fastest_train = max(entry["mel_frames_per_second"] for entry in train.values())
        speedup = {"train_mel_frames_per_second": fastest_train / reference["train"]["mel_frames_per_second"]}
        speedup.update({f"inference_{p}_batch1": reference_ms / timing.ms_per_step[f"{p}_batch1"]
                        for p in precisions if 1 in batch_sizes})
        result["speedup_over_reference"] = {key: round(value, 2) for key, value in speedup.items()}
    if reference is not None or on_gpu:
        result["targets_met"] = targets_met(speedup, timing, on_gpu, griffin_lim)
    return result
