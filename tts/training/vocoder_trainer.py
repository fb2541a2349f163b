"""Training a neural vocoder (HiFi-GAN) on a corpus's mels and audio, with the guarantees of
:class:`~tts.training.run.TrainingRun`: exact resume, atomic checkpoints, AMP, DDP, the folder
lock, deferred signals, TensorBoard with audio.

Each step follows Kong et al. 2020: the generator turns a batch of mel segments into audio; the
discriminators take a least-squares GAN step on real vs generated audio; then the generator takes
a step on adversarial + ``feature_weight`` · feature-matching + ``mel_weight`` · mel L1 (+
``waveform_weight`` · waveform L1 + ``stft_weight`` · multi-resolution STFT) loss against the
updated discriminators. Before ``vocoder.adversarial_start`` the generator learns from the
reconstruction terms alone, and the discriminators (most of a step's cost) do not run. A
non-finite discriminator loss or gradient skips the whole step; a non-finite generator loss or
gradient skips the generator's update (the discriminators' update of that step stands).
Validation vocodes whole validation utterances and reports the mel L1 between their mels and the
recordings'; ``best.pt`` holds the generator with the lowest.
With ``vocoder.teacher`` (distillation) the teacher's waveforms of the same mels, made once
(:func:`~tts.training.teacher_audio.teacher_waveforms`), take the recordings' place everywhere.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.parallel import DistributedDataParallel

from tts import checkpoint
from tts.audio import MelSpectrogram, save_wav
from tts.config import VocoderExperimentConfig
from tts.data import require_corpus
from tts.data.features import find_mel_cache
from tts.data.segments import SegmentDataset, segment_loader
from tts.errors import TTSError
from tts.training.losses import multi_resolution_stft_loss, phase_loss
from tts.training.run import TrainingRun, log
from tts.training.teacher_audio import teacher_waveforms
from tts.training.teacher_forcing import teacher_forced_mels
from tts.vocoder_loader import vocoder_for
from tts.vocoders import NeuralVocoder, build_discriminators, build_vocoder
from tts.vocoders.hifigan import discriminator_loss, feature_matching_loss, generator_adversarial_loss


class _Generating(nn.Module):
    """The generator's raw network as ``forward`` (what DistributedDataParallel calls)."""

    def __init__(self, generator: NeuralVocoder):
        super().__init__()
        self.generator = generator

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        return self.generator.generate(mel)


class VocoderTrainer(TrainingRun[VocoderExperimentConfig]):
    """``VocoderTrainer(config, data_root, exp_dir).fit()``; ``resume=True`` continues from the latest checkpoint."""

    def __init__(self, config: VocoderExperimentConfig, data_root: str | Path, exp_dir: str | Path,
                 resume: bool | str = False, device: str | None = None, progress: bool = True):
        super().__init__(config, exp_dir, device, progress)
        v = config.vocoder
        self.data_root = require_corpus(data_root)
        mel_dir = None
        if v.mels == "teacher_forced":
            if not v.acoustic_checkpoint:
                raise TTSError("vocoder.mels=teacher_forced needs vocoder.acoustic_checkpoint=<acoustic model .pt>")
            mel_dir, cache, made_with = self.main_first(lambda: teacher_forced_mels(
                v.acoustic_checkpoint, self.data_root, config.audio, device=self.device,
                progress=progress and self.is_main))
        else:
            cache, made_with = find_mel_cache(self.data_root, config.audio)
        limit = v.train_utterances or None
        self.train_set = SegmentDataset(cache, self.data_root, "train", made_with, v.segment_frames, mel_dir, limit)
        self.train_set.check_segment_length()
        self.val_set = SegmentDataset(cache, self.data_root, "val", made_with, v.segment_frames, mel_dir,
                                      limit=v.n_val_utterances)
        if v.teacher:
            teacher = vocoder_for(v.teacher, self.device)
            teacher.check_compatible(config.audio, "this vocoder config")
            ids = [self.train_set.utterance_id(i) for i in range(len(self.train_set))]
            ids += [self.val_set.utterance_id(i) for i in range(len(self.val_set))]
            wav_dir = self.main_first(lambda: teacher_waveforms(teacher, v.teacher, cache, self.train_set.mel_dir,
                                                                ids, progress and self.is_main))
            self.train_set = SegmentDataset(cache, self.data_root, "train", made_with, v.segment_frames, mel_dir,
                                            limit, wav_dir=wav_dir)
            self.val_set = SegmentDataset(cache, self.data_root, "val", made_with, v.segment_frames, mel_dir,
                                          limit=v.n_val_utterances, wav_dir=wav_dir)
        torch.manual_seed(config.train.seed)
        generator = build_vocoder(v, config.audio).to(self.device)
        assert isinstance(generator, NeuralVocoder)  # every kind a config can name
        self.generator = generator
        self.discriminators = build_discriminators(v).to(self.device)
        self.g_ddp: nn.Module = _Generating(self.generator)
        self.d_ddp: nn.Module = self.discriminators
        self.optimizer_g = torch.optim.AdamW(self.generator.parameters(), v.lr, betas=(v.betas[0], v.betas[1]))
        self.optimizer_d = torch.optim.AdamW(self.discriminators.parameters(), v.lr, betas=(v.betas[0], v.betas[1]))
        decay = lambda step: v.lr_decay ** (step // v.lr_decay_every)  # noqa: E731
        self.scheduler_g = torch.optim.lr_scheduler.LambdaLR(self.optimizer_g, decay)
        self.scheduler_d = torch.optim.lr_scheduler.LambdaLR(self.optimizer_d, decay)
        fp16 = self.amp_dtype == torch.float16
        self.scaler_g = torch.amp.GradScaler("cuda", enabled=fp16)
        self.scaler_d = torch.amp.GradScaler("cuda", enabled=fp16)
        self.mel = MelSpectrogram(config.audio).to(self.device)
        self.open(resume)

    # ------------------------------------------------------------------ hooks
    def _wrap_distributed(self) -> None:
        if self.world_size > 1:
            ids = [self.device.index] if self.device.type == "cuda" else None
            self.g_ddp = DistributedDataParallel(self.g_ddp, device_ids=ids)
            self.d_ddp = DistributedDataParallel(self.discriminators, device_ids=ids)

    def _describe(self) -> None:
        count = lambda module: sum(p.numel() for p in module.parameters()) / 1e6  # noqa: E731
        log.info("vocoder %s (generator %.2fM, discriminators %.2fM parameters) on %s, world size %d; "
                 "%d train / %d val utterances, mels: %s", self.config.vocoder.kind, count(self.generator),
                 count(self.discriminators), self.device, self.world_size, len(self.train_set), len(self.val_set),
                 self.config.vocoder.mels)

    def _write_checkpoint(self, path: Path, training: dict[str, Any] | None) -> Path:
        return checkpoint.save_vocoder(path, self.generator, self.config, self.state.step, training)

    def _optimizer_states(self) -> dict[str, Any]:
        return {"discriminators": self.discriminators.state_dict(),
                "optimizer_g": self.optimizer_g.state_dict(), "optimizer_d": self.optimizer_d.state_dict(),
                "scheduler_g": self.scheduler_g.state_dict(), "scheduler_d": self.scheduler_d.state_dict(),
                "scaler_g": self.scaler_g.state_dict(), "scaler_d": self.scaler_d.state_dict()}

    def _load_training(self, contents: checkpoint.CheckpointContents) -> None:
        training = contents.training_state()
        self.generator.load_state_dict(contents.weights)
        self.discriminators.load_state_dict(training["discriminators"])
        for name in ("optimizer_g", "optimizer_d", "scheduler_g", "scheduler_d", "scaler_g", "scaler_d"):
            getattr(self, name).load_state_dict(training[name])

    def _check_compatible(self, contents: checkpoint.CheckpointContents, action: str = "resume") -> None:
        if contents.kind != "vocoder":
            raise TTSError(f"{contents.path} is an acoustic model checkpoint; {action} a vocoder from a "
                           f"checkpoint written by 'tts train-vocoder'")
        theirs, ours = contents.vocoder_config(), self.config
        differing = [f"audio.{d}" for d in theirs.audio.mel_differences(ours.audio)]
        differing += [f"vocoder.{k}" for k in ("kind", "hifigan")
                      if getattr(theirs.vocoder, k) != getattr(ours.vocoder, k)]
        if differing:
            raise TTSError(f"{contents.path} holds a vocoder with other settings than this config "
                           f"({', '.join(differing)}); {action} with the config saved next to it")

    def _warm_start(self, path: Path) -> None:
        """Start from another vocoder run's generator (and discriminators, when the file has them):
        e.g. fine-tuning on teacher-forced mels a vocoder trained on ground-truth ones."""
        contents = checkpoint.read(path, self.device)
        self._check_compatible(contents, "warm start")
        weights, grown = self.generator.grown_weights(contents.weights)
        own = self.generator.state_dict()
        for name, tensor in weights.items():
            if name in own and own[name].shape != tensor.shape:
                raise TTSError(f"warm start: the generator's {name} has shape {tuple(tensor.shape)} in {path} "
                               f"but {tuple(own[name].shape)} here; warm start from a generator this config "
                               f"can hold")
        self.generator.load_state_dict(weights)
        if contents.training is not None:
            self.discriminators.load_state_dict(contents.training["discriminators"])
        log.info("warm start from %s (step %d): generator%s loaded", path, contents.step,
                 " and discriminators" if contents.training is not None else "")
        for growth in grown:
            log.info("warm start: grown %s", growth)

    # ------------------------------------------------------------------ training
    def _train(self) -> None:
        from tqdm import tqdm

        cfg, v = self.config.train, self.config.vocoder
        bar = tqdm(total=cfg.max_steps, initial=self.state.step, desc="train vocoder", unit="step",
                   disable=not (self.progress and self.is_main), dynamic_ncols=True)
        seconds_per_batch = v.batch_size * v.segment_frames * self.config.audio.hop_length / self.config.audio.sample_rate
        window_audio, window_start = 0.0, time.perf_counter()
        self._clock = (time.perf_counter(), self.state.train_seconds)
        while self.state.step < cfg.max_steps:
            loader = segment_loader(self.train_set, v.batch_size, v.num_workers, cfg.seed, self.rank, self.world_size)
            loader.batches.set_epoch(self.state.epoch, skip=self.state.batch_in_epoch)
            epoch_done = True
            self.g_ddp.train()
            self.d_ddp.train()
            for mels, wavs in loader:
                self.state.batch_in_epoch += 1
                terms = self._step(mels.to(self.device), wavs.to(self.device))
                window_audio += seconds_per_batch * self.world_size
                if terms is None:
                    self._stop_if_signalled()
                    continue
                bar.update(1)
                if self.is_main and (self.state.step % cfg.log_every == 0 or self.state.step == 1):
                    speed = window_audio / max(time.perf_counter() - window_start, 1e-9)
                    self._record_train({**{k: round(float(t), 6) for k, t in terms.items()},
                                        "lr": float(self.scheduler_g.get_last_lr()[0]),
                                        "audio_seconds_per_s": round(speed, 2), "nan_steps": self.state.nan_total})
                    bar.set_postfix({k: f"{float(terms[k]):.3f}" for k in ("mel_l1", "generator", "discriminator")
                                     if k in terms})
                    window_audio, window_start = 0.0, time.perf_counter()
                self._after_step()
                self.g_ddp.train()
                if self.state.step >= cfg.max_steps:
                    epoch_done = False
                    break
            if epoch_done:
                self.state.epoch += 1
                self.state.batch_in_epoch = 0
        bar.close()

    def _reconstruction(self, fake: torch.Tensor, wavs: torch.Tensor) -> dict[str, torch.Tensor]:
        """The generator's non-adversarial terms: mel L1, waveform L1, the multi-resolution STFT loss
        and the phase loss at the audio's FFT size and hop (the last three when their weights are set)."""
        v = self.config.vocoder
        fake, wavs = fake.squeeze(1).float(), wavs.squeeze(1).float()
        terms = {"mel_l1": F.l1_loss(self.mel.differentiable(fake), self.mel.differentiable(wavs))}
        if v.waveform_weight:
            terms["waveform_l1"] = F.l1_loss(fake, wavs)
        if v.stft_weight:
            terms["stft"] = multi_resolution_stft_loss(fake, wavs)
        if v.phase_weight:
            audio = self.config.audio
            terms["phase"] = phase_loss(fake, wavs, audio.n_fft, audio.hop_length)
        return terms

    def _reconstruction_loss(self, terms: dict[str, torch.Tensor]) -> torch.Tensor:
        """The weighted sum of :meth:`_reconstruction`'s terms."""
        v = self.config.vocoder
        return v.mel_weight * terms["mel_l1"] + v.waveform_weight * terms.get("waveform_l1", 0.0) \
            + v.stft_weight * terms.get("stft", 0.0) + v.phase_weight * terms.get("phase", 0.0)

    def _reconstruction_step(self, mels: torch.Tensor, wavs: torch.Tensor) -> dict[str, torch.Tensor] | None:
        """Before ``vocoder.adversarial_start``: a generator step on the reconstruction terms alone
        (the discriminators neither run nor learn)."""
        with self._autocast():
            fake = self.g_ddp(mels)
        terms = self._reconstruction(fake, wavs)
        g_loss = self._reconstruction_loss(terms)
        terms = {k: t.detach() for k, t in terms.items()} | {"generator": g_loss.detach()}
        g_norm = self._update_module(g_loss, self.generator, self.scaler_g, self.optimizer_g)
        if g_norm is None:
            self._skip_step(terms)
            return None
        self.scheduler_g.step()  # the discriminators' schedule starts when they do
        self.state.step += 1
        self.state.nan_streak = 0
        return terms | {"grad_norm_generator": g_norm.detach()}

    def _step(self, mels: torch.Tensor, wavs: torch.Tensor) -> dict[str, torch.Tensor] | None:
        """One GAN step on mels ``(B, n_mels, F)`` and audio ``(B, 1, F · hop)`` (a reconstruction
        step before ``vocoder.adversarial_start``); returns the loss terms, or None when the step
        was skipped as non-finite."""
        v = self.config.vocoder
        if self.state.step < v.adversarial_start:
            return self._reconstruction_step(mels, wavs)
        with self._autocast():
            fake = self.g_ddp(mels)
            d_loss = discriminator_loss(self.d_ddp(wavs), self.d_ddp(fake.detach()))
        d_norm = self._update_module(d_loss, self.discriminators, self.scaler_d, self.optimizer_d)
        if d_norm is None:
            self._skip_step({"discriminator": d_loss.detach()})
            return None

        self.discriminators.requires_grad_(False)
        try:
            with self._autocast():
                fake_outputs = self.discriminators(fake)
                with torch.no_grad():
                    real_outputs = self.discriminators(wavs)
                adversarial = generator_adversarial_loss(fake_outputs)
                features = feature_matching_loss(real_outputs, fake_outputs)
        finally:
            self.discriminators.requires_grad_(True)
        reconstruction = self._reconstruction(fake, wavs)
        g_loss = adversarial.float() + v.feature_weight * features.float() + self._reconstruction_loss(reconstruction)
        terms = {"discriminator": d_loss.detach().float(), "adversarial": adversarial.detach().float(),
                 "feature_matching": features.detach().float(), "generator": g_loss.detach(),
                 **{k: t.detach() for k, t in reconstruction.items()}}
        g_norm = self._update_module(g_loss, self.generator, self.scaler_g, self.optimizer_g)
        if g_norm is None:
            self._skip_step(terms)
            return None
        self.scheduler_g.step()
        self.scheduler_d.step()
        self.state.step += 1
        self.state.nan_streak = 0
        return terms | {"grad_norm_generator": g_norm.detach(), "grad_norm_discriminators": d_norm.detach()}

    # ------------------------------------------------------------------ validation
    @torch.no_grad()
    def validate(self) -> float:
        """Vocode whole validation utterances (main process): mel L1 against the recordings into
        metrics.jsonl and TensorBoard, the first ``train.n_val_audio`` as wavs (``val_audio/``)
        and TensorBoard audio; ``best.pt`` when the L1 is the lowest so far."""
        if not self.is_main:
            return float("nan")
        self.generator.eval()
        sample_rate = self.config.audio.sample_rate
        total = 0.0
        for index in range(len(self.val_set)):
            mel, wav = self.val_set[index]
            fake = self.generator.generate(mel[None].to(self.device)).squeeze(1)
            real = wav[None].to(self.device)
            total += float(F.l1_loss(self.mel.differentiable(fake), self.mel.differentiable(real)))
            if index < self.config.train.n_val_audio:
                uid = self.val_set.utterance_id(index)
                audio = fake[0].float().cpu()
                save_wav(self.exp_dir / "val_audio" / f"step{self.state.step:08d}_{uid}.wav", audio.numpy(), sample_rate)
                self.writer.add_audio(f"val/{uid}", audio.clamp(-1, 1), self.state.step, sample_rate)
        metrics = {"mel_l1": total / len(self.val_set)}
        self._record_validation(metrics, metrics["mel_l1"])
        self.generator.train()
        return metrics["mel_l1"]
