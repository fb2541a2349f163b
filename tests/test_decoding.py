"""The shared decoding driver: a third model registered here decodes through it, and the
attention window behaves the same for every registered mechanism."""

import pytest
import torch
from conftest import tiny_config_dict
from torch import nn

from tts.config import AudioConfig, InferenceConfig, config_from_dict
from tts.models import AutoregressiveTTS, StepAttention, Tacotron2, model_class, register_model, registered_models
from tts.models.attention import available

AUDIO = AudioConfig(n_mels=4)


class ZeroPostnet(nn.Module):
    def forward(self, mel: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(mel)


@register_model("counting_test_model")
class CountingModel(AutoregressiveTTS):
    """Attends token ⌊t/2⌋ at step t (or the window's first position, when a window excludes it),
    emits frames equal to that position and fires its stop token on the last token (or, with
    ``stop_from`` set, from that step on: a stop token that fires too early)."""

    def __init__(self, config, n_symbols: int, audio: AudioConfig, go_frame: str = "zeros"):
        super().__init__(n_symbols, audio, reduction_factor=2, max_reduction_factor=2, go_frame=go_frame)
        self.mel_head = nn.Linear(2, self.n_mels * 2)  # type: ignore[misc]  # a stand-in for the real heads
        self.stop_head = nn.Linear(2, 1)  # type: ignore[misc]
        self.postnet = ZeroPostnet()  # type: ignore[assignment]
        with torch.no_grad():
            self.mel_head.weight.zero_()
            self.mel_head.weight[:, 0] = 1.0
            self.mel_head.bias.zero_()
            self.stop_head.weight.copy_(torch.tensor([[0.0, 20.0]]))
            self.stop_head.bias.fill_(-10.0)
        self.windows: list[torch.Tensor | None] = []
        self.stop_from: int | None = None

    @property
    def attention_name(self) -> str:
        return "counting"

    def encode_tokens(self, ids, mask):
        return mask.float().unsqueeze(-1)

    def init_decoder(self, memory, mask):
        return {"t": 0, "lengths": mask.sum(dim=1)}

    def decoder_step(self, frame, state, window):
        self.windows.append(window)
        t, lengths = state["t"], state["lengths"]
        target = torch.minimum(torch.full_like(lengths, t // 2), lengths - 1)
        if window is not None:
            target = torch.where(window[torch.arange(len(target)), target], target, window.float().argmax(dim=1))
        alignment = nn.functional.one_hot(target, int(lengths.max())).float()
        stop = (target == lengths - 1 if self.stop_from is None
                else torch.full_like(target, t >= self.stop_from, dtype=torch.bool))
        hidden = torch.stack([target.float(), stop.float()], dim=1)
        return hidden, StepAttention(alignment), {"t": t + 1, "lengths": lengths}


def counting(**overrides):
    return model_class("counting_test_model")(None, 20, AUDIO).eval()


def test_a_registered_model_decodes_through_the_shared_driver():
    assert "counting_test_model" in registered_models() and {"tacotron2", "transformer_tts"} <= set(registered_models())
    model = counting()
    ids = torch.tensor([[3, 4, 5, 1], [6, 1, 0, 0]])
    out = model.inference(ids, torch.tensor([4, 2]))
    # item 0 reaches its last token (3) at step 6, item 1 (token 1) at step 2: each stops on its own
    assert out.lengths.tolist() == [14, 6] and not bool(out.hit_limit.any())
    assert out.mel.shape == (2, 4, 14) and out.alignments.shape == (2, 7, 4) and out.attention_heads is None
    assert out.mel[0, 0].tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3]   # frames say the attended token
    assert bool((out.mel[1, :, 6:] == AUDIO.silence).all())                      # padding is silence
    assert out.alignments[0].argmax(dim=1).tolist() == [0, 0, 1, 1, 2, 2, 3]
    assert out.stop_probs.shape == (2, 7) and float(out.stop_probs[0, 6]) > 0.99
    limited = model.inference(ids, torch.tensor([4, 2]), settings=InferenceConfig(max_decoder_steps=3))
    assert limited.lengths.tolist() == [6, 6] and limited.hit_limit.tolist() == [True, False]
    with pytest.raises(Exception, match="outside the inventory"):
        model.inference(torch.tensor([[25]]))


def test_the_driver_hands_the_window_around_the_previous_peak_to_the_model():
    model = counting()
    ids = torch.tensor([[3, 4, 5, 6, 7, 1]])
    # the peak may never move: stuck on token 0
    out = model.inference(ids, settings=InferenceConfig(attention_window=[0, 0]))
    assert model.windows[0] is None and all(w.tolist() == [[True] + [False] * 5] for w in model.windows[1:])
    assert bool(out.hit_limit[0]) and set(out.alignments[0].argmax(dim=1).tolist()) == {0}
    model.windows.clear()
    model.inference(ids, settings=InferenceConfig(attention_window=[1, 2]))
    assert model.windows[3].tolist() == [[True, True, True, True, False, False]]  # peak 1 at step 2 → tokens 0..3


def test_the_first_token_is_held_through_the_lead_in_then_the_window_takes_over():
    model = counting()
    ids = torch.tensor([[3, 4, 5, 6, 7, 1]])
    out = model.inference(ids, settings=InferenceConfig(first_token_steps=4, attention_window=[1, 2]))
    first = [[True] + [False] * 5]
    assert [w.tolist() for w in model.windows[:4]] == [first] * 4       # steps 0-3 see only the first token
    assert model.windows[4].tolist() == [[True, True, True, False, False, False]]  # then around the peak (0)
    assert out.alignments[0, :4].argmax(dim=1).tolist() == [0, 0, 0, 0]
    model.windows.clear()
    model.inference(ids, settings=InferenceConfig(first_token_steps=2))   # no window after the hold
    assert [w.tolist() for w in model.windows[:2]] == [first] * 2 and all(w is None for w in model.windows[2:])


def test_safety_nets_hold_back_a_stop_token_that_fires_too_early():
    model = counting()
    model.stop_from = 1
    ids, lengths = torch.tensor([[3, 4, 5, 6, 1]]), torch.tensor([5])
    assert model.inference(ids, lengths).lengths.tolist() == [4]  # stops at step 2 with 2 of 5 tokens said
    # not before the peak reached the last (spoken) token: token 4 at step 8, or token 3 when told so
    assert model.inference(ids, lengths, settings=InferenceConfig(stop_after_last_token=True)).lengths.tolist() == [18]
    settings = InferenceConfig(stop_after_last_token=True)
    assert model.inference(ids, lengths, last_token=torch.tensor([3]), settings=settings).lengths.tolist() == [14]
    # not before ceil(5 tokens · 3 frames / r=2) = 8 steps
    assert model.inference(ids, lengths, settings=InferenceConfig(min_frames_per_token=3.0)).lengths.tolist() == [16]


@pytest.mark.parametrize("kind", available())
def test_attention_window_holds_for_every_mechanism(kind):
    torch.manual_seed(0)
    d = tiny_config_dict()
    d["model"]["tacotron2"]["attention"] = {"kind": kind, "attention_dim": 16,
                                            **({"transition_agent": True} if kind == "forward" else {})}
    model = Tacotron2(config_from_dict(d).model.tacotron2, n_symbols=130).eval()
    ids = torch.randint(3, 100, (2, 24))
    back, ahead = 1, 2
    settings = InferenceConfig(stop_threshold=1.0, max_decoder_steps=20, attention_window=[back, ahead])
    out = model.inference(ids, torch.tensor([24, 17]), settings=settings)
    for i, n in enumerate((24, 17)):
        weights = out.alignments[i, :, :n]
        torch.testing.assert_close(weights.sum(dim=1), torch.ones(weights.shape[0]), atol=1e-5, rtol=0)
        peaks = weights.argmax(dim=1)
        positions = torch.arange(n)
        outside = (positions < peaks[:-1, None] - back) | (positions > peaks[:-1, None] + ahead)
        assert float(weights[1:][outside].abs().max()) == 0.0, kind     # step t stays in step t-1's window
