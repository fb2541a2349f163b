"""The typed-configuration machinery: dataclass fields with ranges, a strict loader from nested
dicts, ``key.path=value`` overrides and YAML reading and writing.

Every option has a default. Unknown keys, wrong types, values outside a field's documented range
and names outside an enumerated choice raise :class:`~tts.errors.ConfigError` naming the
offending key. A section whose fields depend on a name (an attention mechanism's settings depend
on its ``kind``) derives from :class:`Variant`: the name picks the dataclass, and keys of another
variant are unknown keys.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from dataclasses import field
from pathlib import Path
from typing import Any, ClassVar, Literal, Optional, TypeVar

import yaml

from tts.errors import ConfigError

T = TypeVar("T")


def bounded(default: Any, low: float | None = None, high: float | None = None, *, low_open: bool = False,
            high_open: bool = False) -> Any:
    """A dataclass field whose value must lie in ``[low, high]`` (``(`` / ``)`` where open); checked at load."""
    return field(default=default, metadata={"range": (low, high, low_open, high_open)})


Order = Optional[Literal["increasing", "non-increasing"]]


def bounded_list(default: list[Any], low: float | None = None, high: float | None = None, *, low_open: bool = False,
                 high_open: bool = False, length: int | None = None, min_length: int = 0,
                 order: Order = None) -> Any:
    """A list field whose every element must lie in ``[low, high]`` (``(`` / ``)`` where open), with
    exactly ``length`` (or at least ``min_length``) elements, in ``order`` when given; checked at load."""
    return field(default_factory=lambda: list(default),
                 metadata={"range": (low, high, low_open, high_open), "length": (length, min_length), "order": order})


def only_for(scope: str, declared: Any) -> Any:
    """A field (as :func:`bounded` or ``field`` make it) that only configs of ``scope`` may set: a
    section loaded for another scope (:func:`scoped`) refuses it, naming the key."""
    return field(default=declared.default, default_factory=declared.default_factory,
                 metadata={**declared.metadata, "only_for": scope})


def scoped(factory: Any, scope: str) -> Any:
    """A section field whose keys are loaded for ``scope`` (keys :func:`only_for` another scope are refused)."""
    return field(default_factory=factory, metadata={"scope": scope})


def choices(annotation: Any) -> tuple[str, ...]:
    """The allowed names of a ``Literal[...]`` option."""
    return typing.get_args(annotation)


class Variant:
    """Base of a section whose dataclass depends on its ``kind``: ``variants`` maps each name to the
    dataclass that holds that kind's settings (several names may share one)."""

    variants: ClassVar[dict[str, type]] = {}
    kind: str


def _range_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}")
    return " and ".join(parts)


def _in_range(value: Any, low: float | None, high: float | None, low_open: bool, high_open: bool) -> bool:
    if value is None:
        return True
    for v in value if isinstance(value, list) else [value]:
        if isinstance(v, float) and not math.isfinite(v):
            return False
        if low is not None and (v < low or (low_open and v == low)):
            return False
        if high is not None and (v > high or (high_open and v == high)):
            return False
    return True


_EXPONENT_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def _convert(value: Any, annotation: Any, key: str) -> Any:
    """Check ``value`` against a type annotation, converting where lossless (int → float)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _convert(value, inner, key)
    if origin is Literal:
        allowed = typing.get_args(annotation)
        if isinstance(value, bool) and ("on" if value else "off") in allowed:
            value = "on" if value else "off"  # YAML 1.1 reads a bare off / on as a boolean
        if value not in allowed:
            raise ConfigError.for_key(key, f"must be one of {', '.join(allowed)}, got {value!r}")
        return value
    if dataclasses.is_dataclass(annotation):
        if not isinstance(value, dict):
            raise ConfigError(f"config key '{key}' must be a mapping, got {type(value).__name__}")
        return build(annotation, value, key)  # type: ignore[arg-type]
    if origin is list:
        if isinstance(value, tuple):
            value = list(value)
        if not isinstance(value, list):
            raise ConfigError(f"config key '{key}' must be a list, got {type(value).__name__}")
        (inner,) = typing.get_args(annotation)
        return [_convert(v, inner, f"{key}[{i}]") for i, v in enumerate(value)]
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if annotation is float and isinstance(value, str) and _EXPONENT_FLOAT.fullmatch(value.strip()):
        return float(value)  # YAML 1.1 reads "5e-4" (no dot) as a string
    if annotation is int and isinstance(value, str) and _EXPONENT_FLOAT.fullmatch(value.strip()):
        number = float(value)
        if number.is_integer() and abs(number) < 2 ** 53:
            return int(number)  # "1e3" is a count too
    if annotation in (int, float, str, bool) and type(value) is not annotation:
        raise ConfigError(
            f"config key '{key}' must be {annotation.__name__}, got {value!r} ({type(value).__name__})"
        )
    return value


def _default(declared: dataclasses.Field) -> Any:
    return declared.default_factory() if declared.default_factory is not dataclasses.MISSING else declared.default


def _check_list(value: list[Any], length: tuple[int | None, int], order: Order, key: str) -> None:
    exact, at_least = length
    if exact is not None and len(value) != exact:
        raise ConfigError.for_key(key, f"must hold {exact} values, got {len(value)} ({value})")
    if len(value) < at_least:
        raise ConfigError.for_key(key, f"must hold at least {at_least} value(s), got {value}")
    pairs = list(zip(value, value[1:]))
    if order == "increasing" and not all(a < b for a, b in pairs):
        raise ConfigError.for_key(key, f"must increase from value to value, got {value}")
    if order == "non-increasing" and not all(a >= b for a, b in pairs):
        raise ConfigError.for_key(key, f"must not increase from value to value (from high to low), got {value}")


def _variant_class(cls: type, data: dict[str, Any], prefix: str) -> type:
    """The dataclass of a :class:`Variant` section named by ``data['kind']`` (or the default kind)."""
    kind = data.get("kind", next(f.default for f in dataclasses.fields(cls) if f.name == "kind"))
    if kind not in cls.variants:  # type: ignore[attr-defined]
        key = f"{prefix}.kind" if prefix else "kind"
        raise ConfigError(f"config key '{key}' must be one of {', '.join(sorted(cls.variants))}, "  # type: ignore[attr-defined]
                          f"got {kind!r}")
    return cls.variants[kind]  # type: ignore[attr-defined]


def build(cls: type[T], data: dict[str, Any], prefix: str = "", scope: str = "") -> T:
    """A ``cls`` dataclass from nested dicts, every key and value checked (``prefix`` names the
    section; ``scope``: the kind of config it is loaded for, see :func:`only_for`)."""
    if isinstance(cls, type) and issubclass(cls, Variant):
        cls = _variant_class(cls, data, prefix)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        full = f"{prefix}.{key}" if prefix else str(key)
        if key not in fields:
            raise ConfigError(f"unknown config key '{full}' (valid keys here: {', '.join(sorted(fields))})")
        metadata = fields[key].metadata
        hint: Any = hints[key]
        section = isinstance(hint, type) and dataclasses.is_dataclass(hint) and isinstance(value, dict)
        kwargs[key] = build(hint, value, full, metadata.get("scope", scope)) if section else _convert(value, hint, full)
        if scope and metadata.get("only_for", scope) != scope and kwargs[key] != _default(fields[key]):
            raise ConfigError.for_key(full, f"applies to {metadata['only_for']} models only: remove it from "
                                            f"this {scope} config")
        limits = metadata.get("range")
        if limits and not _in_range(kwargs[key], *limits):
            raise ConfigError.for_key(full, f"must be {_range_text(*limits)}, got {value!r}")
        if "length" in metadata and kwargs[key] is not None:
            _check_list(kwargs[key], metadata["length"], metadata["order"], full)
    try:
        return cls(**kwargs)
    except ConfigError as exc:
        raise exc.under(prefix) from None


def to_dict(config: Any) -> dict[str, Any]:
    """Plain nested dicts (YAML/JSON/checkpoint friendly)."""
    return dataclasses.asdict(config)


def replaced(section: T, prefix: str, changes: dict[str, Any]) -> T:
    """A copy of a section with some (possibly dotted, ``griffin_lim.iterations``) keys replaced,
    checked like a loaded file (``prefix`` names the section in error messages)."""
    data = to_dict(section)
    apply_overrides(data, [(key, value) for key, value in changes.items()])
    return build(type(section), data, prefix)


def parse_override(item: str) -> tuple[str, Any]:
    """``a.b.c=value`` (value parsed as YAML) → ``("a.b.c", value)``."""
    if "=" not in item:
        raise ConfigError(f"override '{item}' must look like key.path=value")
    path, raw = item.split("=", 1)
    try:
        return path.strip(), yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ConfigError(f"override '{item}': value is not valid YAML ({str(exc).splitlines()[0]})") from None


def apply_overrides(data: dict[str, Any], overrides: list[str] | list[tuple[str, Any]]) -> dict[str, Any]:
    """Apply ``a.b.c=value`` overrides (strings, or parsed ``(path, value)`` pairs) to nested dicts in place."""
    for item in overrides:
        path, value = parse_override(item) if isinstance(item, str) else item
        node = data
        parts = path.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override '{path}': '{part}' is not a section")
        node[parts[-1]] = value
    return data


def read_yaml(path: str | Path) -> dict[str, Any]:
    """A YAML file's top-level mapping; a missing, unreadable or non-mapping file is a :class:`ConfigError`."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist (see configs/ for examples)")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8 text") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    return data


def write_yaml(config: Any, path: str | Path) -> None:
    """Write a config dataclass as YAML (loadable again)."""
    Path(path).write_text(yaml.safe_dump(to_dict(config), sort_keys=False))
