#!/usr/bin/env python3
"""NVIDIA/tacotron2 timed on a torch device (the GPU), with train.py's mixed precision.

The shared harness (../shared/bench/nvidia_baseline.py) times NVIDIA's model on the CPU with
wall-clock timers. This adapter keeps its model loading, its hparams, its training batch and its
JSON fields, and changes what a GPU needs: the model on ``--device``, the timed regions closed
by ``torch.cuda.synchronize()``, and with ``--amp fp16`` the training step of train.py's
``fp16_run``. train.py does that with apex's ``amp.initialize(opt_level="O2")``; apex is not
installable from the package registries, so this uses PyTorch's replacement, ``torch.autocast``
with a ``GradScaler`` (per-op casting like apex O1; O2 also keeps fp16 weight copies). Inference
runs under the same autocast. ``tts bench model --device cuda --reference-command "python
egs/bench/nvidia_on_device.py --device cuda --amp fp16 ..."`` compares with it side by side.

It runs on the CPU too (``--device cpu``, ``--amp off`` or ``bf16``), on a machine without a GPU:
NVIDIA's ``parse_batch`` moves batches to the GPU whenever one is present.

Prints one JSON line on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import time
from pathlib import Path

AMP_DTYPES = {"off": None, "fp16": "float16", "bf16": "bfloat16"}


def parse_args() -> argparse.Namespace:
    root = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nvidia-src", default=str(root.parent / "shared/reference/nvidia_tacotron2"),
                    help="folder with NVIDIA/tacotron2's files (model.py ...)")
    ap.add_argument("--harness", default=str(root.parent / "shared/bench"),
                    help="folder with nvidia_baseline.py (its loading, batch and hparams are reused)")
    ap.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    ap.add_argument("--amp", choices=sorted(AMP_DTYPES), default="fp16",
                    help="mixed precision of training and inference (fp16: train.py's fp16_run)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--train-steps", type=int, default=5)
    ap.add_argument("--infer-tokens", type=int, default=100)
    ap.add_argument("--infer-steps", type=int, default=500)
    ap.add_argument("--infer-runs", type=int, default=3)
    ap.add_argument("--hparams", default="", help="comma-separated overrides, e.g. n_frames_per_step=2")
    return ap.parse_args()


def main() -> None:
    args = parse_args()
    sys.path.insert(0, args.harness)
    import nvidia_baseline as harness  # noqa: E402  (the shared harness; never imported by the package)
    import torch

    device = torch.device(args.device)
    if device.type == "cpu" and torch.cuda.is_available():
        raise SystemExit("error: NVIDIA's parse_batch moves batches to the GPU whenever one is present; "
                         "use --device cuda on this machine")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit(f"error: --device {args.device}: this machine has no usable CUDA GPU; use --device cpu")
    amp_name = AMP_DTYPES[args.amp]
    amp_dtype = getattr(torch, amp_name) if amp_name else None
    torch.set_num_threads(args.threads)

    def synchronize() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    def autocast():
        return torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None)

    nv = harness.load_nvidia(args.nvidia_src)
    overrides = dict(kv.split("=", 1) for kv in args.hparams.split(",") if kv)
    hp = harness.read_nvidia_hparams(nv.src_dir, overrides)
    torch.manual_seed(hp.seed)
    model = nv.model.Tacotron2(hp).to(device)
    batch = harness.synthetic_batch(hp.n_symbols, hp.n_mel_channels, args.batch_size)
    mel_frames = int(batch[4].sum())
    criterion = nv.loss.Tacotron2Loss()
    optimizer = torch.optim.Adam(model.parameters(), lr=hp.learning_rate, weight_decay=hp.weight_decay)
    scaler = torch.amp.GradScaler(device.type, enabled=amp_dtype == torch.float16)

    def train_step() -> float:
        """train.py's loop body: zero_grad, parse_batch, forward, loss, backward, clipping, Adam."""
        model.zero_grad()
        x, y = model.parse_batch(batch)
        with autocast():
            loss = criterion(model(x), y)
        reduced = loss.item()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), hp.grad_clip_thresh)
        scaler.step(optimizer)
        scaler.update()
        synchronize()
        return reduced

    model.train()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    timed = harness.time_train(train_step, args.train_steps, 1)
    step_s = statistics.median(timed["wall"])
    train_memory = round(torch.cuda.max_memory_allocated(device) / 2**20, 1) if device.type == "cuda" else None

    torch.manual_seed(hp.seed)  # fresh weights, as the harness does, so inference does not depend on training
    model = nv.model.Tacotron2(hp).to(device).eval()
    model.decoder.gate_threshold = float("inf")
    model.decoder.max_decoder_steps = args.infer_steps
    text = torch.randint(1, hp.n_symbols, (1, args.infer_tokens),
                         generator=torch.Generator().manual_seed(harness.SEED + 1)).to(device)

    def infer() -> tuple[int, None]:
        with torch.no_grad(), autocast(), contextlib.redirect_stdout(io.StringIO()):
            _, mel_post, _, _ = model.inference(text)  # prints "Reached max decoder steps"
        synchronize()
        return int(mel_post.shape[-1]), None

    inference = harness.time_inference(infer, args.infer_runs, 1)
    infer_s = statistics.median(inference["wall"])
    audio_s = inference["frames"][0] * harness.HOP_LENGTH / harness.SAMPLE_RATE
    others = [x for x in timed["other_cores"] + inference["other_cores"] if x is not None]
    print(json.dumps({
        "impl": "NVIDIA/tacotron2",
        "revision": harness.source_revision(nv.src_dir),
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "cpu": harness._cpu_name(),
        "threads": torch.get_num_threads(),
        "amp": args.amp,
        "contended": bool(others) and max(others) > 0.15 and device.type == "cpu",
        "train": {"batch_size": args.batch_size, "mel_frames": mel_frames,
                  "step_seconds_median": round(step_s, 4), "step_seconds": [round(t, 4) for t in timed["wall"]],
                  "mel_frames_per_second": round(mel_frames / step_s, 2), "losses": timed["losses"],
                  "peak_memory_mib": train_memory},
        "inference": {"tokens": args.infer_tokens, "decoder_steps": args.infer_steps,
                      "frames": inference["frames"][0], "total_seconds_median": round(infer_s, 4),
                      "ms_per_decoder_step_incl_encoder_postnet": round(1000 * infer_s / args.infer_steps, 3),
                      "x_realtime": round(audio_s / infer_s, 3)},
    }), flush=True)


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"done in {time.perf_counter() - start:.1f} s", file=sys.stderr)
