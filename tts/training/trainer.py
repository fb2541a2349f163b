"""The training loop: AMP, DDP, gradient clipping and accumulation, gradual r, validation,
atomic checkpoints, exact resume, and guards against what a week-long run meets.

Exact resume: a checkpoint holds the optimizer step, the epoch, how many batches of the epoch
were consumed and every RNG state; the batch sampler is a pure function of (seed, epoch) and the
data loader draws from its own generator, so a resumed run replays the same batches with the
same dropout masks as an uninterrupted one.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from tts import checkpoint
from tts.config import ExperimentConfig, save_config
from tts.data import FeatureDataset, batch_loader, feature_dir, read_manifest, require_corpus
from tts.errors import Interrupted, TTSError
from tts.models import build_model
from tts.text import SymbolInventory, Tokenizer
from tts.training.experiment import ExperimentFolder, rng_state, set_rng_state
from tts.training.losses import TTSLoss
from tts.training.optim import build_optimizer, build_scheduler
from tts.training.scheduled_sampling import mix_in_predictions, sampling_probability
from tts.training.validation import ValidationRenderer, teacher_forced_metrics
from tts.vocoders import GriffinLim

log = logging.getLogger("tts.train")


@dataclass
class TrainState:
    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0
    best_val_loss: float = math.inf
    nan_streak: int = 0
    nan_total: int = 0
    train_seconds: float = 0.0  # wall time spent in this run's training loops, across resumes


def _distributed_env() -> tuple[int, int, int]:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    return int(os.environ.get("RANK", "0")), world, int(os.environ.get("LOCAL_RANK", "0"))


class Trainer:
    """``Trainer(config, data_root, exp_dir).fit()``; ``resume=True`` continues from the latest checkpoint."""

    def __init__(self, config: ExperimentConfig, data_root: str | Path, exp_dir: str | Path,
                 resume: bool | str = False, device: str | None = None, progress: bool = True):
        self.config, self.exp_dir, self.progress = config, Path(exp_dir), progress
        self.rank, self.world_size, local_rank = _distributed_env()
        self.device = torch.device(device or (f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu"))
        if self.world_size > 1 and not dist.is_initialized():
            dist.init_process_group("nccl" if self.device.type == "cuda" else "gloo")
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
        self.is_main = self.rank == 0
        self.data_root = require_corpus(data_root)
        self.cache = feature_dir(self.data_root, config.audio, config.text)
        read_manifest(self.cache)  # fails with a clear line when features are missing
        self.inventory = SymbolInventory.for_text(config.text)
        self.tokenizer = Tokenizer.for_config(config.text, self.inventory)
        self._check_r_schedule()
        self.train_set = FeatureDataset(self.cache, self.data_root, "train")
        self.val_set = FeatureDataset(self.cache, self.data_root, "val")

        torch.manual_seed(config.train.seed)
        self.model = build_model(config.model, len(self.inventory), config.audio).to(self.device)
        self.criterion = TTSLoss(config.loss)
        self.optimizer = build_optimizer(self.model.parameters(), config.optim)
        self.scheduler = build_scheduler(self.optimizer, config.optim)
        self.amp_dtype = self._amp_dtype()
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.amp_dtype == torch.float16)
        self.folder = ExperimentFolder(self.exp_dir, config.train.keep_last)
        self.state = TrainState()
        for option, path in (("--resume-from", resume if isinstance(resume, str) else ""),
                             ("train.warm_start", "" if resume else config.train.warm_start)):
            if path and not Path(path).is_file():
                raise TTSError(f"{option} {path}: no such checkpoint file")
        if self.is_main:
            self.folder.acquire()
        self.writer = self.renderer = self._log_handler = None
        try:
            self._start(resume)
        except BaseException:
            self._close(discard=True)
            raise
        self._clock = (time.perf_counter(), self.state.train_seconds)

    def _start(self, resume: bool | str) -> None:
        """Fresh run, resume or warm start in the (locked) folder; then logs, config and TensorBoard."""
        existing = self.folder.latest()
        if not resume and existing is not None:
            raise TTSError(f"{self.exp_dir} already holds checkpoints of another run (up to "
                           f"{existing.name}); continue it with --resume or train into a new --out")
        if resume:
            self._resume(None if resume is True else Path(resume))
        else:
            if self.is_main:
                self.folder.truncate_log(0)  # lines of an earlier attempt that never reached a checkpoint
            if self.config.train.warm_start:
                self._warm_start(Path(self.config.train.warm_start))
        self.ddp_model = (DistributedDataParallel(self.model, device_ids=[self.device.index] if self.device.type == "cuda" else None)
                          if self.world_size > 1 else self.model)
        if self.is_main:
            self._prepare_exp_dir()

    def _close(self, discard: bool = False) -> None:
        """Let go of the folder: TensorBoard writer, train.log handler, lock (``discard``: and the
        folder itself if this run created it and wrote nothing into it)."""
        if self.writer is not None:
            self.writer.close()
        if self._log_handler is not None:
            log.removeHandler(self._log_handler)
            self._log_handler.close()
        self.folder.release(discard)

    # ------------------------------------------------------------------ set-up helpers
    def _check_r_schedule(self) -> None:
        section = self.config.model.active
        max_r = max(section.reduction_factor, section.max_reduction_factor)
        for stage in self.config.train.r_schedule:
            if not 1 <= stage.r <= max_r:
                raise TTSError(f"train.r_schedule uses r={stage.r}; set model.{self.config.model.name}"
                               f".max_reduction_factor >= {stage.r}")

    def r_at(self, step: int) -> tuple[int, int]:
        """Reduction factor and frame budget in force at an optimizer step."""
        r, frames = self.config.model.active.reduction_factor, self.config.data.max_frames_per_batch
        for stage in sorted(self.config.train.r_schedule, key=lambda s: s.step):
            if stage.step <= step:
                r, frames = stage.r, stage.max_frames_per_batch
        return r, frames

    def _amp_dtype(self) -> torch.dtype | None:
        choice = self.config.train.amp
        if choice == "off" or (choice == "auto" and self.device.type != "cuda"):
            return None
        if choice == "fp16" and self.device.type != "cuda":
            raise TTSError("train.amp=fp16 needs a GPU; use bf16 or off on CPU")
        if choice == "auto":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.bfloat16 if choice == "bf16" else torch.float16

    def _prepare_exp_dir(self) -> None:
        from torch.utils.tensorboard import SummaryWriter

        save_config(self.config, self.exp_dir / "config.yaml")
        self._log_handler = handler = logging.FileHandler(self.exp_dir / "train.log")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        self.writer = SummaryWriter(str(self.exp_dir / "tensorboard"), purge_step=self.state.step + 1)
        self.renderer = ValidationRenderer(self.exp_dir, self.tokenizer, GriffinLim(self.config.audio).to(self.device),
                                           self.writer)
        n_params = sum(p.numel() for p in self.model.parameters())
        log.info("model %s (%.2fM parameters, attention %s) on %s, world size %d; %d train / %d val utterances",
                 self.config.model.name, n_params / 1e6, self.model.attention_name, self.device,
                 self.world_size, len(self.train_set), len(self.val_set))

    def _tick(self) -> None:
        """Bring ``state.train_seconds`` up to now."""
        started, before = self._clock
        self.state.train_seconds = before + time.perf_counter() - started

    def _save(self, path: Path, with_training_state: bool = True) -> Path:
        self._tick()
        training = None
        if with_training_state:
            training = {"optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict(),
                        "scaler": self.scaler.state_dict(), "state": vars(self.state).copy(), "rng": rng_state()}
        try:
            return checkpoint.save(path, self.model, self.config, self.inventory, self.state.step, training)
        except OSError as exc:
            last = self.folder.latest()
            raise TTSError(f"cannot write {path} ({exc.strerror or exc}); the last good checkpoint is "
                           f"{last if last else 'none'}: free space or fix the folder, then --resume") from None

    def _save_step(self) -> Path:
        path = self._save(self.folder.path(self.state.step))
        self.folder.prune()
        return path

    def _check_compatible(self, contents: checkpoint.CheckpointContents) -> None:
        if contents.inventory.symbols != self.inventory.symbols:
            raise TTSError(f"{contents.path} was trained with a different symbol inventory; use train.warm_start "
                           f"with train.ignore_layers=[encoder.embedding] instead of resuming")
        theirs, ours = contents.config.model, self.config.model
        if theirs.name == ours.name:  # r may follow a schedule; the writer records it with the frame head's size
            a, b = theirs.active, ours.active
            if max(a.reduction_factor, a.max_reduction_factor) == max(b.reduction_factor, b.max_reduction_factor):
                a.reduction_factor, a.max_reduction_factor = b.reduction_factor, b.max_reduction_factor
        if theirs != ours:
            raise TTSError(f"{contents.path} holds a different model ({theirs.name}, other sizes or attention) "
                           f"than this config; resume with the config saved next to it")

    def _resume(self, path: Path | None) -> None:
        path = path or self.folder.latest()
        if path is None:
            raise TTSError(f"--resume: no checkpoint_*.pt in {self.exp_dir}")
        contents = checkpoint.read(path, self.device)
        self._check_compatible(contents)
        if contents.training is None:
            raise TTSError(f"{path} has no training state (a stripped release checkpoint?); use train.warm_start")
        self.model.load_state_dict(contents.weights)
        training = contents.training
        self.optimizer.load_state_dict(training["optimizer"])
        self.scheduler.load_state_dict(training["scheduler"])
        self.scaler.load_state_dict(training["scaler"])
        self.state = TrainState(**training["state"])
        set_rng_state(training["rng"])
        if self.is_main:
            self.folder.truncate_log(self.state.step)
        log.info("resumed from %s at step %d (epoch %d, batch %d)", path, self.state.step, self.state.epoch,
                 self.state.batch_in_epoch)

    def _warm_start(self, path: Path) -> None:
        contents = checkpoint.read(path, self.device)
        if contents.config.model.name != self.config.model.name:
            raise TTSError(f"warm start: {path} holds a {contents.config.model.name} model, this config trains "
                           f"{self.config.model.name}; warm start from a checkpoint of the same model")
        ignore = tuple(self.config.train.ignore_layers)
        own = self.model.state_dict()
        kept = {}
        for name, tensor in contents.weights.items():
            if ignore and name.startswith(ignore):
                continue
            if name in own and own[name].shape != tensor.shape:
                raise TTSError(f"warm start: {name} has shape {tuple(tensor.shape)} in {path} but "
                               f"{tuple(own[name].shape)} here; add it to train.ignore_layers")
            if name in own:
                kept[name] = tensor
        self.model.load_state_dict(kept, strict=False)
        log.info("warm start from %s: %d tensors loaded, %d left at their initial values", path, len(kept),
                 len(own) - len(kept))

    # ------------------------------------------------------------------ training
    def fit(self) -> TrainState:
        """Train until ``train.max_steps``. Ctrl-C or SIGTERM (a scheduler's kill, ``kill PID``)
        ends the step in flight, saves a checkpoint and raises :class:`Interrupted`."""
        previous = self._defer_signals()
        try:
            self._train()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            self._close()
        return self.state

    def _defer_signals(self) -> dict[int, Any]:
        """SIGINT / SIGTERM set a flag the loop checks between steps; a second one interrupts at once.
        (SIGINT is caught too, since a shell's background job starts with it ignored.)"""
        self._signal: int | None = None

        def handler(signum: int, frame: Any) -> None:
            if self._signal is not None:
                raise KeyboardInterrupt(signal.Signals(signum).name)
            self._signal = signum
            log.warning("%s: stopping after the current step (again to stop at once)", signal.Signals(signum).name)

        if threading.current_thread() is not threading.main_thread():
            return {}
        return {signum: signal.signal(signum, handler) for signum in (signal.SIGINT, signal.SIGTERM)}

    def _stop_if_signalled(self) -> None:
        """At a step boundary: after a signal, save this step's checkpoint and raise :class:`Interrupted`."""
        if self._signal is None:
            return
        path = self.folder.path(self.state.step)
        if self.is_main:
            path = path if path.is_file() else self._save_step()
            log.warning("interrupted at step %d: saved %s; continue with --resume", self.state.step, path)
        raise Interrupted(self._signal, str(path))

    def _train(self) -> None:
        from tqdm import tqdm

        cfg = self.config.train
        bar = tqdm(total=cfg.max_steps, initial=self.state.step, desc="train", unit="step",
                   disable=not (self.progress and self.is_main), dynamic_ncols=True)
        window_frames, window_start = 0, time.perf_counter()
        self._clock = (time.perf_counter(), self.state.train_seconds)
        while self.state.step < cfg.max_steps:
            r, max_frames = self.r_at(self.state.step)
            self.model.set_reduction_factor(r)
            loader = batch_loader(self.train_set, self.config.data, r, max_frames, cfg.seed, shuffle=True,
                                  rank=self.rank, world_size=self.world_size)
            loader.batch_sampler.set_epoch(self.state.epoch, skip=self.state.batch_in_epoch)
            if self.state.batch_in_epoch == 0 and len(loader.batch_sampler) < cfg.grad_accum:
                raise TTSError(f"an epoch holds {len(loader.batch_sampler)} batches per process, fewer than "
                               f"train.grad_accum={cfg.grad_accum}: lower data.max_frames_per_batch or use fewer processes")
            accumulated, epoch_done = 0, True
            self.ddp_model.train()
            for batch in loader:
                batch = batch.to(self.device)
                self.state.batch_in_epoch += 1
                if accumulated == 0:  # a skipped step restores these
                    self._statistics_before_step = [b.detach().clone() for b in self._norm_statistics()]
                terms = self._forward_backward(batch)
                accumulated += 1
                window_frames += batch.n_frames * self.world_size
                if accumulated < cfg.grad_accum:
                    continue
                accumulated = 0
                grad_norm = self._optimizer_step(terms)
                if grad_norm is None:
                    self._stop_if_signalled()
                    continue
                bar.update(1)
                step = self.state.step
                if step % cfg.log_every == 0 or step == 1:
                    elapsed = time.perf_counter() - window_start
                    fps = window_frames / max(elapsed, 1e-9)
                    self._log_train(terms, grad_norm, fps, r)
                    bar.set_postfix({k: f"{float(v):.3f}" for k, v in terms.items() if k != "guided_attention"}
                                    | {"frames/s": f"{fps:.0f}"})
                    window_frames, window_start = 0, time.perf_counter()
                if step % cfg.validate_every == 0 or step == cfg.max_steps:
                    self.validate()
                    self.ddp_model.train()
                if self.is_main and (step % cfg.checkpoint_every == 0 or step == cfg.max_steps):
                    self._save_step()
                self._stop_if_signalled()
                if step >= cfg.max_steps:
                    epoch_done = False
                    break
                if self.r_at(step)[0] != r:  # gradual training: new r → a new epoch with new batches
                    break
            if epoch_done:
                self.state.epoch += 1
                self.state.batch_in_epoch = 0
        bar.close()
        if self.is_main:
            log.info("finished at step %d (%d non-finite steps skipped)", self.state.step, self.state.nan_total)

    def _autocast(self):
        return torch.autocast(self.device.type, dtype=self.amp_dtype or torch.float32, enabled=self.amp_dtype is not None)

    def _norm_statistics(self) -> list[torch.Tensor]:
        """The BatchNorm running statistics: the state a forward pass changes outside the optimizer."""
        return [buffer for module in self.model.modules() if isinstance(module, torch.nn.modules.batchnorm._BatchNorm)
                for buffer in module.buffers()]

    def _forward_backward(self, batch) -> dict[str, torch.Tensor]:
        """Forward and backward of one (micro-)batch. Items with non-finite features are left out
        (with a warning naming them); when none is left (on any process), nothing runs and the
        terms come back NaN, so the step is skipped."""
        finite = torch.isfinite(batch.mels).flatten(1).all(dim=1)
        if not bool(finite.all()):
            bad = [uid for uid, ok in zip(batch.utterance_ids, finite.tolist()) if not ok]
            log.warning("step %d: non-finite features in %s; left out of the batch (recompute their features)",
                        self.state.step + 1, ", ".join(bad))
            batch = batch.subset(finite)
        runnable = torch.tensor(float(len(batch.utterance_ids) > 0), device=self.device)
        if self.world_size > 1:
            dist.all_reduce(runnable, op=dist.ReduceOp.MIN)
        if runnable.item() < 1:
            nan = torch.tensor(float("nan"), device=self.device)
            return {"features": nan, "loss": nan}
        probability = sampling_probability(self.config.train.scheduled_sampling, self.state.step + 1)
        self.model.schedule(self.state.step)
        with self._autocast():
            inputs = mix_in_predictions(self.model, batch, probability) if probability > 0 else batch
            output = self.ddp_model(inputs)
            terms = self.criterion(output, batch, self.state.step)
        finite = torch.isfinite(terms["loss"]).float()
        if self.world_size > 1:
            dist.all_reduce(finite, op=dist.ReduceOp.MIN)
        if finite.item() < 1:
            terms["loss"] = terms["loss"].detach() * float("nan")
            return {k: v.detach() for k, v in terms.items()}
        self.scaler.scale(terms["loss"] / self.config.train.grad_accum).backward()
        return {k: v.detach() for k, v in terms.items()}

    def _optimizer_step(self, terms: dict[str, torch.Tensor]) -> float | None:
        """Clip and step; returns the grad norm, or None when the step was skipped as non-finite."""
        self.scaler.unscale_(self.optimizer)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.train.grad_clip)
        if not (torch.isfinite(terms["loss"]) and torch.isfinite(grad_norm)):
            self.optimizer.zero_grad(set_to_none=True)
            for buffer, saved in zip(self._norm_statistics(), self._statistics_before_step):
                buffer.copy_(saved)
            self.scaler.update()
            self.state.nan_streak += 1
            self.state.nan_total += 1
            bad = [k for k, v in terms.items() if not torch.isfinite(v)] or ["gradient norm"]
            log.warning("step %d: non-finite %s; update skipped (%d in a row)", self.state.step + 1,
                        ", ".join(bad), self.state.nan_streak)
            if self.state.nan_streak >= self.config.train.max_nan_steps:
                raise TTSError(f"loss was NaN/inf for {self.state.nan_streak} steps in a row (at step "
                               f"{self.state.step + 1}); lower optim.lr or check the features")
            return None
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
        self.scheduler.step()
        self.state.step += 1
        self.state.nan_streak = 0
        return float(grad_norm)

    def _log_train(self, terms: dict[str, torch.Tensor], grad_norm: float, fps: float, r: int) -> None:
        if not self.is_main:
            return
        step = self.state.step
        record = {"step": step, **{k: round(float(v), 6) for k, v in terms.items()}, "grad_norm": round(grad_norm, 4),
                  "lr": self.scheduler.get_last_lr()[0], "frames_per_s": round(fps, 1), "r": r,
                  "sampling_probability": round(sampling_probability(self.config.train.scheduled_sampling, step), 4),
                  "nan_steps": self.state.nan_total}
        self.folder.log(record)
        for key, value in record.items():
            if key != "step":
                self.writer.add_scalar(f"train/{key}", value, step)
        for name, value in self.model.diagnostics().items():
            self.writer.add_scalar(name, value, step)

    # ------------------------------------------------------------------ validation
    @torch.no_grad()
    def validate(self) -> float:
        """Teacher-forced validation (:func:`teacher_forced_metrics`: loss terms, attention focus and
        diagonal correlation, text_reliance) into metrics.jsonl and TensorBoard; on rank 0 also
        ``best.pt`` and the :class:`ValidationRenderer`'s plots and audio."""
        self.ddp_model.eval()
        r, _ = self.r_at(self.state.step)
        loader = batch_loader(self.val_set, self.config.data, r, self.config.data.max_frames_per_batch,
                              self.config.train.seed, shuffle=False)
        metrics, examples = teacher_forced_metrics(self.model, self.criterion, loader, self.state.step, self.device,
                                                   self._autocast, self.config.train.n_val_audio,
                                                   self.tokenizer.ids_to_symbols)
        if self.is_main:
            step = self.state.step
            log.info("validation at step %d: %s", step, ", ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
            self._tick()
            self.folder.log({"step": step, "split": "val", **{k: round(v, 6) for k, v in metrics.items()},
                             "train_seconds": round(self.state.train_seconds, 1)})
            for key, value in metrics.items():
                self.writer.add_scalar(f"val/{key}", value, step)
            if metrics["loss"] < self.state.best_val_loss:
                self.state.best_val_loss = metrics["loss"]
                self._save(self.folder.best, with_training_state=False)
            self.renderer(self.model, examples, step, metrics["loss"])
        return metrics["loss"]
