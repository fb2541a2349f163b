"""Module paths: which parameters a ``train.freeze``, ``train.lr_scales`` or ``train.anchors`` entry names."""

from __future__ import annotations


def under(name: str, prefixes: list[str]) -> bool:
    """Whether a parameter or module ``name`` lies under one of the module paths ``prefixes``:
    ``decoder.attention`` holds ``decoder.attention.query.weight`` but not
    ``decoder.attention_rnn.weight_ih``."""
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)
