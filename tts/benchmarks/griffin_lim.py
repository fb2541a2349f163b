"""``tts bench griffin-lim``: our Griffin-Lim against ``librosa.griffinlim`` on the same magnitude."""

from __future__ import annotations

import torch

from tts.audio import STFT, spectral_convergence
from tts.benchmarks.inputs import speech_clip
from tts.config import AudioConfig
from tts.evaluation.timing import timed_runs
from tts.vocoders import GriffinLim

#: Griffin-Lim must beat ``librosa.griffinlim`` (60 iterations) by this factor at no worse spectral convergence
GRIFFIN_LIM_TARGET = 3.0


def bench_griffin_lim(seconds: float = 10.0, iters: int = 64, threads: int = 2, device: str = "cpu",
                      wav_path: str | None = None, repeats: int = 3) -> dict:
    """Both reconstruct a waveform from the true STFT magnitude of a speech clip. Reports ours at
    ``iters`` iterations and at the fewest iterations whose spectral convergence (lower is better)
    is no worse than librosa's (60 iterations, CPU), each with its best wall time of ``repeats``
    runs and its speed-up."""
    import librosa

    torch.set_num_threads(threads)
    config = AudioConfig()
    wav = speech_clip(seconds, config, wav_path)
    stft = STFT(config.n_fft, config.hop_length, config.win_length)
    magnitude = stft(torch.from_numpy(wav)[None]).abs()
    vocoder = GriffinLim(config).to(device)

    def convergence(wav: torch.Tensor) -> float:
        return round(float(spectral_convergence(magnitude, wav.float().cpu(), stft)), 5)

    def ours(n_iter: int) -> torch.Tensor:
        return vocoder.reconstruct(magnitude.to(device), n_iter=n_iter)

    ref_times, ref = timed_runs(lambda: librosa.griffinlim(
        magnitude[0].numpy(), n_iter=60, hop_length=config.hop_length, win_length=config.win_length,
        n_fft=config.n_fft, random_state=0), repeats, "cpu", warm_up=False)
    ref_s, ref_convergence = min(ref_times), convergence(torch.from_numpy(ref)[None])
    low, high = 1, iters  # bisect for the fewest iterations that converge as far as librosa's 60
    matched = convergence(ours(high)) <= ref_convergence
    while matched and low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if convergence(ours(middle)) <= ref_convergence else (middle + 1, high)

    def entry(n_iter: int) -> dict:
        times, out = timed_runs(lambda: ours(n_iter), repeats, device, warm_up=False)
        return {"iterations": n_iter, "seconds": round(min(times), 4), "spectral_convergence": convergence(out),
                "speedup": round(ref_s / min(times), 2)}

    at_reference = entry(high) if matched else None
    return {"clip_seconds": seconds, "threads": threads, "device": device,
            "librosa": {"iterations": 60, "seconds": round(ref_s, 4), "spectral_convergence": ref_convergence},
            "ours": entry(iters), "ours_at_librosa_convergence": at_reference, "target_speedup": GRIFFIN_LIM_TARGET,
            "target_met": at_reference is not None and at_reference["speedup"] >= GRIFFIN_LIM_TARGET}
