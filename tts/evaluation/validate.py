"""The trainer's teacher-forced figures for any checkpoint: losses, focus, diagonality, text
reliance and, optionally, the recognizer's error rates."""

from __future__ import annotations

import dataclasses
from itertools import accumulate
from pathlib import Path

import torch

from tts.checkpoint import LoadedModel
from tts.data import FeatureDataset, batch_loader, read_metadata, require_corpus
from tts.data.token_timings import TrueIntervals
from tts.errors import TTSError
from tts.metrics import ErrorCounts, Recognizer, error_counts
from tts.text import Tokenizer
from tts.training.losses import TTSLoss
from tts.training.validation import teacher_forced_metrics
from tts.vocoders import GriffinLim


def validate_checkpoint(loaded: LoadedModel, data_root: str | Path, split: str = "val",
                        limit: int | None = None, asr_utterances: int = 0, progress: bool = True,
                        device: str = "cpu") -> dict:
    """Teacher-forced metrics of the loaded model over ``split`` (the first ``limit``
    utterances), batched exactly as in training; with ``asr_utterances`` > 0 also
    ``teacher_forced_wer`` / ``teacher_forced_cer`` of that many utterances' Griffin-Lim audio."""
    from tqdm import tqdm

    root = require_corpus(data_root)
    config, model = loaded.config, loaded.model.to(device)
    if limit is not None and limit < 1:
        raise TTSError(f"--limit must be at least 1, got {limit}")
    dataset = FeatureDataset.of(root, config, split, limit)
    data = dataclasses.replace(config.data, num_workers=0)  # a one-off pass: worker start-up costs more than it saves
    loader = batch_loader(dataset, data, model.reduction_factor, config.data.max_frames_per_batch,
                          config.train.seed, shuffle=False)
    batches = tqdm(loader, desc="validate", unit="batch", disable=not progress)
    n_examples = 0  # the batches the recognizer needs, no more
    if asr_utterances > 0:
        sizes = list(accumulate(len(b) for b in loader.batches))
        n_examples = next((k + 1 for k, total in enumerate(sizes) if total >= asr_utterances), len(sizes))
    symbols = Tokenizer.for_config(config.text, loaded.inventory).ids_to_symbols
    truth = TrueIntervals(root, config.audio, symbols)
    metrics, examples = teacher_forced_metrics(model, TTSLoss(config.loss), batches, loaded.step, device,
                                               n_examples=n_examples, symbols=symbols,
                                               truth=truth if truth.available else None)
    summary = {"checkpoint_step": loaded.step, "split": split, "utterances": len(dataset),
               **{k: round(v, 6) for k, v in metrics.items()}}
    if asr_utterances > 0:
        vocoder = GriffinLim(config.audio, config.inference.griffin_lim).to(device)
        summary.update(_teacher_forced_error_rates(vocoder, root, examples, asr_utterances, progress))
    return summary


def _teacher_forced_error_rates(vocoder: GriffinLim, root: Path, examples: list, limit: int, progress: bool) -> dict:
    """WER / CER of the first ``limit`` utterances' teacher-forced ``mel_after`` through Griffin-Lim."""
    from tqdm import tqdm

    texts = {u.id: u.normalized for u in read_metadata(root)}
    items = [(batch.utterance_ids[i], output.mel_after[i:i + 1, :, : int(batch.mel_lengths[i])])
             for batch, output in examples for i in range(len(batch.utterance_ids))][:limit]
    recognizer = Recognizer()
    total = ErrorCounts()
    for uid, mel in tqdm(items, desc="transcribe", unit="utt", disable=not progress):
        with torch.no_grad():
            wav = vocoder(mel.float())[0][0].cpu().numpy()
        total = total + error_counts(texts[uid], recognizer(wav, vocoder.audio.sample_rate))
    return {"asr_utterances": len(items), "teacher_forced_wer": round(total.wer, 4),
            "teacher_forced_cer": round(total.cer, 4)}
