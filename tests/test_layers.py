"""The package's import graph: every import points down the layers of the README's Layout, the
leaves (metrics, plots) import nothing above text and audio, and no module imports itself back."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tts"
# bottom to top; a module may import its own layer's package and anything below
LAYERS = [
    ("tts.errors",),
    ("tts.config", "tts.devices", "tts.fileio"),
    ("tts.text", "tts.audio"),
    ("tts.data",),
    ("tts.vocoders",),
    ("tts.models",),
    ("tts.checkpoint",),
    ("tts.onnx",),
    ("tts.metrics", "tts.plots"),
    ("tts.training",),
    ("tts.synthesis",),
    ("tts.streaming",),
    ("tts.evaluation",),
    ("tts.serve",),
    ("tts.commands",),
    ("tts.cli",),
]
LEAVES = ("tts.metrics", "tts.plots")


def unit(module: str) -> str:
    """The layer table's entry a module belongs to (``tts.models.attention.base`` → ``tts.models``)."""
    for names in LAYERS:
        for name in names:
            if module == name or module.startswith(name + "."):
                return name
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def rank(module: str) -> int:
    return next(i for i, names in enumerate(LAYERS) if unit(module) in names)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every ``tts`` module a file imports, at any depth (function-level imports included)."""
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("tts")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tts"):
            for alias in node.names:  # "from tts import checkpoint" imports the module tts.checkpoint
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if (PACKAGE.parent / candidate.replace(".", "/")).with_suffix(".py").is_file()
                          or (PACKAGE.parent / candidate.replace(".", "/")).is_dir() else node.module)
    return found - {"tts"}


GRAPH = {module_name(p): imports(p) for p in sorted(PACKAGE.rglob("*.py")) if module_name(p) != "tts"}


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_point_down(module):
    for target in GRAPH[module]:
        assert rank(target) <= rank(module), f"{module} (layer {unit(module)}) imports {target} from above"
        if rank(target) == rank(module):
            assert unit(target) == unit(module), f"{module} imports {target}, a sibling on its own layer"
        if unit(module) in LEAVES and unit(target) != unit(module):
            assert rank(target) <= rank("tts.text"), f"leaf {module} imports {target}: leaves use only text, audio and config"


def test_no_import_cycles():
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in GRAPH.get(module, ()):
            if state.get(target) == 1:
                cycle = path[path.index(target):] + [target] if target in path else [module, target]
                raise AssertionError("import cycle: " + " → ".join(cycle))
            if not state.get(target):
                visit(target, path + [target])
        state[module] = 2

    for module in sorted(GRAPH):
        if not state.get(module):
            visit(module, [module])


def test_the_check_catches_an_upward_import():
    assert rank("tts.synthesis") > rank("tts.models.tacotron2") and unit("tts.models.attention.base") == "tts.models"
    with pytest.raises(AssertionError, match="in no layer"):
        unit("tts.somewhere_new")
