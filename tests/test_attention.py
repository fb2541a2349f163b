import dataclasses

import pytest
import torch

from tts.config import AttentionConfig, attention_config
from tts.errors import ConfigError, TTSError
from tts.models.attention import available, build_attention

KINDS = ["content", "dynamic_convolution", "forward", "gmm", "hard", "hybrid", "location", "location_sensitive",
         "luong_concat", "luong_dot", "luong_general", "luong_local_m", "luong_local_p", "stepwise_monotonic"]
B, T, DQ, DM = 3, 11, 24, 20


def test_registry_has_every_mechanism():
    assert available() == sorted(KINDS)
    with pytest.raises(TTSError, match="unknown attention"):
        build_attention(AttentionConfig(kind="nope"), DQ, DM)
    with pytest.raises(ConfigError, match="'attention.kind' must be one of content, dynamic_convolution"):
        attention_config("nope")
    with pytest.raises(ConfigError, match="unknown config key 'attention.mixtures'"):  # a GMM setting, not DCA's
        attention_config("dynamic_convolution", mixtures=3)
    with pytest.raises(TTSError, match="attention 'gmm' takes GMMAttentionConfig, got AttentionConfig"):
        build_attention(AttentionConfig(kind="gmm"), DQ, DM)


@pytest.fixture
def toy():
    torch.manual_seed(0)
    memory = torch.randn(B, T, DM, requires_grad=True)
    lengths = torch.tensor([11, 7, 3])
    mask = torch.arange(T)[None] < lengths[:, None]
    return memory, mask, lengths


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("training", [True, False])
def test_mechanism_contract(kind, training, toy):
    memory, mask, lengths = toy
    own = {"transition_agent": True} if kind == "forward" else {}
    attn = build_attention(attention_config(kind, attention_dim=16, **own), DQ, DM)
    attn.train(training)
    state = attn.init_state(memory, mask)
    contexts, all_weights = [], []
    for _ in range(6):
        query = torch.randn(B, DQ)
        context, weights, state = attn(query, state)
        assert context.shape == (B, DM) and weights.shape == (B, T)
        torch.testing.assert_close(weights.sum(dim=1), torch.ones(B), atol=1e-5, rtol=0)
        assert float(weights.detach()[~mask].abs().max()) == 0.0
        assert bool((weights >= 0).all())
        contexts.append(context)
        all_weights.append(weights)
    # state is carried: cumulative weights are the sum of every step's weights
    torch.testing.assert_close(state.cumulative - (attn.init_state(memory, mask).cumulative),
                               torch.stack(all_weights).sum(0), atol=1e-5, rtol=0)
    torch.stack(contexts).sum().backward()
    grads = [p.grad for p in attn.parameters() if p.requires_grad]
    assert memory.grad is not None and memory.grad.abs().sum() > 0
    if training or kind not in ("stepwise_monotonic", "hard"):  # hard inference has no gradient to its energies
        assert grads and all(g is not None for g in grads)
        assert sum(float(g.abs().sum()) for g in grads) > 0


@pytest.mark.parametrize("kind", ["location_sensitive", "content", "luong_general", "forward", "stepwise_monotonic"])
def test_memory_projection_computed_once(kind, toy):
    """Memory-only projections happen in init_state, never per step."""
    memory, mask, _ = toy
    attn = build_attention(attention_config(kind, attention_dim=16), DQ, DM)
    calls = []
    layer = attn.memory_layer
    layer.register_forward_hook(lambda *a: calls.append(1))
    state = attn.init_state(memory, mask)
    for _ in range(5):
        _, _, state = attn(torch.randn(B, DQ), state)
    assert len(calls) == 1


@pytest.mark.parametrize("kind", ["forward", "stepwise_monotonic", "gmm", "dynamic_convolution"])
def test_monotonic_mechanisms_start_on_the_first_token(kind, toy):
    memory, mask, _ = toy
    attn = build_attention(attention_config(kind, attention_dim=16), DQ, DM).eval()
    state = attn.init_state(memory, mask)
    assert bool((state.weights[:, 0] == 1).all())
    peaks = []
    for _ in range(8):
        _, weights, state = attn(torch.randn(B, DQ), state)
        peaks.append(weights[0].argmax().item())
    if kind in ("forward", "stepwise_monotonic", "gmm"):
        mean_positions = peaks
        assert all(b >= a - 1 for a, b in zip(mean_positions, mean_positions[1:]))


def test_mask_hiding_everything_is_an_error(toy):
    memory, mask, _ = toy
    mask = mask.clone()
    mask[1] = False
    attn = build_attention(attention_config("location_sensitive"), DQ, DM)
    with pytest.raises(TTSError, match="hides every encoder step"):
        attn.init_state(memory, mask)


@pytest.mark.parametrize("start", [False, True])
def test_start_on_first_token_sets_the_initial_alignment(start, toy):
    memory, mask, _ = toy
    attn = build_attention(attention_config("location_sensitive", start_on_first_token=start), DQ, DM)
    state = attn.init_state(memory, mask)
    expected = torch.zeros(B, T)
    if start:
        expected[:, 0] = 1.0
    assert torch.equal(state.weights, expected) and torch.equal(state.cumulative, expected)


def test_local_attention_stays_in_its_window(toy):
    memory, mask, _ = toy
    for kind in ("luong_local_p", "luong_local_m"):
        attn = build_attention(attention_config(kind, attention_dim=16, window=2), DQ, DM).eval()
        state = attn.init_state(memory, mask)
        previous = state.weights.argmax(dim=1)
        for _ in range(5):
            _, weights, state = attn(torch.randn(B, DQ), state)
            support = [torch.nonzero(w).flatten() for w in weights]
            assert all(len(s) <= 5 and int(s.max() - s.min()) <= 4 for s in support), kind  # 2·D + 1 positions
            if kind == "luong_local_m":  # from the previous step's peak to D past it: never back
                assert all(int(s.min()) >= int(p) and int(s.max()) <= int(p) + 2 for s, p in zip(support, previous))
            previous = weights.argmax(dim=1)


def test_local_p_advances_its_centre_from_the_first_token(toy):
    """local-p's centre starts on token 0 and moves on by D·σ(·) a step (never back), half a token a
    step before training, and stops on the last token; its weights sit around it."""
    memory, mask, lengths = toy
    attn = build_attention(attention_config("luong_local_p", attention_dim=16, window=2), DQ, DM).eval()
    state = attn.init_state(memory, mask)
    centres = []
    with torch.no_grad():
        attn.position[2].weight.fill_(0.0)  # the advance is then the initial one, whatever the query
        for _ in range(3 * T):
            _, weights, state = attn(torch.randn(B, DQ), state)
            centres.append(state.centre[:, 0])
            positions = (weights * torch.arange(T)).sum(dim=1)
            assert bool(((positions - centres[-1]).abs() <= 2).all())  # within the window's half-width
    last = (lengths - 1).float()
    for step, centre in enumerate(centres, 1):
        torch.testing.assert_close(centre, torch.minimum(torch.full_like(last, 0.5 * step), last))


def test_hard_attention_is_one_hot_with_a_straight_through_gradient(toy):
    memory, mask, _ = toy
    attn = build_attention(attention_config("hard", attention_dim=16, temperature=[2.0, 0.5],
                                           anneal_steps=100), DQ, DM)
    state = attn.init_state(memory, mask)
    query = torch.randn(B, DQ, requires_grad=True)
    _, weights, _ = attn(query, state)
    assert bool(((weights == 0) | (weights == 1)).all()) and bool((weights.sum(dim=1) == 1).all())
    (weights * torch.randn_like(weights)).sum().backward()
    assert query.grad is not None and float(query.grad.abs().sum()) > 0  # the soft sample's gradient
    attn.schedule(0), attn.schedule(50)
    assert attn.temperature == pytest.approx(1.0)  # halfway from 2 to 0.5 on a log scale
    attn.schedule(1000)
    assert attn.temperature == pytest.approx(0.5)
    attn.eval()
    _, first, _ = attn(query.detach(), state)
    _, second, _ = attn(query.detach(), state)
    assert torch.equal(first, second)  # inference: the argmax, no sampling


@pytest.mark.parametrize("bias, moved", [(1.0, 0.27), (3.5, 0.03)])
def test_stepwise_monotonic_energy_bias_sets_how_likely_a_step_stays(toy, bias, moved):
    memory, mask, _ = toy
    attn = build_attention(attention_config("stepwise_monotonic", attention_dim=16, sigmoid_noise=0.0,
                                           energy_bias=bias), DQ, DM)
    assert attn.energy_bias.item() == bias
    with torch.no_grad():  # zero energies: the stay probability is σ(bias) alone
        attn.v.weight.zero_()
    state = attn.init_state(memory, mask)
    _, weights, _ = attn(torch.zeros(B, DQ), state)
    assert weights[0, 1].item() == pytest.approx(moved, abs=0.005)  # 1 − σ(bias) of the mass moves on


def test_dynamic_convolution_scores_as_battenberg_et_al_write_them(toy):
    """Each item's dynamic filters applied as a product with its sliding windows equal the paper's
    convolutions: e_j = vᵀ tanh(W f_j + U g_j + b) + log p_j, with f = F * α, g = G(s) * α (each
    item's own filters) and p = P * α (causal)."""
    from torch.nn import functional as F

    memory, mask, _ = toy
    attn = build_attention(attention_config("dynamic_convolution", attention_dim=16, dynamic_kernel=9), DQ, DM).eval()
    previous = torch.softmax(torch.randn(B, T).masked_fill(~mask, -1e9), dim=1)
    state = dataclasses.replace(attn.init_state(memory, mask), weights=previous)
    query = torch.randn(B, DQ)
    c = attn.config
    static = attn.static_dense(F.conv1d(previous.unsqueeze(1), attn.static_conv.weight,
                                        padding=(c.static_kernel - 1) // 2).transpose(1, 2))
    filters = attn.dynamic_filters(query).view(B, c.dynamic_filters, 1, c.dynamic_kernel)
    dynamic = attn.dynamic_dense(torch.stack([F.conv1d(previous[i].view(1, 1, T), filters[i],
                                                       padding=(c.dynamic_kernel - 1) // 2)[0]
                                              for i in range(B)]).transpose(1, 2))
    prior = F.conv1d(F.pad(previous.unsqueeze(1), (c.prior_length - 1, 0)), attn.prior_filter).squeeze(1)
    energies = attn.v(torch.tanh(static + dynamic)).squeeze(-1) + torch.log(prior.clamp(min=1e-6))
    expected = torch.softmax(energies.masked_fill(~mask, float("-inf")), dim=1)
    weights, _ = attn.align(query, state, mask)
    torch.testing.assert_close(weights, expected, atol=1e-6, rtol=1e-5)
