"""``tts bench vocoder``: the real-time factor of Griffin-Lim and of each neural vocoder config."""

from __future__ import annotations

from pathlib import Path

import torch

from tts.audio import MelSpectrogram
from tts.benchmarks.inputs import CONFIGS, speech_clip
from tts.config import AudioConfig, GriffinLimConfig, VocoderExperimentConfig, load_config
from tts.evaluation.timing import timed_runs
from tts.vocoders import GriffinLim, Vocoder, build_vocoder


def bench_vocoder(seconds: float = 10.0, threads: int = 2, iters: int = 64, device: str = "cpu",
                  configs: list[str] | None = None, wav_path: str | None = None, repeats: int = 3) -> dict:
    """Real-time factor (seconds of compute per second of audio, batch 1) of Griffin-Lim and of
    each neural vocoder config (``configs/hifigan_v*.yaml`` and ``configs/vocos*.yaml`` by default; untrained weights, which
    run as fast as trained ones) on the mel of a ``seconds``-long speech clip, with ``threads``
    CPU threads or on ``device``; with each generator's parameters and float16 size."""
    torch.set_num_threads(threads)
    configs = configs or [str(p) for pattern in ("hifigan_v*.yaml", "vocos*.yaml") for p in sorted(CONFIGS.glob(pattern))]
    audio = AudioConfig()
    mel = MelSpectrogram(audio)(torch.from_numpy(speech_clip(seconds, audio, wav_path)))[None].to(device)

    @torch.no_grad()
    def real_time_factor(vocoder: Vocoder) -> float:
        return round(min(timed_runs(lambda: vocoder(mel), repeats, device)[0]) / seconds, 4)

    griffin_lim = GriffinLim(audio, GriffinLimConfig(iterations=iters)).to(device)
    result: dict = {"clip_seconds": seconds, "threads": threads, "device": device,
                    "griffin-lim": {"iterations": iters, "rtf": real_time_factor(griffin_lim)}}
    for path in configs:
        config = load_config(path, schema=VocoderExperimentConfig)
        generator = build_vocoder(config.vocoder, config.audio).for_inference().to(device)
        n_params = sum(p.numel() for p in generator.parameters())
        result[Path(path).stem] = {"parameters_m": round(n_params / 1e6, 3), "fp16_mb": round(n_params * 2 / 1e6, 1),
                                   "rtf": real_time_factor(generator)}
    return result
