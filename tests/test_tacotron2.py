import math

import pytest
import torch
from conftest import overfit, random_batch, tiny_config_dict

from tts.config import InferenceConfig, Tacotron2Config, config_from_dict
from tts.data import FeatureDataset, feature_dir
from tts.errors import TTSError
from tts.metrics import attention_report
from tts.models import Tacotron2, build_model
from tts.models.layers import Prenet, decoder_steps, prenet_noise
from tts.text import SymbolInventory
from tts.training.losses import guided_attention_loss, masked_mel_loss, stop_token_loss


def small_config(**overrides) -> Tacotron2Config:
    cfg = config_from_dict(tiny_config_dict()).model.tacotron2
    for key, value in overrides.items():
        setattr(cfg, key, value)
    return cfg




@pytest.mark.parametrize("r", [1, 2, 3])
def test_shapes_for_every_reduction_factor(r):
    model = Tacotron2(small_config(reduction_factor=r), n_symbols=130)
    batch = random_batch(r)
    out = model(batch)
    t_mel = batch.mels.shape[2]
    assert out.mel_before.shape == out.mel_after.shape == (3, 80, t_mel)
    assert out.stop_logits.shape == (3, t_mel // r) and out.alignments.shape == (3, t_mel // r, 9)
    model.eval()
    inf = model.inference(batch.ids, batch.text_lengths, settings=InferenceConfig(max_decoder_steps=7))
    assert inf.mel.shape[0] == 3 and inf.mel.shape[2] % r == 0 and bool((inf.lengths % r == 0).all())


@pytest.mark.parametrize("go_frame, value", [("zeros", 0.0), ("silence", math.log(1e-5))])
def test_go_frame_feeds_the_first_step(go_frame, value):
    model = Tacotron2(small_config(), n_symbols=130, go_frame=go_frame)
    batch = random_batch(2)
    inputs = model.decoder_inputs(batch.mels)
    assert inputs.shape == (3, 10, 80) and bool((inputs[:, 0] == value).all())
    torch.testing.assert_close(inputs[:, 1:], batch.mels[:, :, 1:-1:2].transpose(1, 2))  # last frame of each step


def test_default_config_has_nvidia_size():
    model = Tacotron2(Tacotron2Config(), n_symbols=124)
    n = sum(p.numel() for p in model.parameters())
    assert 28.0e6 < n < 28.4e6  # NVIDIA/tacotron2's 28.2M


def test_bad_inputs_are_clear_errors():
    model = Tacotron2(small_config(), n_symbols=130).eval()
    with pytest.raises(TTSError, match="outside the inventory"):
        model.inference(torch.tensor([[5, 200, 3]]))
    with pytest.raises(TTSError, match="empty input"):
        model.inference(torch.zeros(1, 0, dtype=torch.long))
    batch = random_batch(2)
    batch.mels = batch.mels[:, :, :19]
    with pytest.raises(TTSError, match="not a multiple of the reduction factor"):
        model(batch)


def test_batched_inference_equals_single_items():
    torch.manual_seed(0)
    model = Tacotron2(small_config(), n_symbols=130).eval()
    batch = random_batch(2)
    settings = InferenceConfig(stop_threshold=1.0, max_frames_per_token=4)
    out = model.inference(batch.ids, batch.text_lengths, settings=settings)
    for i in range(3):
        n = int(batch.text_lengths[i])
        single = model.inference(batch.ids[i:i + 1, :n], settings=settings)
        frames = int(single.lengths[0])
        assert int(out.lengths[i]) == frames and bool(out.hit_limit[i]) and bool(single.hit_limit[0])
        torch.testing.assert_close(out.mel[i, :, :frames], single.mel[0, :, :frames], atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(out.alignments[i, : frames // 2, :n], single.alignments[0, : frames // 2],
                                   atol=1e-5, rtol=1e-4)


def test_inference_without_prenet_dropout_is_deterministic():
    model = Tacotron2(small_config(), n_symbols=130).eval()
    ids = torch.tensor([[5, 6, 7, 8, 1]])
    a = model.inference(ids, settings=InferenceConfig(max_decoder_steps=10))
    b = model.inference(ids, settings=InferenceConfig(max_decoder_steps=10))
    assert torch.equal(a.mel, b.mel)


def test_inference_with_prenet_dropout_is_repeatable_per_seed_and_leaves_the_model_as_it_was():
    model = Tacotron2(small_config(), n_symbols=130).eval()
    ids = torch.tensor([[5, 6, 7, 8, 1]])
    plain = model.inference(ids, settings=InferenceConfig(max_decoder_steps=10, stop_threshold=1.0)).mel
    noisy = [model.inference(ids, settings=InferenceConfig(max_decoder_steps=10, stop_threshold=1.0,
                                                           prenet_dropout=True, noise_seed=seed)).mel
             for seed in (0, 0, 1)]
    assert torch.equal(noisy[0], noisy[1])
    assert not torch.allclose(noisy[0], noisy[2])
    assert not torch.allclose(noisy[0], plain)
    assert model.decoder.prenet.noise is None
    assert torch.equal(model.inference(ids, settings=InferenceConfig(max_decoder_steps=10, stop_threshold=1.0)).mel,
                       plain)


def test_a_prenet_with_noise_drops_about_its_share_and_keeps_the_mean():
    prenet = Prenet(4, [2000], dropout=0.5).eval()
    x = torch.ones(8, 4)
    with prenet_noise(prenet, seed=3, device=torch.device("cpu")) as reached:
        y = prenet(x)
    assert reached == 1
    clean = prenet(x)
    kept = (y != 0) & (clean != 0)
    assert 0.45 < kept.float().sum() / (clean != 0).float().sum() < 0.55
    assert torch.allclose(y[kept], 2 * clean[kept])


def test_inference_under_bf16_autocast_runs_its_products_in_bf16_close_to_fp32():
    # the CPU's prepacked fp32 LSTM products refused bf16 inputs; under autocast they run in bf16
    torch.manual_seed(0)
    model = Tacotron2(small_config(), n_symbols=130).eval()
    batch = random_batch(2)
    with torch.no_grad():
        settings = InferenceConfig(stop_threshold=1.0, max_decoder_steps=10)
        fp32 = model.inference(batch.ids, batch.text_lengths, settings=settings)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            bf16 = model.inference(batch.ids, batch.text_lengths, settings=settings)
    assert bf16.mel.dtype == torch.bfloat16 and fp32.mel.dtype == torch.float32
    assert torch.equal(bf16.lengths, fp32.lengths)
    scale = fp32.mel.abs().max()
    assert 0 < (bf16.mel.float() - fp32.mel).abs().max() <= 0.03 * scale
    torch.testing.assert_close(bf16.alignments.float(), fp32.alignments, atol=0.01, rtol=0)


def test_teacher_forcing_without_gradients_under_bf16_autocast_matches_fp32():
    # validation of a bf16 run: the loop's fixed-weight products met bf16 inputs with fp32 weights
    torch.manual_seed(0)
    model = Tacotron2(small_config(), n_symbols=130).eval()
    batch = random_batch(2)
    with torch.no_grad():
        fp32 = model(batch)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            bf16 = model(batch)
    assert bf16.mel_after.dtype == torch.bfloat16
    assert 0 < (bf16.mel_after.float() - fp32.mel_after).abs().max() <= 0.03 * fp32.mel_after.abs().max()
    torch.testing.assert_close(bf16.alignments.float(), fp32.alignments, atol=0.01, rtol=0)


def test_attention_window_constrains_the_peak():
    torch.manual_seed(1)
    model = Tacotron2(small_config(), n_symbols=130).eval()
    ids = torch.randint(3, 100, (1, 30))
    out = model.inference(ids, settings=InferenceConfig(max_decoder_steps=25, attention_window=[1, 2]))
    peaks = out.alignments[0].argmax(dim=1)
    assert bool((peaks[1:] - peaks[:-1] <= 2).all()) and bool((peaks[1:] - peaks[:-1] >= -1).all())


def test_losses_on_known_values():
    target = torch.zeros(1, 2, 4)
    pred = torch.ones(1, 2, 4)
    pred[..., 3] = 100.0  # padding: ignored
    assert masked_mel_loss(pred, target, torch.tensor([3])).item() == pytest.approx(1.0)
    assert masked_mel_loss(2 * pred, target, torch.tensor([3]), "l1").item() == pytest.approx(2.0)
    logits = torch.tensor([[-10.0, 10.0, 55.0]])  # r = 2, 6 frames, 3 real frames → steps 0, 1 real
    frames = torch.tensor([[0, 0, 1, 1, 1, 1.0]])
    assert stop_token_loss(logits, frames, torch.tensor([3]), 5.0).item() == pytest.approx(
        0.5 * (math.log1p(math.exp(-10)) + 5 * math.log1p(math.exp(-10))), rel=1e-2)


def test_guided_attention_prefers_the_diagonal():
    steps, n = 40, 20
    diagonal = torch.zeros(1, steps, n)
    diagonal[0, torch.arange(steps), torch.arange(steps) * n // steps] = 1.0
    uniform = torch.full((1, steps, n), 1.0 / n)
    lengths, step_lengths = torch.tensor([n]), torch.tensor([steps])
    g_diag = guided_attention_loss(diagonal, lengths, step_lengths, 0.4)
    g_uniform = guided_attention_loss(uniform, lengths, step_lengths, 0.4)
    assert g_diag < 0.01 < 0.1 < g_uniform


def test_overfits_two_utterances_with_a_diagonal_alignment(tiny_corpus):
    """The default (location-sensitive) model aligns two fixture utterances in 200 CPU steps."""
    torch.manual_seed(0)
    config = config_from_dict(tiny_config_dict())
    ds = FeatureDataset(feature_dir(tiny_corpus, config.audio, config.text), tiny_corpus, "train")
    batch = ds.collate(2)([ds[0], ds[2]])
    model = build_model(config.model, len(SymbolInventory()), config.audio)
    result = overfit(model, batch, config.loss, steps=200, lr=2e-3)
    out = model(batch)
    assert result["mel"] < 0.85 * result["first_mel"]
    for i in range(2):
        steps = decoder_steps(int(batch.mel_lengths[i]), 2)
        report = attention_report(out.alignments[i, :steps, : int(batch.text_lengths[i])].detach().numpy())
        assert report.diagonal_correlation > 0.9, report.summary()
        assert report.monotonicity > 0.9 and report.focus_rate > 0.35, report.summary()


def test_nvidia_reduction_averages_over_the_padded_batch():
    """loss.reduction=padded is NVIDIA's Tacotron2Loss: nn.MSELoss over the whole padded tensor with
    predictions past each length set to 0, nn.BCEWithLogitsLoss over every step with the padded
    logits set to 1000."""
    target = torch.zeros(2, 1, 4)
    target[0, 0, :3] = 1.0                                     # item 0: 3 real frames; item 1: 2
    prediction = torch.full((2, 1, 4), 3.0)
    lengths = torch.tensor([3, 2])
    # errors on real frames: item 0 (3-1)^2 x3 = 12, item 1 (3-0)^2 x2 = 18; padding counts as 0 error
    assert masked_mel_loss(prediction, target, lengths, reduction="padded").item() == pytest.approx(30 / 8)
    assert masked_mel_loss(prediction, target, lengths).item() == pytest.approx(30 / 5)
    logits = torch.tensor([[0.0, 0.0, 0.0, -50.0], [0.0, 0.0, -50.0, -50.0]])
    frames = torch.tensor([[0, 0, 1, 1], [0, 1, 1, 1.0]])
    # 5 real steps each with BCE(0, ·) = log 2; 3 padded steps: logit 1000, target 1 → 0; mean over 8
    assert stop_token_loss(logits, frames, lengths, 1.0, "padded").item() == pytest.approx(5 * math.log(2) / 8)
    assert stop_token_loss(logits, frames, lengths, 1.0).item() == pytest.approx(math.log(2))


def test_unmasked_padding_and_xavier_initialization():
    config = small_config(mask_padding=False, initialization="xavier", prenet_bias=False)
    model = Tacotron2(config, n_symbols=130).train()
    assert model.encoder.embedding.padding_idx is None and model.decoder.prenet.layers[0].bias is None
    bound = math.sqrt(3.0) * math.sqrt(2.0 / (130 + 64))
    embedding = model.encoder.embedding.weight.detach()
    assert float(embedding.abs().max()) <= bound and float(embedding[0].abs().sum()) > 0  # the pad row is trained
    # Xavier-uniform with the ReLU gain: bound √2·√(6 / (fan_in + fan_out))
    conv = model.encoder.convs[0].conv.weight.detach()
    fan_in, fan_out = conv.shape[1] * conv.shape[2], conv.shape[0] * conv.shape[2]
    assert float(conv.abs().max()) <= math.sqrt(2) * math.sqrt(6 / (fan_in + fan_out)) + 1e-6
    batch = random_batch(2)
    with torch.no_grad():
        torch.manual_seed(0)
        model.eval()
        short = model(batch).mel_after[2, :, :7]
        batch.ids[2, 3:] = 5  # what stands in the padding of item 2 now reaches its real frames
        changed = model(batch).mel_after[2, :, :7]
    assert not torch.allclose(short, changed)  # unlike the masked default (test_batched_inference_equals_single_items)
