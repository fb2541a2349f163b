"""Configs written by earlier versions of this code, brought to today's layout.

Checkpoint format 2 (every config up to the split of this package) kept every attention
mechanism's settings in one flat section (``dca_*``, ``gmm_mixtures``, ``gumbel_*``, ...), the
postnet's as ``postnet_*`` fields of each model, and Griffin-Lim's as ``audio.griffin_lim_*`` and
``inference.griffin_lim_iters``. :func:`upgrade_v2` moves them where they live now.
:func:`upgrade_vocoder` moves a vocoder's discriminator settings, which were HiFi-GAN's
(``vocoder.hifigan.discriminator_*``) until a second generator kind shared them, to
``vocoder.discriminators``. :func:`upgrade_acoustic` moves Tacotron2's
``prenet_dropout_at_inference``, a model setting until decoding settings took it over, to
``inference.prenet_dropout``.
"""

from __future__ import annotations

from typing import Any

from tts.config.attention import ATTENTION_KINDS
from tts.config.schema import to_dict

#: flat attention keys of format 2 → today's names (within the mechanism's own settings)
_ATTENTION_RENAMES = {
    "location_filters": "filters", "location_kernel": "kernel", "gmm_mixtures": "mixtures",
    "dca_static_filters": "static_filters", "dca_static_kernel": "static_kernel",
    "dca_dynamic_filters": "dynamic_filters", "dca_dynamic_kernel": "dynamic_kernel",
    "dca_filter_hidden": "filter_hidden", "dca_prior_length": "prior_length", "dca_prior_alpha": "prior_alpha",
    "dca_prior_beta": "prior_beta", "local_window": "window", "gumbel_temperature": "temperature",
    "gumbel_anneal_steps": "anneal_steps",
}
_POSTNET_FIELDS = ("layers", "channels", "kernel_size", "dropout")
_GRIFFIN_LIM_FIELDS = ("momentum", "lookahead", "relaxation", "power")


def _upgrade_attention(section: dict[str, Any]) -> dict[str, Any]:
    """A format-2 attention section → the settings its ``kind`` reads (others' settings dropped)."""
    kind = section.get("kind", "location_sensitive")
    known = set(to_dict(ATTENTION_KINDS[kind]())) if kind in ATTENTION_KINDS else set()
    renamed = {_ATTENTION_RENAMES.get(key, key): value for key, value in section.items()}
    return {key: value for key, value in renamed.items() if key in known or key == "kind"}


def _upgrade_model(section: dict[str, Any]) -> None:
    postnet = {name: section.pop(f"postnet_{name}") for name in _POSTNET_FIELDS if f"postnet_{name}" in section}
    if postnet:
        section["postnet"] = postnet
    if isinstance(section.get("attention"), dict):
        section["attention"] = _upgrade_attention(section["attention"])


def upgrade_v2(config: dict[str, Any]) -> dict[str, Any]:
    """A format-2 config dict (acoustic or vocoder) in today's layout; changed in place and returned."""
    for section in (config.get("model") or {}).values():
        if isinstance(section, dict):
            _upgrade_model(section)
    audio, inference = config.get("audio"), config.get("inference")
    griffin_lim: dict[str, Any] = {}
    if isinstance(audio, dict):
        griffin_lim.update({name: audio.pop(f"griffin_lim_{name}") for name in _GRIFFIN_LIM_FIELDS
                            if f"griffin_lim_{name}" in audio})
    if isinstance(inference, dict):
        if "griffin_lim_iters" in inference:
            griffin_lim["iterations"] = inference.pop("griffin_lim_iters")
        if griffin_lim:
            inference["griffin_lim"] = griffin_lim
    return config


def upgrade_vocoder(config: dict[str, Any]) -> dict[str, Any]:
    """A vocoder config dict with ``vocoder.hifigan.discriminator_{periods,channels}`` → with
    ``vocoder.discriminators.{periods,channels}``; changed in place and returned (any other dict as it is)."""
    vocoder = config.get("vocoder")
    if not isinstance(vocoder, dict) or not isinstance(vocoder.get("hifigan"), dict):
        return config
    hifigan = vocoder["hifigan"]
    moved = {name: hifigan.pop(f"discriminator_{name}") for name in ("periods", "channels")
             if f"discriminator_{name}" in hifigan}
    if moved:
        vocoder["discriminators"] = {**moved, **(vocoder.get("discriminators") or {})}
    return config


def upgrade_acoustic(config: dict[str, Any]) -> dict[str, Any]:
    """An acoustic config dict with ``model.tacotron2.prenet_dropout_at_inference`` → with
    ``inference.prenet_dropout``; changed in place and returned (any other dict as it is)."""
    tacotron2 = (config.get("model") or {}).get("tacotron2") if isinstance(config.get("model"), dict) else None
    if isinstance(tacotron2, dict) and "prenet_dropout_at_inference" in tacotron2:
        value = tacotron2.pop("prenet_dropout_at_inference")
        inference = config.setdefault("inference", {})
        if isinstance(inference, dict):
            inference.setdefault("prenet_dropout", value)
    return config
