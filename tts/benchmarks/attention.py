"""``tts bench attention``: a toy comparison of how many steps each attention mechanism needs to
align (two utterances, one seed). The attention study (``tts study``, docs/attention_study.md) is the
real comparison."""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path

import torch

from tts.config import attention_config, config_from_dict
from tts.data import FeatureDataset, compute_features
from tts.data.toy import make_toy_corpus
from tts.metrics import attention_report
from tts.models import build_model
from tts.models.attention import available
from tts.models.layers import decoder_steps
from tts.text import SymbolInventory
from tts.training.losses import TTSLoss

TOY_MODEL = {"embedding_dim": 64, "encoder_conv_layers": 2, "encoder_conv_channels": 64, "encoder_lstm_dim": 64,
             "prenet_dims": [64, 64], "attention_rnn_dim": 128, "decoder_rnn_dim": 128, "reduction_factor": 2,
             "postnet": {"layers": 3, "channels": 64}, "attention": {"attention_dim": 64}}


def bench_attention(kinds: list[str] | None = None, max_steps: int = 400, check_every: int = 25,
                    threads: int = 2, seed: int = 0, guided: bool = True) -> dict:
    """The same small Tacotron2 (r = 2) is trained on two utterances of the toy tone corpus with
    Adam (2e-3), with or without the guided attention loss; every ``check_every`` steps the
    teacher-forced alignments are measured. "Aligned" = diagonal correlation > 0.9 and focus
    rate > 0.5 on both items."""
    torch.set_num_threads(threads)
    config = config_from_dict({"data": {"max_frames_per_batch": 2000, "num_workers": 0},
                               "loss": {"guided_attention": {"enabled": guided}}, "model": {"tacotron2": TOY_MODEL}})
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = make_toy_corpus(Path(tmp))
        cache = compute_features(root, config, num_workers=1, progress=False)
        dataset = FeatureDataset(cache, root, "train")
        batch = dataset.collate(2)([dataset[0], dataset[2]])
        for kind in kinds or available():
            section = dataclasses.replace(config.model.tacotron2, attention=attention_config(kind, attention_dim=64))
            torch.manual_seed(seed)
            model = build_model(dataclasses.replace(config.model, tacotron2=section), len(SymbolInventory()),
                                config.audio)
            optimizer = torch.optim.Adam(model.parameters(), 2e-3)
            criterion = TTSLoss(config.loss)
            aligned_at, start, last = None, time.perf_counter(), []
            for step in range(1, max_steps + 1):
                output = model(batch)
                terms = criterion(output, batch, step)
                optimizer.zero_grad()
                terms["loss"].backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                if step % check_every == 0 or step == max_steps:
                    last = [attention_report(output.alignments[i, : decoder_steps(int(batch.mel_lengths[i]), 2),
                                                               : int(batch.text_lengths[i])].detach().numpy())
                            for i in range(2)]
                    if all(r.diagonal_correlation > 0.9 and r.focus_rate > 0.5 for r in last):
                        aligned_at = step
                        break
            results[kind] = {
                "steps_to_alignment": aligned_at, "seconds": round(time.perf_counter() - start, 1),
                "final_focus_rate": round(min(r.focus_rate for r in last), 3),
                "final_diagonal_correlation": round(min(r.diagonal_correlation for r in last), 3)}
    return {"task": "toy overfit, 2 utterances, r=2", "guided_attention": guided, "max_steps": max_steps,
            "threads": threads, "results": results}
