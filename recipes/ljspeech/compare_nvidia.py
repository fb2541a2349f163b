#!/usr/bin/env python3
"""Check that configs/tacotron2_nvidia.yaml is NVIDIA/tacotron2's model and loss.

    python recipes/ljspeech/compare_nvidia.py --nvidia-src /path/to/NVIDIA/tacotron2 [--json out.json]

Builds NVIDIA's Tacotron2 from its own sources (its hparams.py defaults, read without
tensorflow) and ours from the config, copies NVIDIA's initial weights into ours through the
name mapping below, runs one teacher-forced batch with padding through both (train mode,
dropout switched off in both so the comparison is deterministic), and prints the largest
differences of every output, of the loss and of every parameter's gradient, as one JSON.
NVIDIA's code is imported only here, from the folder given; the package and its tests never do.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import torch
from torch.nn import functional as F

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tts.config import load_config  # noqa: E402
from tts.data import Batch  # noqa: E402
from tts.models import build_model  # noqa: E402
from tts.training.losses import TTSLoss  # noqa: E402


def nvidia_modules(src: Path) -> SimpleNamespace:
    """NVIDIA's model, loss and hparams, imported from ``src`` as they are on disk."""
    if not (src / "model.py").is_file():
        raise SystemExit(f"error: {src} has no model.py: give a NVIDIA/tacotron2 checkout as --nvidia-src")
    sys.path.insert(0, str(src))
    warnings.filterwarnings("ignore", category=SyntaxWarning)  # their text/__init__.py
    utils = importlib.import_module("utils")

    def mask_from_lengths(lengths: torch.Tensor) -> torch.Tensor:  # theirs builds a torch.cuda tensor
        return torch.arange(int(lengths.max()), device=lengths.device)[None] < lengths[:, None]

    setattr(utils, "get_mask_from_lengths", mask_from_lengths)
    model = importlib.import_module("model")
    setattr(model, "get_mask_from_lengths", mask_from_lengths)
    tree = ast.parse((src / "hparams.py").read_text())
    call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "HParams")
    values: dict[str, object] = {}
    for keyword in call.keywords:  # hparams.py needs tensorflow to run; its defaults are literals
        assert keyword.arg is not None
        try:
            values[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            values[keyword.arg] = len(importlib.import_module("text.symbols").symbols)  # n_symbols=len(symbols)
    return SimpleNamespace(model=model, loss=importlib.import_module("loss_function"),
                           hparams=SimpleNamespace(**values))


def map_name(name: str) -> str:
    """NVIDIA's parameter name → ours."""
    rules = [
        ("embedding.weight", "encoder.embedding.weight"),
        ("decoder.attention_layer.location_layer.location_conv.conv.", "decoder.attention.location_layer.conv."),
        ("decoder.attention_layer.location_layer.location_dense.linear_layer.", "decoder.attention.location_layer.dense."),
        ("decoder.attention_layer.", "decoder.attention."),
        ("decoder.linear_projection.linear_layer.", "decoder.mel_proj."),
        ("decoder.gate_layer.linear_layer.", "decoder.stop_proj."),
        (".linear_layer.", "."),
    ]
    for old, new in rules:
        name = name.replace(old, new)
    for prefix, ours in (("encoder.convolutions.", "encoder.convs."), ("postnet.convolutions.", "postnet.blocks.")):
        if name.startswith(prefix):
            index, layer, rest = name[len(prefix):].split(".", 2)
            name = f"{ours}{index}.{'conv' if layer == '0' else 'norm'}.{rest.removeprefix('conv.')}"
    return name


def padded_batch(n_symbols: int, n_mels: int, seed: int = 1234) -> tuple:
    """Four utterances with text and mel padding, zero-padded like TextMelCollate."""
    g = torch.Generator().manual_seed(seed)
    text_lengths, mel_lengths = torch.tensor([57, 45, 38, 21]), torch.tensor([190, 233, 151, 96])
    ids = torch.zeros(4, 57, dtype=torch.long)
    mels, gates = torch.zeros(4, n_mels, 233), torch.zeros(4, 233)
    for i, (tl, ml) in enumerate(zip(text_lengths.tolist(), mel_lengths.tolist())):
        ids[i, :tl] = torch.randint(1, n_symbols, (tl,), generator=g)
        mels[i, :, :ml] = torch.randn(n_mels, ml, generator=g) * 2.0 - 5.0
        gates[i, ml - 1:] = 1.0
    return ids, text_lengths, mels, gates, mel_lengths


def compare(src: Path, config_path: Path) -> dict:
    torch.manual_seed(1234)
    nv = nvidia_modules(src)
    hp = nv.hparams
    theirs = nv.model.Tacotron2(hp).train()
    config = load_config(config_path)
    ours = build_model(config.model, hp.n_symbols, config.audio).train()
    mapped = {map_name(k): v for k, v in theirs.state_dict().items()}
    missing = sorted(set(ours.state_dict()) - set(mapped))
    extra = sorted(set(mapped) - set(ours.state_dict()))
    if missing or extra:
        raise SystemExit(f"error: the parameters differ: ours only {missing[:5]}, NVIDIA's only {extra[:5]}")
    ours.load_state_dict(mapped)

    ids, text_lengths, mels, gates, mel_lengths = padded_batch(hp.n_symbols, hp.n_mel_channels)
    dropout = F.dropout
    F.dropout = lambda x, *args, **kwargs: x  # both implementations call it: off for a deterministic comparison
    try:
        x, y = theirs.parse_batch((ids, text_lengths, mels, gates, mel_lengths))
        mel_t, post_t, gate_t, align_t = theirs(x)
        loss_t = nv.loss.Tacotron2Loss()((mel_t, post_t, gate_t, align_t), y)
        batch = Batch(ids, text_lengths, mels, mel_lengths, gates, [str(i) for i in range(4)])
        out = ours(batch)
        loss_o = TTSLoss(config.loss)(out, batch)["loss"]
    finally:
        F.dropout = dropout
    loss_t.backward()
    loss_o.backward()

    def worst(a: torch.Tensor, b: torch.Tensor) -> float:
        return float((a - b).abs().max())

    real = (torch.arange(mels.shape[2])[None] < mel_lengths[:, None])
    result = {
        "nvidia_revision": (src / "REVISION").read_text().strip() if (src / "REVISION").is_file() else None,
        "config": str(config_path.relative_to(ROOT)) if config_path.is_relative_to(ROOT) else str(config_path),
        "batch": {"text_lengths": text_lengths.tolist(), "mel_lengths": mel_lengths.tolist()},
        "parameters": sum(p.numel() for p in ours.parameters()),
        "max_abs_difference": {
            "mel_before_postnet": worst(mel_t.detach()[real[:, None].expand_as(mel_t)],
                                        out.mel_before.detach()[real[:, None].expand_as(mel_t)]),
            "mel_after_postnet": worst(post_t.detach()[real[:, None].expand_as(post_t)],
                                       out.mel_after.detach()[real[:, None].expand_as(post_t)]),
            "stop_logits": worst(gate_t.detach()[real], out.stop_logits.detach()[real]),
            "alignments": worst(align_t.detach(), out.alignments.detach()),
            "loss": abs(loss_t.item() - loss_o.item()),
        },
        "loss": {"nvidia": loss_t.item(), "ours": loss_o.item()},
    }
    grads = {map_name(k): p.grad for k, p in theirs.named_parameters() if p.grad is not None}
    relative = {name: worst(grads[name], p.grad) / max(float(grads[name].abs().max()), 1e-12)
                for name, p in ours.named_parameters() if p.grad is not None}
    # NVIDIA's parse_output zeroes the padded frames of mel_outputs through .data, in place, after the
    # postnet has saved that tensor for its backward pass: the first postnet convolution's weight
    # gradient is then computed from the zeroed input. Ours is the gradient of the loss as written.
    quirk = "postnet.blocks.0.conv.weight"
    others = {name: value for name, value in relative.items() if name != quirk}
    name = max(others, key=lambda k: others[k])
    result["gradients"] = {"parameters_compared": len(relative),
                           "largest_relative_difference": {"parameter": name, "value": others[name]},
                           f"{quirk} (NVIDIA's in-place masking, see the comment)": relative[quirk]}
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nvidia-src", type=Path, required=True, help="a NVIDIA/tacotron2 checkout (model.py ...)")
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "tacotron2_nvidia.yaml")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args()
    torch.set_num_threads(2)
    result = compare(args.nvidia_src.resolve(), args.config.resolve())
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
