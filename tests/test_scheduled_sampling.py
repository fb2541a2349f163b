import json

import pytest
import torch
from conftest import tiny_config_dict
from test_transformer_tts import random_batch, small

from tts.config import ScheduledSamplingConfig, config_from_dict
from tts.errors import ConfigError
from tts.models import TransformerTTS
from tts.training.scheduled_sampling import mix_in_predictions, sampling_probability
from tts.training.trainer import Trainer


def test_probability_ramps_linearly_from_the_start_step():
    config = ScheduledSamplingConfig(probability=0.4, start_step=100, ramp_steps=200)
    assert [sampling_probability(config, s) for s in (0, 99, 100, 200, 300, 5000)] == \
        pytest.approx([0.0, 0.0, 0.0, 0.2, 0.4, 0.4])
    assert sampling_probability(ScheduledSamplingConfig(probability=0.3), 0) == 0.3
    assert sampling_probability(ScheduledSamplingConfig(), 10**6) == 0.0


def test_mixed_inputs_hold_predictions_on_real_frames_only():
    torch.manual_seed(0)
    model = TransformerTTS(small(), n_symbols=130).eval()
    batch = random_batch()
    predicted = model(batch).mel_before
    everything = mix_in_predictions(model, batch, 1.0)
    real = batch.mel_mask.unsqueeze(1).expand_as(batch.mels)
    torch.testing.assert_close(everything.mels[real], predicted[real])
    torch.testing.assert_close(everything.mels[~real], batch.mels[~real])  # padding untouched
    assert torch.equal(mix_in_predictions(model, batch, 0.0).mels, batch.mels)
    half = mix_in_predictions(model, batch, 0.5).mels
    replaced = (half != batch.mels).any(dim=1)[batch.mel_mask].float().mean()
    assert 0.3 < float(replaced) < 0.7
    assert everything.ids is batch.ids and not torch.equal(batch.mels, everything.mels)


def test_each_further_pass_predicts_from_the_previous_mix():
    torch.manual_seed(0)
    model = TransformerTTS(small(), n_symbols=130).eval()
    batch = random_batch()
    real = batch.mel_mask.unsqueeze(1).expand_as(batch.mels)
    once = mix_in_predictions(model, batch, 1.0)
    twice = mix_in_predictions(model, batch, 1.0, passes=2)
    torch.testing.assert_close(twice.mels[real], model(once).mel_before[real])
    torch.testing.assert_close(twice.mels[~real], batch.mels[~real])
    assert not torch.allclose(twice.mels[real], once.mels[real])
    # the first frame's prediction sees only the go frame, so no pass can change it
    torch.testing.assert_close(twice.mels[:, :, 0], once.mels[:, :, 0])


def test_utterances_shorter_than_min_frames_keep_the_recordings():
    torch.manual_seed(0)
    model = TransformerTTS(small(), n_symbols=130).eval()
    batch = random_batch()  # 20, 13 and 7 frames
    mixed = mix_in_predictions(model, batch, 1.0, min_frames=13).mels
    predicted = model(batch).mel_before
    torch.testing.assert_close(mixed[:2, :, :13], predicted[:2, :, :13])
    assert torch.equal(mixed[2], batch.mels[2])  # 7 frames: teacher-forced throughout
    assert torch.equal(mix_in_predictions(model, batch, 1.0, min_frames=21).mels, batch.mels)


def test_probability_outside_unit_interval_is_a_config_error():
    with pytest.raises(ConfigError, match="scheduled_sampling.probability"):
        config_from_dict({"train": {"scheduled_sampling": {"probability": 1.5}}})
    with pytest.raises(ConfigError, match="scheduled_sampling.passes"):
        config_from_dict({"train": {"scheduled_sampling": {"passes": 0}}})
    with pytest.raises(ConfigError, match="scheduled_sampling.min_frames"):
        config_from_dict({"train": {"scheduled_sampling": {"min_frames": -1}}})


def test_training_logs_the_ramp(tiny_corpus, tmp_path, monkeypatch):
    from tts.training import trainer

    used = []
    monkeypatch.setattr(trainer, "mix_in_predictions",
                        lambda model, batch, p, passes, min_frames: used.append((p, passes, min_frames))
                        or mix_in_predictions(model, batch, p))
    d = tiny_config_dict()
    d["train"].update(max_steps=4, log_every=1,
                      scheduled_sampling={"probability": 0.5, "start_step": 1, "ramp_steps": 2, "passes": 3,
                                          "min_frames": 40})
    Trainer(config_from_dict(d), tiny_corpus, tmp_path / "exp", progress=False).fit()
    # step 1 is plain teacher forcing, then the decoder is fed its predictions over three passes
    assert used == [(0.25, 3, 40), (0.5, 3, 40), (0.5, 3, 40)]
    records = [json.loads(x) for x in (tmp_path / "exp" / "metrics.jsonl").read_text().splitlines()]
    train = [r for r in records if "split" not in r]
    assert [r["sampling_probability"] for r in train] == [0.0, 0.25, 0.5, 0.5]
    assert all(torch.isfinite(torch.tensor(r["loss"])) for r in train)
