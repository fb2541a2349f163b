"""Pulling fine-tuned parameters back toward the warm start (``train.anchors``, L2-SP in the
decoupled form of AdamW's weight decay): after every optimizer step each anchored parameter moves
``lr · strength`` of its distance from its warm-start value back toward it, with the rate of the
optimizer group that holds it. The warm-start values travel in the training state of every
checkpoint, so a resumed run pulls toward the same point."""

from __future__ import annotations

import torch

from tts.config.training import WeightAnchor
from tts.errors import TTSError
from tts.training.module_paths import under

__all__ = ["AnchorPull"]


class AnchorPull:
    """The anchored parameters of a model, each with its warm-start value and strength."""

    def __init__(self, model: torch.nn.Module, rules: list[WeightAnchor], targets: dict[str, torch.Tensor]):
        self._parameters: dict[str, torch.nn.Parameter] = {}
        self._strengths: dict[str, float] = {}
        self.targets: dict[str, torch.Tensor] = {}
        longest_first = sorted(rules, key=lambda rule: -len(rule.prefix))
        for name, parameter in model.named_parameters():
            rule = next((r for r in longest_first if under(name, [r.prefix])), None)
            if rule is None or not parameter.requires_grad:
                continue
            if name not in targets:
                raise TTSError(f"the anchors' warm-start values lack {name}; resume from a checkpoint "
                               f"written with the same train.anchors")
            self._parameters[name] = parameter
            self._strengths[name] = rule.strength
            self.targets[name] = targets[name].detach().to(parameter.device, parameter.dtype).clone()
        self._names = {id(p): n for n, p in self._parameters.items()}
        for rule in rules:
            if not any(under(name, [rule.prefix]) for name in self._parameters):
                raise TTSError(f"config key 'train.anchors': no trained parameter lies under '{rule.prefix}' "
                               f"(a wrong module path, or train.freeze holds them); drop the entry")

    def check_rates(self, optimizer: torch.optim.Optimizer) -> None:
        """Refuse a pull that would overshoot the warm start (``lr · strength`` ≥ 1 at the base rate)."""
        for group in optimizer.param_groups:
            for parameter in group["params"]:
                name = self._name_of(parameter)
                if name is not None and group["lr"] * self._strengths[name] >= 1:
                    raise TTSError(f"config key 'train.anchors': {name} would move past its warm-start value "
                                   f"(lr {group['lr']:g} × strength {self._strengths[name]:g} ≥ 1); "
                                   f"lower the strength below {1 / group['lr']:g}")

    @torch.no_grad()
    def pull(self, optimizer: torch.optim.Optimizer) -> None:
        """One step's pull, at each parameter group's current learning rate."""
        for group in optimizer.param_groups:
            for parameter in group["params"]:
                name = self._name_of(parameter)
                if name is not None:
                    parameter.sub_(parameter - self.targets[name], alpha=group["lr"] * self._strengths[name])

    def distance(self) -> float:
        """The anchored parameters' root-mean-square distance from their warm-start values."""
        squares = sum(float((p.detach().float() - self.targets[n].float()).pow(2).sum())
                      for n, p in self._parameters.items())
        count = sum(p.numel() for p in self._parameters.values())
        return (squares / max(count, 1)) ** 0.5

    def _name_of(self, parameter: torch.Tensor) -> str | None:
        return self._names.get(id(parameter))
