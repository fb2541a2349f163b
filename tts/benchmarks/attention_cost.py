"""``tts bench attention-cost``: what each attention mechanism costs inside one model config —
seconds per training update (the model benchmark's batch of 8, under the config's training
precision) and milliseconds per decoder step at batch 1 (fp32) — measured in one process,
round-robin over the mechanisms, so a machine that gets busier during the run slows every
mechanism alike and the ratios between them stay fair. The attention study's cost columns come
from here (a study run's own seconds per update also count whatever shared its CPU)."""

from __future__ import annotations

import numpy as np
import torch

from tts.benchmarks.inputs import CONFIGS
from tts.benchmarks.model import reference_batch, time_training
from tts.config import load_config
from tts.errors import TTSError
from tts.evaluation.timing import decoder_step_ms
from tts.models import build_model
from tts.models.attention import available
from tts.text import SymbolInventory
from tts.training.losses import TTSLoss


def bench_attention_cost(config_path: str | None = None, kinds: list[str] | None = None, rounds: int = 3, threads: int = 2,
                         train_steps: int = 2, decoder_steps: int = 200, seed: int = 0) -> dict:
    """Per mechanism: the median over ``rounds`` of seconds per training update (each round
    :func:`~tts.benchmarks.model.time_training` of ``train_steps`` steps after a warm-up)
    and of ms per decoder step (:func:`~tts.evaluation.timing.decoder_step_ms`), every
    mechanism once per round; and both relative to the cheapest."""
    torch.set_num_threads(threads)
    config_path = config_path or str(CONFIGS / "attention_study.yaml")
    config = load_config(config_path)
    if config.model.name != "tacotron2":
        raise TTSError(f"--config {config_path} is a {config.model.name} model: attention mechanisms are "
                       f"Tacotron2's (give a Tacotron2 config)")
    kinds = kinds or available()
    precision = "bf16" if config.train.amp == "bf16" else "fp32"
    n_symbols = len(SymbolInventory())
    models = {}
    for kind in kinds:  # each built as the study builds its variant
        torch.manual_seed(seed)
        variant = load_config(config_path, [f"model.tacotron2.attention.kind={kind}"])
        models[kind] = build_model(variant.model, n_symbols, variant.audio)
    r = config.model.tacotron2.reduction_factor
    batch = reference_batch(config, n_symbols, r, seed)
    criterion = TTSLoss(config.loss)
    update: dict[str, list[float]] = {k: [] for k in kinds}
    step_ms: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(rounds):
        for kind, model in models.items():
            update[kind].append(time_training(model, batch, criterion, precision, train_steps, "cpu")["seconds_per_step"])
            model.eval()
            step_ms[kind].append(decoder_step_ms(model, decoder_steps, runs=1))
    seconds = {k: float(np.median(v)) for k, v in update.items()}
    ms = {k: float(np.median(v)) for k, v in step_ms.items()}
    return {"config": config_path, "threads": threads, "rounds": rounds, "training_precision": precision,
            "train_batch": {"items": 8, "mel_frames": int(batch.mel_lengths.sum()), "reduction_factor": r},
            "decoder_steps": decoder_steps,
            "results": {k: {"seconds_per_update": round(seconds[k], 3),
                            "update_relative": round(seconds[k] / min(seconds.values()), 2),
                            "ms_per_decoder_step": round(ms[k], 3),
                            "decoder_step_relative": round(ms[k] / min(ms.values()), 2)} for k in kinds}}
