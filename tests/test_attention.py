import pytest
import torch

from tts.config import AttentionConfig
from tts.errors import TTSError
from tts.models.attention import available, build_attention

KINDS = ["content", "dynamic_convolution", "forward", "gmm", "hybrid", "location", "location_sensitive",
         "luong_concat", "luong_dot", "luong_general", "stepwise_monotonic"]
B, T, DQ, DM = 3, 11, 24, 20


def test_registry_has_every_mechanism():
    assert available() == sorted(KINDS)
    with pytest.raises(TTSError, match="unknown attention"):
        build_attention(AttentionConfig(kind="nope"), DQ, DM)


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
    attn = build_attention(AttentionConfig(kind=kind, attention_dim=16, transition_agent=True), DQ, DM)
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
    torch.testing.assert_close(state["cumulative"] - (attn.init_state(memory, mask)["cumulative"]),
                               torch.stack(all_weights).sum(0), atol=1e-5, rtol=0)
    torch.stack(contexts).sum().backward()
    grads = [p.grad for p in attn.parameters() if p.requires_grad]
    assert memory.grad is not None and memory.grad.abs().sum() > 0
    if training or kind not in ("stepwise_monotonic",):  # hard inference has no gradient to its energies
        assert grads and all(g is not None for g in grads)
        assert sum(float(g.abs().sum()) for g in grads) > 0


@pytest.mark.parametrize("kind", ["location_sensitive", "content", "luong_general", "forward", "stepwise_monotonic"])
def test_memory_projection_computed_once(kind, toy):
    """Memory-only projections happen in init_state, never per step."""
    memory, mask, _ = toy
    attn = build_attention(AttentionConfig(kind=kind, attention_dim=16), DQ, DM)
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
    attn = build_attention(AttentionConfig(kind=kind, attention_dim=16), DQ, DM).eval()
    state = attn.init_state(memory, mask)
    assert bool((state["weights"][:, 0] == 1).all())
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
    attn = build_attention(AttentionConfig(), DQ, DM)
    with pytest.raises(TTSError, match="hides every encoder step"):
        attn.init_state(memory, mask)


@pytest.mark.parametrize("start", [False, True])
def test_start_on_first_token_sets_the_initial_alignment(start, toy):
    memory, mask, _ = toy
    attn = build_attention(AttentionConfig(kind="location_sensitive", start_on_first_token=start), DQ, DM)
    state = attn.init_state(memory, mask)
    expected = torch.zeros(B, T)
    if start:
        expected[:, 0] = 1.0
    assert torch.equal(state["weights"], expected) and torch.equal(state["cumulative"], expected)
