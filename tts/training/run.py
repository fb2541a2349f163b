"""What every training run shares, whatever it trains: the distributed set-up, the locked
experiment folder, atomic checkpoints and exact resume, warm start, deferred Ctrl-C / SIGTERM,
mixed precision, the non-finite-step guard, and the logs (``train.log``, ``metrics.jsonl``,
``sessions.jsonl``, TensorBoard).

A trainer subclasses :class:`TrainingRun`: it builds its data and models, calls :meth:`open`,
and implements the hooks (``_train``, ``_write_checkpoint``, ``_optimizer_states``,
``_load_training``, ``_check_compatible``, ``_warm_start``, ``_describe``). Exact resume: a
checkpoint holds the optimizer step, the epoch, how many batches of the epoch were consumed and
every RNG state; batch samplers are pure functions of (seed, epoch), so a resumed run replays the
same batches as an uninterrupted one.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

import torch
import torch.distributed as dist

from tts import checkpoint
from tts.config import save_config
from tts.config.experiment import Config
from tts.devices import computes_bf16, cpu_instructions, describe_device, resolve_device
from tts.errors import Interrupted, TTSError
from tts.fileio import WriteError
from tts.threads import shared_cores
from tts.training.experiment import ExperimentFolder, code_version, rng_state, set_rng_state

Made = TypeVar("Made")

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

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


def distributed_env() -> tuple[int, int, int]:
    """``(rank, world size, local rank)`` from torchrun's environment (``(0, 1, 0)`` without it)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    return int(os.environ.get("RANK", "0")), world, int(os.environ.get("LOCAL_RANK", "0"))


class TrainingRun(Generic[Config]):
    """The shared machinery; ``fit()`` trains until ``train.max_steps``."""

    def __init__(self, config: Config, exp_dir: str | Path,
                 device: str | None = None, progress: bool = True):
        self.config: Config = config
        self.exp_dir, self.progress = Path(exp_dir), progress
        self.rank, self.world_size, local_rank = distributed_env()
        self.device = torch.device(resolve_device(device) if device else
                                   (f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu"))
        if self.device.type == "cuda" and self.device.index is None:  # "cuda": this process's own GPU
            self.device = torch.device("cuda", local_rank)
        if self.world_size > 1 and not dist.is_initialized():
            dist.init_process_group("nccl" if self.device.type == "cuda" else "gloo")
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
        self.is_main = self.rank == 0
        self.amp_dtype = self._amp_dtype()
        self.folder = ExperimentFolder(self.exp_dir, config.train.keep_last)
        self.state = TrainState()
        self._writer: SummaryWriter | None = None
        self._log_handler: logging.FileHandler | None = None
        self._clock = (time.perf_counter(), 0.0)
        # a lone CPU run whose thread count came from the idle cores follows them as other work comes and goes
        self._cores = (shared_cores(torch.set_num_threads)
                       if self.device.type == "cpu" and self.world_size == 1 else None)

    def main_first(self, make: Callable[[], Made]) -> Made:
        """``make()`` on the main process first and on the others once it has finished: for a cache
        every process reads and one should write (the others then find it made)."""
        if self.is_main:
            made = make()
        if self.world_size > 1:
            dist.barrier()
        if not self.is_main:
            made = make()
        return made

    # ------------------------------------------------------------------ hooks
    def _train(self) -> None:
        """The loop: optimizer steps until ``train.max_steps``, calling :meth:`_after_step`."""
        raise NotImplementedError

    def _write_checkpoint(self, path: Path, training: dict[str, Any] | None) -> Path:
        raise NotImplementedError

    def _optimizer_states(self) -> dict[str, Any]:
        """The training state besides counters and RNG: optimizers, schedulers, scalers, …"""
        raise NotImplementedError

    def _load_training(self, contents: checkpoint.CheckpointContents) -> None:
        """Load the weights and :meth:`_optimizer_states` of a checkpoint being resumed."""
        raise NotImplementedError

    def _check_compatible(self, contents: checkpoint.CheckpointContents) -> None:
        """Refuse to resume from a checkpoint of another model."""
        raise NotImplementedError

    def _warm_start(self, path: Path) -> None:
        raise NotImplementedError

    def _wrap_distributed(self) -> None:
        """Wrap the trained modules in DistributedDataParallel (called once they are loaded)."""

    def _describe(self) -> None:
        """Set up what the main process writes besides the logs (plots, audio) and log the run's first line."""

    # ------------------------------------------------------------------ opening and closing
    def open(self, resume: bool | str) -> None:
        """Take the folder and start a fresh run, resume (``True``: the latest checkpoint; a path:
        that one) or warm start; then the config, logs and TensorBoard. On failure the folder is
        let go (and removed if this run created it and wrote nothing)."""
        for option, path in (("--resume-from", resume if isinstance(resume, str) else ""),
                             ("train.warm_start", "" if resume else self.config.train.warm_start)):
            if path and not Path(path).is_file():
                raise TTSError(f"{option} {path}: no such checkpoint file")
        if self.is_main:
            self.folder.acquire()
        try:
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
            self._wrap_distributed()
            if self.is_main:
                self._prepare_exp_dir()
        except BaseException:
            self._close(discard=True)
            raise
        self._clock = (time.perf_counter(), self.state.train_seconds)

    @property
    def writer(self) -> SummaryWriter:
        """The run's TensorBoard writer (the main process's, once its folder is prepared)."""
        if self._writer is None:
            raise RuntimeError("the experiment folder is not prepared: no TensorBoard writer yet")
        return self._writer

    def _prepare_exp_dir(self) -> None:
        from torch.utils.tensorboard import SummaryWriter

        save_config(self.config, self.exp_dir / "config.yaml")
        self._log_handler = handler = logging.FileHandler(self.exp_dir / "train.log")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        self._writer = SummaryWriter(str(self.exp_dir / "tensorboard"), purge_step=self.state.step + 1)
        self._describe()
        session = {"step": self.state.step, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                   "device": describe_device(self.device), "cpu_instructions": cpu_instructions(),
                   "world_size": self.world_size,
                   "torch": torch.__version__, "host": socket.gethostname(), "commit": code_version()}
        self.folder.log_session(session)
        log.info("session from step %d on %s, torch %s (sessions.jsonl)", session["step"], session["device"],
                 session["torch"])
        if self.amp_dtype == torch.bfloat16 and not computes_bf16(self.device):
            log.warning("train.amp=bf16 on %s, which has no bfloat16 arithmetic (AVX2 only): autocast converts "
                        "in software, slower than train.amp=off here (docs/speed.md)", session["device"])

    def _close(self, discard: bool = False) -> None:
        """Let go of the folder: TensorBoard writer, train.log handler, lock (``discard``: and the
        folder itself if this run created it and wrote nothing into it)."""
        if self._writer is not None:
            self._writer.close()
        if self._log_handler is not None:
            log.removeHandler(self._log_handler)
            self._log_handler.close()
        self.folder.release(discard)

    # ------------------------------------------------------------------ checkpoints
    def _tick(self) -> None:
        """Bring ``state.train_seconds`` up to now."""
        started, before = self._clock
        self.state.train_seconds = before + time.perf_counter() - started

    def _save(self, path: Path, with_training_state: bool = True) -> Path:
        self._tick()
        training = None
        if with_training_state:
            training = {**self._optimizer_states(), "state": vars(self.state).copy(), "rng": rng_state()}
        try:
            return self._write_checkpoint(path, training)
        except WriteError as exc:
            last = self.folder.latest()
            raise TTSError(f"cannot write {path} ({exc.reason}); the last good checkpoint is "
                           f"{last if last else 'none'}: free space or fix the folder, then --resume") from None

    def _save_step(self) -> Path:
        path = self._save(self.folder.path(self.state.step))
        self.folder.prune()
        return path

    def _resume(self, path: Path | None) -> None:
        path = path or self.folder.latest()
        if path is None:
            raise TTSError(f"--resume: no checkpoint_*.pt in {self.exp_dir}")
        contents = checkpoint.read(path, self.device)
        self._check_compatible(contents)
        training = contents.training
        if training is None:
            raise TTSError(f"{path} has no training state (a stripped release checkpoint?); use train.warm_start")
        self._load_training(contents)
        self.state = TrainState(**training["state"])
        set_rng_state(training["rng"])
        if self.is_main:
            self.folder.truncate_log(self.state.step)
        log.info("resumed from %s at step %d (epoch %d, batch %d)", path, self.state.step, self.state.epoch,
                 self.state.batch_in_epoch)

    # ------------------------------------------------------------------ the loop's shared parts
    def fit(self) -> TrainState:
        """Train until ``train.max_steps``. Ctrl-C or SIGTERM (a scheduler's kill, ``kill PID``)
        ends the step in flight, saves a checkpoint and raises :class:`Interrupted`."""
        previous = self._defer_signals()
        try:
            self._train()
            if self.is_main:
                log.info("finished at step %d (%d non-finite steps skipped)", self.state.step, self.state.nan_total)
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

    def _after_step(self) -> None:
        """After optimizer step ``state.step``: validation and checkpoint when due, then a pending signal."""
        cfg, step = self.config.train, self.state.step
        if self._cores is not None:
            self._share_cores()
        if step % cfg.validate_every == 0 or step == cfg.max_steps:
            self.validate()
        if self.is_main and (step % cfg.checkpoint_every == 0 or step == cfg.max_steps):
            self._save_step()
        self._stop_if_signalled()

    def _share_cores(self) -> None:
        """When due (every ~30 s), set the thread count for the cores other processes left idle
        since the last look (:class:`~tts.threads.SharedCores`), and say so in train.log when it changes."""
        assert self._cores is not None
        changed = self._cores.adjust()
        if changed is not None:
            threads, others, seconds = changed
            log.info("step %d: %d CPU thread(s) from now on: other processes kept %.1f of %d cores busy over "
                     "the last %.0f s (--threads N fixes the count)", self.state.step, threads, others,
                     len(self._cores.cores), seconds)

    def validate(self) -> float:
        raise NotImplementedError

    def _amp_dtype(self) -> torch.dtype | None:
        choice = self.config.train.amp
        if choice == "off" or (choice == "auto" and self.device.type != "cuda"):
            return None
        if choice == "fp16" and self.device.type != "cuda":
            raise TTSError("train.amp=fp16 needs a GPU; use bf16 or off on CPU")
        if choice == "auto":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.bfloat16 if choice == "bf16" else torch.float16

    def _autocast(self):
        return torch.autocast(self.device.type, dtype=self.amp_dtype or torch.float32, enabled=self.amp_dtype is not None)

    def _all_finite(self, value: torch.Tensor) -> bool:
        """Whether ``value`` is finite on every process (all take the same branch)."""
        finite = torch.isfinite(value.detach()).all().float()
        if self.world_size > 1:
            dist.all_reduce(finite, op=dist.ReduceOp.MIN)
        return finite.item() == 1

    def _update_module(self, loss: torch.Tensor, module: torch.nn.Module, scaler: torch.amp.GradScaler,
                       optimizer: torch.optim.Optimizer) -> torch.Tensor | None:
        """Backward, clip and step ``module`` on ``loss``; returns the gradient norm, or None (and
        no change to the weights) when the loss or the gradient is not finite."""
        optimizer.zero_grad(set_to_none=True)
        norm = None
        if self._all_finite(loss):
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            norm = torch.nn.utils.clip_grad_norm_(module.parameters(), self.config.train.grad_clip)
        if norm is None or not self._all_finite(norm):
            optimizer.zero_grad(set_to_none=True)
            scaler.update()
            return None
        scaler.step(optimizer)
        scaler.update()
        return norm

    def _skip_step(self, terms: dict[str, torch.Tensor]) -> None:
        """Count a step skipped as non-finite and warn; too many in a row end the run."""
        self.state.nan_streak += 1
        self.state.nan_total += 1
        bad = [k for k, v in terms.items() if not torch.isfinite(v)] or ["gradient norm"]
        log.warning("step %d: non-finite %s; update skipped (%d in a row)", self.state.step + 1, ", ".join(bad),
                    self.state.nan_streak)
        if self.state.nan_streak >= self.config.train.max_nan_steps:
            raise TTSError(f"loss was NaN/inf for {self.state.nan_streak} steps in a row (at step "
                           f"{self.state.step + 1}); lower the learning rate or check the features")

    def _record_validation(self, metrics: dict[str, float], loss: float) -> bool:
        """Log validation figures (train.log, metrics.jsonl, TensorBoard); returns whether ``loss``
        is the best so far (then ``best.pt`` has been written)."""
        step = self.state.step
        log.info("validation at step %d: %s", step, ", ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
        self._tick()
        self.folder.log({"step": step, "split": "val", **{k: round(v, 6) for k, v in metrics.items()},
                         "train_seconds": round(self.state.train_seconds, 1)})
        for key, value in metrics.items():
            self.writer.add_scalar(f"val/{key}", value, step)
        if loss < self.state.best_val_loss:
            self.state.best_val_loss = loss
            self._save(self.folder.best, with_training_state=False)
            return True
        return False

    def _record_train(self, record: dict[str, float | int]) -> None:
        """One training record into metrics.jsonl and TensorBoard (main process)."""
        self.folder.log({"step": self.state.step, **record})
        for key, value in record.items():
            self.writer.add_scalar(f"train/{key}", value, self.state.step)
