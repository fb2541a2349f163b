import numpy as np
import pytest
import torch
from conftest import overfit, random_batch, tiny_config_dict

from tts.config import InferenceConfig, PostnetConfig, TransformerTTSConfig, config_from_dict
from tts.data import FeatureDataset, feature_dir
from tts.errors import TTSError
from tts.metrics import attention_report
from tts.models import TransformerTTS, build_model
from tts.models.layers import decoder_steps
from tts.text import SymbolInventory
from tts.training.losses import TTSLoss


def small(**overrides) -> TransformerTTSConfig:
    c = TransformerTTSConfig(embedding_dim=64, d_model=64, heads=4, encoder_layers=2, decoder_layers=2, ffn_dim=128,
                             decoder_prenet_dims=[64, 64], postnet=PostnetConfig(layers=3, channels=64), reduction_factor=2,
                             guided_heads=[[-1, 0], [-1, 1]])
    for key, value in overrides.items():
        setattr(c, key, value)
    return c




def test_shapes_and_heads():
    model = TransformerTTS(small(), n_symbols=130)
    out = model(random_batch())
    assert out.mel_after.shape == (3, 80, 20) and out.stop_logits.shape == (3, 10)
    assert out.alignments.shape == (3, 10, 9) and out.attention_heads.shape == (3, 2, 4, 10, 9)
    torch.testing.assert_close(out.attention_heads.sum(-1), torch.ones(3, 2, 4, 10))
    assert float(out.attention_heads.detach()[1, ..., 6:].abs().max()) == 0.0  # padded text never attended
    terms = TTSLoss(config_from_dict({}).loss)(out, random_batch())
    terms["loss"].backward()
    assert model.encoder_position.alpha.grad is not None and model.decoder_position.alpha.grad is not None


def test_default_config_builds_the_papers_model():
    model = TransformerTTS(TransformerTTSConfig(), n_symbols=124)
    assert (len(model.encoder_layers), len(model.decoder_layers)) == (6, 6)
    attention = model.decoder_layers[0].cross_attention
    assert (attention.heads, attention.heads * attention.d_head) == (8, 512)
    assert 49e6 < sum(p.numel() for p in model.parameters()) < 51e6


def test_causal_mask_future_frames_do_not_change_the_past():
    torch.manual_seed(0)
    model = TransformerTTS(small(), n_symbols=130).eval()
    batch = random_batch()
    out1 = model(batch)
    changed = random_batch()
    changed.mels[:, :, 12:] += 5.0  # frames of steps 6.. (their inputs feed steps 7..)
    out2 = model(changed)
    torch.testing.assert_close(out1.mel_before[:, :, :14], out2.mel_before[:, :, :14])
    assert not torch.allclose(out1.mel_before[:, :, 16:], out2.mel_before[:, :, 16:])


def test_cached_inference_equals_uncached():
    torch.manual_seed(0)
    model = TransformerTTS(small(), n_symbols=130).eval()
    batch = random_batch()
    limits = {"stop_threshold": 2.0, "max_frames_per_token": 3}
    for window in (None, (0, 1)):
        model.kv_cache = True
        a = model.inference(batch.ids, batch.text_lengths, settings=InferenceConfig(attention_window=window, **limits))
        model.kv_cache = False
        b = model.inference(batch.ids, batch.text_lengths, settings=InferenceConfig(attention_window=window, **limits))
        torch.testing.assert_close(a.mel, b.mel, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(a.attention_heads, b.attention_heads, atol=1e-5, rtol=1e-4)
        assert a.alignments.shape == (3, a.attention_heads.shape[3], 9)


def test_attention_window_keeps_every_head_near_the_guided_peak():
    torch.manual_seed(1)
    model = TransformerTTS(small(), n_symbols=130).eval()
    ids = torch.randint(3, 100, (1, 30))
    out = model.inference(ids, settings=InferenceConfig(stop_threshold=1.0, max_decoder_steps=25, attention_window=[0, 1]))
    heads = out.attention_heads[0]                                        # (L, H, T_steps, T_text)
    guided = torch.stack([heads[layer, h] for layer, h in model.guided]).mean(0)
    peaks = guided.argmax(dim=1)
    assert bool(((peaks[1:] - peaks[:-1]) >= 0).all()) and bool(((peaks[1:] - peaks[:-1]) <= 1).all())
    positions = torch.arange(30)
    outside = (positions < peaks[:-1, None]) | (positions > peaks[:-1, None] + 1)   # step t's window from t - 1
    assert float(heads[:, :, 1:][..., outside].abs().max()) == 0.0
    free = model.inference(ids, settings=InferenceConfig(stop_threshold=1.0, max_decoder_steps=25))
    assert float(free.attention_heads[0, :, :, 1:][..., outside].sum()) > 0  # without it the heads do reach there


def test_alpha_is_trainable_and_positions_extend():
    model = TransformerTTS(small(), n_symbols=130)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.decoder_position.alpha.item()
    TTSLoss(config_from_dict({}).loss)(model(random_batch()), random_batch())["loss"].backward()
    optimizer.step()
    assert model.decoder_position.alpha.item() != before
    x = torch.zeros(1, 3000, 64)
    assert model.encoder_position(x).shape == (1, 3000, 64)  # beyond the initial 1024-row table


def test_a_fixed_alpha_stays_and_is_saved_under_the_same_name():
    fixed = TransformerTTS(small(positional_alpha_learned=False), n_symbols=130)
    assert not any(name.endswith("alpha") for name, _ in fixed.named_parameters())
    optimizer = torch.optim.SGD(fixed.parameters(), lr=0.1)
    TTSLoss(config_from_dict({}).loss)(fixed(random_batch()), random_batch())["loss"].backward()
    optimizer.step()
    assert fixed.decoder_position.alpha.item() == 1.0 and fixed.encoder_position.alpha.item() == 1.0
    learned = TransformerTTS(small(), n_symbols=130)
    assert set(fixed.state_dict()) == set(learned.state_dict())  # either loads the other's weights


def test_bad_inputs():
    model = TransformerTTS(small(), n_symbols=130).eval()
    with pytest.raises(TTSError, match="outside the inventory"):
        model.inference(torch.tensor([[5, 300]]))
    with pytest.raises(TTSError, match="empty input"):
        model.inference(torch.zeros(1, 0, dtype=torch.long))
    with pytest.raises(TTSError, match="head outside"):
        TransformerTTS(small(guided_heads=[[0, 9]]), n_symbols=130)


def test_overfits_two_utterances_with_a_diagonal_head(tiny_corpus):
    torch.manual_seed(0)
    d = tiny_config_dict()
    d["model"] = {"name": "transformer_tts", "transformer_tts": {
        "embedding_dim": 64, "d_model": 64, "heads": 2, "encoder_layers": 2, "decoder_layers": 2, "ffn_dim": 128,
        "decoder_prenet_dims": [64, 64], "postnet": {"layers": 3, "channels": 64}, "reduction_factor": 2,
        "dropout": 0.0, "guided_heads": [[-1, 0]]}}
    d["loss"] = {"guided_attention": {"weight": 10.0}}
    config = config_from_dict(d)
    ds = FeatureDataset(feature_dir(tiny_corpus, config.audio, config.text), tiny_corpus, "train")
    batch = ds.collate(2)([ds[0], ds[2]])
    model = build_model(config.model, len(SymbolInventory()), config.audio)
    overfit(model, batch, config.loss, steps=250, lr=5e-4)
    model.eval()
    heads = model(batch).attention_heads.detach()
    for i in range(2):
        steps = decoder_steps(int(batch.mel_lengths[i]), 2)
        reports = [attention_report(heads[i, layer, h, :steps, : int(batch.text_lengths[i])].numpy())
                   for layer in range(2) for h in range(2)]
        best = max(reports, key=lambda r: r.diagonal_correlation * r.focus_rate)
        assert best.diagonal_correlation > 0.85 and best.focus_rate > 0.5, best.summary()


def test_transformer_trains_synthesizes_and_plots_heads(tiny_corpus, tmp_path):
    """Same Trainer, Synthesizer and plots as Tacotron2: only the config changes."""
    import subprocess
    import sys

    from tts.synthesis import Synthesizer
    from tts.training.trainer import Trainer

    d = tiny_config_dict()
    d["model"] = {"name": "transformer_tts", "transformer_tts": {
        "embedding_dim": 32, "d_model": 32, "heads": 2, "encoder_layers": 1, "decoder_layers": 2, "ffn_dim": 64,
        "decoder_prenet_dims": [32, 32], "postnet": {"layers": 2, "channels": 32}, "reduction_factor": 2}}
    d["optim"] = {"schedule": {"kind": "noam", "warmup_steps": 10}}
    d["train"].update(max_steps=2, checkpoint_every=2)
    Trainer(config_from_dict(d), tiny_corpus, tmp_path / "exp", progress=False).fit()
    ckpt = tmp_path / "exp" / "checkpoint_00000002.pt"
    fast = {"max_frames_per_token": 2, "griffin_lim.iterations": 2, "vocoder": "griffin-lim"}
    result = Synthesizer.from_checkpoint(ckpt, changes=fast)(["A cat sat. It ran."])[0]
    assert result.segments[0].attention_heads.shape[:2] == (2, 2)
    assert result.alignment.shape[1] == len(result.tokens)
    # the heads span both sentences, laid out like the alignment (and the mel) they are plotted with
    heads, first = result.attention_heads, result.segments[0]
    assert heads.shape == (2, 2) + result.alignment.shape
    assert heads.shape[2] * 2 == result.mel.shape[1]
    n_steps, n_text = first.alignment.shape
    np.testing.assert_allclose(heads[..., :n_steps, :n_text], first.attention_heads)
    assert float(np.abs(heads[..., :n_steps, n_text:]).max()) == 0.0
    quantized = Synthesizer.from_checkpoint(ckpt, precision="int8", changes=fast)(["A cat sat."])[0]
    assert quantized.mel.shape[0] == 80 and quantized.attention_heads.shape[:2] == (2, 2)
    for extra in (["--all-heads"], ["--head", "1,0"]):
        out = subprocess.run([sys.executable, "-m", "tts.cli", "plot-alignment", "--checkpoint", str(ckpt), "--text",
                              "A cat sat. It ran.", "--max-frames-per-token", "2", "--gl-iters", "2", "--out",
                              str(tmp_path / "h.png"), *extra], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
