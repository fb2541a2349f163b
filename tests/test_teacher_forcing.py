"""Teacher forcing has one definition, ``AutoregressiveTTS.forward_by_steps`` (the decoder's
inference step, once per frame); each model's fast ``forward`` (Tacotron2: the attention chain
first, deferred weight gradients and packed oneDNN products; Transformer-TTS: all steps at once
under a causal mask) must compute it, in value and gradient, for every attention mechanism."""

import pytest
import torch
from conftest import random_batch, tiny_config_dict

from tts.config import PostnetConfig, TransformerTTSConfig, attention_config, config_from_dict
from tts.models import Tacotron2, TransformerTTS, recurrent
from tts.models.attention import available


def tacotron2(kind: str) -> Tacotron2:
    config = config_from_dict(tiny_config_dict()).model.tacotron2
    config.attention = attention_config(kind, attention_dim=config.attention.attention_dim)
    torch.manual_seed(0)
    return Tacotron2(config, 100).eval()


def transformer_tts() -> TransformerTTS:
    config = TransformerTTSConfig(embedding_dim=64, d_model=64, heads=4, encoder_layers=2, decoder_layers=2,
                                  ffn_dim=128, decoder_prenet_dims=[64, 64], postnet=PostnetConfig(layers=3, channels=64),
                                  reduction_factor=2, guided_heads=[[-1, 0], [-1, 1]])
    torch.manual_seed(0)
    return TransformerTTS(config, 100).eval()


def values_and_gradients(model, run) -> list[torch.Tensor]:
    """The outputs of ``run`` (a teacher-forced pass) and the gradient of every parameter of a
    loss that reads all of them."""
    model.zero_grad()
    out = run(random_batch())
    weights = torch.arange(out.alignments.shape[-1], dtype=torch.float32)
    loss = (out.mel_before ** 2).mean() + (out.mel_after ** 2).mean() + out.stop_logits.sum() \
        + (out.alignments * weights).sum()
    loss.backward()
    grads = [p.grad.detach().clone() for p in model.parameters() if p.grad is not None]
    assert len(grads) > 10
    return [t.detach() for t in (out.mel_before, out.mel_after, out.stop_logits, out.alignments)] + grads


def assert_same(expected: list[torch.Tensor], got: list[torch.Tensor]) -> None:
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        torch.testing.assert_close(g, e, rtol=1e-4, atol=max(1e-5 * float(e.abs().max()), 1e-6))


@pytest.mark.parametrize("kind", available())
def test_tacotron2_forward_is_the_step_for_every_mechanism(kind):
    model = tacotron2(kind)
    assert_same(values_and_gradients(model, model.forward_by_steps), values_and_gradients(model, model))


def test_transformer_tts_forward_is_the_cached_step():
    model = transformer_tts()
    assert_same(values_and_gradients(model, model.forward_by_steps), values_and_gradients(model, model))


def test_without_oneDNN_packed_products_the_plain_product_serves(monkeypatch):
    """The private oneDNN ops are used only where they exist and compute F.linear's product; the
    fallback gives the same teacher forcing."""
    assert recurrent.packed_products_work() == torch.backends.mkldnn.is_available()
    model = tacotron2("location_sensitive")
    packed = values_and_gradients(model, model)
    monkeypatch.setattr(recurrent, "packed_products_work", lambda dtype=torch.float32: False)
    calls = []
    monkeypatch.setattr(torch.ops.mkldnn, "_reorder_linear_weight", lambda *a: calls.append(a), raising=False)
    assert_same(packed, values_and_gradients(model, model))
    assert calls == []


def test_under_bf16_autocast_packed_products_compute_the_plain_ones(monkeypatch):
    """bfloat16 weights are packed where oneDNN computes bfloat16 on this CPU (AVX-512, AMX), and
    teacher forcing under bf16 autocast, values and gradients, is then what ``F.linear`` gives (on
    a Zen 4 to the bit: oneDNN is behind both; the tolerance leaves room for another kernel's
    summation order)."""
    bf16_native = torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()
    assert recurrent.packed_products_work(torch.bfloat16) == bf16_native
    assert not recurrent.packed_products_work(torch.float16)
    model = tacotron2("location_sensitive").train()
    packs = []
    reorder = torch.ops.mkldnn._reorder_linear_weight
    monkeypatch.setattr(torch.ops.mkldnn, "_reorder_linear_weight",
                        lambda weight, *a: packs.append(weight.dtype) or reorder(weight, *a), raising=False)

    def run(batch):
        torch.manual_seed(1)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return model(batch)

    packed = values_and_gradients(model, run)
    assert (torch.bfloat16 in packs) == bf16_native
    monkeypatch.setattr(recurrent, "packed_products_work", lambda dtype=torch.float32: False)
    for e, g in zip(values_and_gradients(model, run), packed):
        torch.testing.assert_close(g, e, rtol=2e-2, atol=2e-2 * max(float(e.abs().max()), 1e-3))
