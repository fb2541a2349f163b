"""Training an acoustic model: gradient clipping and accumulation, gradual r, scheduled
sampling, an optional adversarial term on the postnet's mels (:mod:`tts.training.adversarial`),
teacher-forced validation with alignment plots and audio, on the shared machinery of
:class:`~tts.training.run.TrainingRun` (AMP, DDP, atomic checkpoints, exact resume, signals).

The data loader draws from its own generator and the batch sampler is a pure function of
(seed, epoch), so a resumed run replays the same batches with the same dropout masks as an
uninterrupted one.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from tts import checkpoint
from tts.config import ExperimentConfig, replaced
from tts.data import FeatureDataset, batch_loader, feature_dir, read_manifest, require_corpus
from tts.data.corpus import corpus_speakers
from tts.data.speaker_vectors import speaker_centroids, utterance_vectors
from tts.data.token_timings import TrueIntervals
from tts.errors import TTSError
from tts.models import build_model
from tts.text import SymbolInventory, Tokenizer
from tts.training.adversarial import MelAdversary, matching_segments
from tts.training.anchor import AnchorPull
from tts.training.losses import TTSLoss
from tts.training.module_paths import under
from tts.training.optim import build_optimizer, build_scheduler
from tts.training.run import TrainingRun, TrainState, log
from tts.training.scheduled_sampling import mix_in_predictions, sampling_probability
from tts.training.validation import ValidationRenderer, teacher_forced_metrics
from tts.vocoders import GriffinLim

__all__ = ["Trainer", "TrainState"]


class Trainer(TrainingRun[ExperimentConfig]):
    """``Trainer(config, data_root, exp_dir).fit()``; ``resume=True`` continues from the latest checkpoint."""

    def __init__(self, config: ExperimentConfig, data_root: str | Path, exp_dir: str | Path,
                 resume: bool | str = False, device: str | None = None, progress: bool = True):
        super().__init__(config, exp_dir, device, progress)
        self.data_root = require_corpus(data_root)
        # the warm start is read once: its speakers name the table, its weights fill the model (open())
        self._warm_contents = (checkpoint.read(config.train.warm_start, self.device)
                               if config.train.warm_start and not resume and Path(config.train.warm_start).is_file()
                               else None)
        inherited = self._warm_contents.acoustic()[0].model.speakers.names if self._warm_contents is not None else []
        self.config = config = with_corpus_speakers(config, self.data_root, inherited)
        self.cache = feature_dir(self.data_root, config.audio, config.text)
        read_manifest(self.cache)  # fails with a clear line when features are missing
        self.inventory = SymbolInventory.for_text(config.text)
        self.tokenizer = Tokenizer.for_config(config.text, self.inventory)
        self._check_r_schedule()
        speakers = config.model.speakers.names
        self.train_set = FeatureDataset(self.cache, self.data_root, "train", speakers=speakers)
        self.val_set = FeatureDataset(self.cache, self.data_root, "val", speakers=speakers)
        if speakers:
            check_every_speaker_trains(self.data_root, [e["id"] for e in self.train_set.entries])
        if speakers and config.model.speakers.vectors == "ge2e":  # training items carry their own d-vectors
            self.train_set.speaker_vectors = utterance_vectors(
                self.data_root, [e["id"] for e in self.train_set.entries], progress and self.is_main)
        self.oversampled = self.train_set.oversample(config.data.oversample)

        torch.manual_seed(config.train.seed)
        self.model = build_model(config.model, len(self.inventory), config.audio).to(self.device)
        self.ddp_model: torch.nn.Module = self.model
        self.criterion = TTSLoss(config.loss)
        self.optimizer = build_optimizer(self._parameter_groups(), config.optim)
        self.scheduler = build_scheduler(self.optimizer, config.optim)
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.amp_dtype == torch.float16)
        self.adversary = (MelAdversary(config.loss.adversarial, self.device, self.amp_dtype == torch.float16)
                          if config.loss.adversarial.enabled else None)
        self.renderer: ValidationRenderer | None = None
        self.anchor: AnchorPull | None = None  # train.anchors: set by the warm start or the resumed checkpoint
        self._truth: TrueIntervals | None = None  # the corpus's true alignments, read at the first validation
        self.open(resume)
        if not resume and self.train_set.speaker_vectors is not None:
            self._set_speaker_centroids(self.train_set.speaker_vectors)

    # ------------------------------------------------------------------ set-up helpers
    def _check_r_schedule(self) -> None:
        section = self.config.model.active
        max_r = max(section.reduction_factor, section.max_reduction_factor)
        for stage in self.config.train.r_schedule:
            if not 1 <= stage.r <= max_r:
                raise TTSError(f"train.r_schedule uses r={stage.r}; set model.{self.config.model.name}"
                               f".max_reduction_factor >= {stage.r}")

    def _parameter_groups(self) -> list[dict[str, Any]]:
        """The optimizer's parameter groups: every parameter not under a ``train.freeze`` prefix (the
        frozen ones stop taking gradients), at the base rate first, then one group per
        ``train.lr_scales`` entry with its own rate (the longest matching prefix claims a parameter).
        A prefix is a whole module path (:func:`under`): ``decoder.attention`` leaves
        ``decoder.attention_rnn`` alone."""
        frozen = self.config.train.freeze
        scales = sorted(self.config.train.lr_scales, key=lambda entry: -len(entry.prefix))
        names = [name for name, _ in self.model.named_parameters()]
        tops = ", ".join(sorted({name.split(".")[0] for name in names}))
        for key, prefix in [("freeze", p) for p in frozen] + [("lr_scales", e.prefix) for e in scales]:
            if not any(under(name, [prefix]) for name in names):
                raise TTSError(f"config key 'train.{key}': no parameter lies under the module path '{prefix}' "
                               f"(the model's top-level modules: {tops})")
        groups: list[list[torch.nn.Parameter]] = [[] for _ in range(len(scales) + 1)]
        for name, parameter in self.model.named_parameters():
            parameter.requires_grad_(not under(name, frozen) and name not in self.model.fixed_parameters)
            if parameter.requires_grad:
                claims = [i for i, entry in enumerate(scales, 1) if under(name, [entry.prefix])]
                groups[claims[0] if claims else 0].append(parameter)
        if not any(groups):
            raise TTSError("config key 'train.freeze' freezes every parameter; leave at least one module to train")
        for entry, group in zip(scales, groups[1:]):
            if not group:
                raise TTSError(f"config key 'train.lr_scales': no trainable parameter is left under '{entry.prefix}' "
                               f"(train.freeze holds them, or a longer prefix claims them); drop the entry")
        base = self.config.optim.lr
        return [{"params": groups[0], "lr": base}] + [{"params": group, "lr": base * entry.scale}
                                                       for entry, group in zip(scales, groups[1:])]

    def _set_speaker_centroids(self, vectors: dict[str, np.ndarray]) -> None:
        """A ``ge2e`` model's table: each of the corpus's speakers gets its mean training d-vector
        (what synthesis says it with); speakers only a warm start knew keep theirs."""
        assert self.model.speaker_table is not None
        centroids = speaker_centroids(vectors, corpus_speakers(self.data_root))
        with torch.no_grad():
            for name, centroid in centroids.items():
                row = self.model.speaker_names.index(name)
                self.model.speaker_table.weight[row] = torch.from_numpy(centroid)
        log.info("speaker table: the mean d-vector of %d speakers' training recordings", len(centroids))

    def _train_mode(self) -> None:
        """Training mode, except for BatchNorm layers under a ``train.freeze`` prefix: their running
        statistics stay as loaded."""
        self.ddp_model.train()
        for name, module in self.model.named_modules():
            if under(name, self.config.train.freeze) and isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                module.eval()

    def r_at(self, step: int) -> tuple[int, int]:
        """Reduction factor and frame budget in force at an optimizer step."""
        r, frames = self.config.model.active.reduction_factor, self.config.data.max_frames_per_batch
        for stage in sorted(self.config.train.r_schedule, key=lambda s: s.step):
            if stage.step <= step:
                r, frames = stage.r, stage.max_frames_per_batch
        return r, frames


    def _wrap_distributed(self) -> None:
        if self.world_size > 1:
            ids = [self.device.index] if self.device.type == "cuda" else None
            self.ddp_model = DistributedDataParallel(self.model, device_ids=ids)
            if self.adversary is not None:
                self.adversary.ddp = DistributedDataParallel(self.adversary.discriminator, device_ids=ids)

    def _describe(self) -> None:
        vocoder = GriffinLim(self.config.audio, self.config.inference.griffin_lim).to(self.device)
        self.renderer = ValidationRenderer(self.exp_dir, self.tokenizer, vocoder, self.writer)
        n_params = sum(p.numel() for p in self.model.parameters())
        n_trainable = sum(p.numel() for p in self.model.parameters() if p.requires_grad)
        extra = f", {n_trainable / 1e6:.2f}M trained" if n_trainable < n_params else ""
        if self.adversary is not None:
            extra += f", discriminator {sum(p.numel() for p in self.adversary.discriminator.parameters()) / 1e6:.2f}M"
        log.info("model %s (%.2fM parameters%s, attention %s) on %s, world size %d; %d train / %d val utterances",
                 self.config.model.name, n_params / 1e6, extra, self.model.attention_name, self.device,
                 self.world_size, len(self.train_set), len(self.val_set))
        for rule in self.config.data.oversample:
            log.info("oversampled: %d training utterances under '%s', %d times each",
                     self.oversampled[rule.prefix], rule.prefix, rule.times)

    # ------------------------------------------------------------------ checkpoints
    def _write_checkpoint(self, path: Path, training: dict[str, Any] | None) -> Path:
        return checkpoint.save(path, self.model, self.config, self.inventory, self.state.step, training)

    def _optimizer_states(self) -> dict[str, Any]:
        adversary = self.adversary.state_dict() if self.adversary is not None else {}
        anchor = {"anchor": self.anchor.targets} if self.anchor is not None else {}
        return {"optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict(),
                "scaler": self.scaler.state_dict(), **adversary, **anchor}

    def _load_training(self, contents: checkpoint.CheckpointContents) -> None:
        self.model.load_state_dict(contents.weights)
        training = contents.training_state()
        self.optimizer.load_state_dict(training["optimizer"])
        self.scheduler.load_state_dict(training["scheduler"])
        self.scaler.load_state_dict(training["scaler"])
        if self.adversary is not None:
            if "discriminator" not in training:
                raise TTSError(f"{contents.path} was trained without loss.adversarial; start a new run from it "
                               f"with train.warm_start instead of resuming")
            self.adversary.load_state_dict(training)
        if self.config.train.anchors:
            if "anchor" not in training:
                raise TTSError(f"{contents.path} was trained without train.anchors; start a new run from it "
                               f"with train.warm_start instead of resuming")
            self._set_anchor(training["anchor"])

    def _check_compatible(self, contents: checkpoint.CheckpointContents) -> None:
        if contents.kind != "acoustic":
            raise TTSError(f"{contents.path} is a vocoder checkpoint; resume it with 'tts train-vocoder'")
        config, inventory = contents.acoustic()
        if inventory.symbols != self.inventory.symbols:
            raise TTSError(f"{contents.path} was trained with a different symbol inventory; use train.warm_start "
                           f"with train.ignore_layers=[encoder.embedding] instead of resuming")
        theirs, ours = config.model, self.config.model
        if theirs.name == ours.name:  # r may follow a schedule; the writer records it with the frame head's size
            a, b = theirs.active, ours.active
            if max(a.reduction_factor, a.max_reduction_factor) == max(b.reduction_factor, b.max_reduction_factor):
                a.reduction_factor, a.max_reduction_factor = b.reduction_factor, b.max_reduction_factor
        if theirs != ours:
            raise TTSError(f"{contents.path} holds a different model ({theirs.name}, other sizes or attention) "
                           f"than this config; resume with the config saved next to it")


    def _warm_start(self, path: Path) -> None:
        contents = self._warm_contents if self._warm_contents is not None else checkpoint.read(path, self.device)
        self._warm_contents = None
        if contents.kind != "acoustic":
            raise TTSError(f"warm start: {path} is a vocoder checkpoint; warm start from an acoustic model's")
        theirs = contents.acoustic()[0].model.name
        if theirs != self.config.model.name:
            raise TTSError(f"warm start: {path} holds a {theirs} model, this config trains "
                           f"{self.config.model.name}; warm start from a checkpoint of the same model")
        ignore = tuple(self.config.train.ignore_layers)
        own = self.model.state_dict()
        kept = {}
        weights = dict(contents.weights)
        if "speaker_table.weight" in weights and "speaker_table.weight" in own:
            weights["speaker_table.weight"] = speaker_rows(weights["speaker_table.weight"],
                                                           contents.acoustic()[0].model.speakers.names,
                                                           self.model.speaker_names)
        weights, grown = self.model.grown_weights(weights)
        for name, tensor in weights.items():
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
        for growth in grown:
            log.info("warm start: grown %s", growth)
        if self.config.train.anchors:
            self._set_anchor(dict(self.model.named_parameters()))

    def _set_anchor(self, targets: dict[str, torch.Tensor]) -> None:
        """``train.anchors``: the pull toward ``targets`` (the warm start's weights), its rates checked."""
        self.anchor = AnchorPull(self.model, self.config.train.anchors, targets)
        self.anchor.check_rates(self.optimizer)


    # ------------------------------------------------------------------ training
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
            loader.batches.set_epoch(self.state.epoch, skip=self.state.batch_in_epoch)
            if self.state.batch_in_epoch == 0 and len(loader.batches) < cfg.grad_accum:
                raise TTSError(f"an epoch holds {len(loader.batches)} batches per process, fewer than "
                               f"train.grad_accum={cfg.grad_accum}: lower data.max_frames_per_batch or use fewer processes")
            accumulated, epoch_done = 0, True
            self._train_mode()
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
                self._after_step()
                self._train_mode()
                if step >= cfg.max_steps:
                    epoch_done = False
                    break
                if self.r_at(step)[0] != r:  # gradual training: new r → a new epoch with new batches
                    break
            if epoch_done:
                self.state.epoch += 1
                self.state.batch_in_epoch = 0
        bar.close()

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
            sampling = self.config.train.scheduled_sampling
            inputs = (mix_in_predictions(self.model, batch, probability, sampling.passes, sampling.min_frames)
                      if probability > 0 else batch)
            output = self.ddp_model(inputs)
            terms = self.criterion(output, batch, self.state.step)
        if self.adversary is not None:
            terms |= self._adversarial_terms(output.mel_after, batch, terms["loss"])
        if not self._all_finite(terms["loss"]):
            terms["loss"] = terms["loss"].detach() * float("nan")
            return {k: v.detach() for k, v in terms.items()}
        self.scaler.scale(terms["loss"] / self.config.train.grad_accum).backward()
        return {k: v.detach() for k, v in terms.items()}

    def _adversarial_terms(self, mel_after: torch.Tensor, batch, loss: torch.Tensor) -> dict[str, torch.Tensor]:
        """One discriminator update on matching segments of the recordings' and the postnet's mels
        ``(B, n_mels, T_mel)``, then the model's ``adversarial`` and ``feature_matching`` terms against
        the updated discriminator, added to ``loss`` from ``loss.adversarial.start_step`` on. A
        non-finite discriminator loss or gradient leaves the discriminator as it was and makes
        ``loss`` NaN, so the whole step is skipped."""
        c, adversary = self.config.loss.adversarial, self.adversary
        assert adversary is not None, "only called with loss.adversarial on"
        real, fake = matching_segments(batch.mels, mel_after, batch.mel_lengths, c.segment_frames)
        with self._autocast():
            d_loss = adversary.discriminator_loss(real, fake).float()
        if self._update_module(d_loss, adversary.discriminator, adversary.scaler, adversary.optimizer) is None:
            return {"discriminator": d_loss.detach(), "loss": loss * float("nan")}
        with self._autocast():
            terms = {k: v.float() for k, v in adversary.generator_terms(real, fake).items()}
        if self.state.step >= c.start_step:
            loss = loss + c.weight * terms["adversarial"] + c.feature_matching_weight * terms["feature_matching"]
        return terms | {"discriminator": d_loss.detach(), "loss": loss}

    def _optimizer_step(self, terms: dict[str, torch.Tensor]) -> float | None:
        """Clip and step; returns the grad norm, or None when the step was skipped as non-finite."""
        self.scaler.unscale_(self.optimizer)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.train.grad_clip)
        if not (torch.isfinite(terms["loss"]) and torch.isfinite(grad_norm)):
            self.optimizer.zero_grad(set_to_none=True)
            for buffer, saved in zip(self._norm_statistics(), self._statistics_before_step):
                buffer.copy_(saved)
            self.scaler.update()
            self._skip_step(terms)
            return None
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
        if self.anchor is not None:
            self.anchor.pull(self.optimizer)
        self.scheduler.step()
        self.state.step += 1
        self.state.nan_streak = 0
        return float(grad_norm)

    def _log_train(self, terms: dict[str, torch.Tensor], grad_norm: float, fps: float, r: int) -> None:
        if not self.is_main:
            return
        step = self.state.step
        self._record_train({**{k: round(float(v), 6) for k, v in terms.items()}, "grad_norm": round(grad_norm, 4),
                            "lr": float(self.scheduler.get_last_lr()[0]), "frames_per_s": round(fps, 1), "r": r,
                            "sampling_probability": round(sampling_probability(self.config.train.scheduled_sampling,
                                                                               step), 4),
                            "nan_steps": self.state.nan_total}
                           | ({"anchor_distance": round(self.anchor.distance(), 7)} if self.anchor is not None else {}))
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
        if self._truth is None:
            self._truth = TrueIntervals(self.data_root, self.config.audio, self.tokenizer.ids_to_symbols)
        metrics, examples = teacher_forced_metrics(self.model, self.criterion, loader, self.state.step, self.device,
                                                   self._autocast, self.config.train.n_val_audio,
                                                   self.tokenizer.ids_to_symbols,
                                                   self._truth if self._truth.available else None)
        if self.is_main:
            self._record_validation(metrics, metrics["loss"])
            assert self.renderer is not None, "the main process renders"
            self.renderer(self.model, examples, self.state.step, metrics["loss"])
        return metrics["loss"]


def with_corpus_speakers(config: ExperimentConfig, root: Path, inherited: list[str] | None = None) -> ExperimentConfig:
    """``config`` with ``model.speakers.names`` filled when it names none: the speakers of the
    warm-start checkpoint (``inherited``, in its order) and then the corpus's others (sorted), so
    adapting a multi-speaker model to a new voice keeps every voice it had. A config that names
    speakers needs a corpus that names them."""
    speaker_of = corpus_speakers(root)
    names = config.model.speakers.names
    if names and not speaker_of:
        raise TTSError(f"model.speakers.names lists {len(names)} speakers but {root}/metadata.csv names none: "
                       f"a multi-speaker corpus ends each line in '|speaker'")
    if names or not speaker_of:
        return config
    inherited = inherited or []
    found = inherited + sorted(set(speaker_of.values()) - set(inherited))
    log.info("speakers: %s (model.speakers.names%s)", ", ".join(found),
             f"; {len(inherited)} from the warm start" if inherited else "")
    return replaced(config, "", {"model.speakers.names": found})


def check_every_speaker_trains(root: Path, train_ids: list[str]) -> None:
    """Refuse a corpus with a speaker that has no utterance (with features) in the train split:
    its row of the table would never learn, and synthesis as that speaker would say nothing of theirs."""
    speaker_of = corpus_speakers(root)
    untrained = sorted(set(speaker_of.values()) - {speaker_of[uid] for uid in train_ids})
    if untrained:
        raise TTSError(f"speaker(s) {', '.join(untrained)} of {root} have no utterance in the train split: move some "
                       f"of theirs to splits/train.txt, or remove them from metadata.csv")


def speaker_rows(table: torch.Tensor, names: list[str], wanted: list[str]) -> torch.Tensor:
    """A speaker table ``(len(names), E)`` rearranged for ``wanted`` speakers ``(len(wanted), E)``:
    each known speaker keeps its row, a new one starts at the mean of the known rows."""
    mean = table.mean(dim=0)
    return torch.stack([table[names.index(name)] if name in names else mean for name in wanted])
