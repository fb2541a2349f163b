"""``tts validate``: the trainer's teacher-forced validation figures for any saved checkpoint,
plus, with a recognizer, the word error rate of its teacher-forced speech.

Teacher-forced WER next to ``tts evaluate``'s free-running WER separates the two ways a model
can fail: bad frames (both high) from exposure bias, a decoder that only sounds right when fed
the real previous frames (teacher-forced low, free-running high; ``text_reliance`` near 1).
"""

from __future__ import annotations

import dataclasses
from itertools import accumulate
from pathlib import Path

import torch

from tts.analysis.quality import Recognizer, error_rates
from tts.data import FeatureDataset, bucketed_loader, feature_dir, read_metadata, require_corpus
from tts.errors import TTSError
from tts.synthesis import Synthesizer
from tts.training.losses import TTSLoss
from tts.training.validation import teacher_forced_metrics


def validate_checkpoint(synthesizer: Synthesizer, data_root: str | Path, split: str = "val",
                        limit: int | None = None, asr_utterances: int = 0, progress: bool = True) -> dict:
    """Teacher-forced metrics of ``synthesizer``'s model over ``split`` (the first ``limit``
    utterances), batched exactly as in training; with ``asr_utterances`` > 0 also
    ``teacher_forced_wer`` / ``teacher_forced_cer`` of that many utterances' Griffin-Lim audio."""
    from tqdm import tqdm

    root = require_corpus(data_root)
    config, model = synthesizer.config, synthesizer.model
    if limit is not None and limit < 1:
        raise TTSError(f"--limit must be at least 1, got {limit}")
    dataset = FeatureDataset(feature_dir(root, config.audio, config.text), root, split, limit)
    data = dataclasses.replace(config.data, num_workers=0)  # a one-off pass: worker start-up costs more than it saves
    loader = bucketed_loader(dataset, data, model.reduction_factor, config.data.max_frames_per_batch,
                             config.train.seed, shuffle=False)
    batches = tqdm(loader, desc="validate", unit="batch", disable=not progress)
    n_examples = 0  # the batches the recognizer needs, no more
    if asr_utterances > 0:
        sizes = list(accumulate(len(b) for b in loader.batch_sampler))
        n_examples = next((k + 1 for k, total in enumerate(sizes) if total >= asr_utterances), len(sizes))
    metrics, examples = teacher_forced_metrics(model, TTSLoss(config.loss), batches, synthesizer.step,
                                               synthesizer.device, n_examples=n_examples)
    summary = {"checkpoint_step": synthesizer.step, "split": split, "utterances": len(dataset),
               **{k: round(v, 6) for k, v in metrics.items()}}
    if asr_utterances > 0:
        summary.update(_teacher_forced_error_rates(synthesizer, root, examples, asr_utterances, progress))
    return summary


def _teacher_forced_error_rates(synthesizer: Synthesizer, root: Path, examples: list, limit: int,
                                progress: bool) -> dict:
    """WER / CER of the first ``limit`` utterances' teacher-forced ``mel_after`` through Griffin-Lim."""
    from tqdm import tqdm

    texts = {u.id: u.normalized for u in read_metadata(root)}
    items = [(batch.utterance_ids[i], output.mel_after[i, :, : int(batch.mel_lengths[i])])
             for batch, output in examples for i in range(len(batch.utterance_ids))][:limit]
    recognizer = Recognizer()
    counts = [0, 0, 0, 0]
    for uid, mel in tqdm(items, desc="transcribe", unit="utt", disable=not progress):
        with torch.no_grad():
            wav = synthesizer.vocoder(mel.float()).cpu().numpy()
        *_, we, wn, ce, cn = error_rates(texts[uid], recognizer(wav, synthesizer.config.audio.sample_rate))
        counts = [a + b for a, b in zip(counts, (we, wn, ce, cn))]
    we, wn, ce, cn = counts
    return {"asr_utterances": len(items), "teacher_forced_wer": round(we / max(wn, 1), 4),
            "teacher_forced_cer": round(ce / max(cn, 1), 4)}
