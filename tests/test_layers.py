"""The package's import graph: every import points down the layers of the README's Layout, the
leaves (metrics, plots) import nothing above text and audio, and no module imports itself back."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tts"
# bottom to top; a module may import its own layer's package and anything below
LAYERS = [
    ("tts.errors",),
    ("tts.config", "tts.devices", "tts.digest", "tts.fileio", "tts.package_data", "tts.threads"),
    ("tts.text", "tts.audio"),
    ("tts.data",),
    ("tts.vocoders",),
    ("tts.models",),
    ("tts.checkpoint",),
    ("tts.vocoder_loader",),
    ("tts.onnx",),
    ("tts.metrics", "tts.plots"),
    ("tts.training",),
    ("tts.synthesis",),
    ("tts.streaming",),
    ("tts.evaluation",),
    ("tts.serve",),
    ("tts.benchmarks",),
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
            assert rank(target) <= rank("tts.text"), \
                f"leaf {module} imports {target}: leaves use only text, audio and config"


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


COMMAND_HELPERS = {"tts.commands.options", "tts.commands.table"}


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if unit(m) == "tts.commands"))
def test_a_command_imports_no_other_command(module):
    others = {t for t in GRAPH[module] if unit(t) == "tts.commands" and t not in COMMAND_HELPERS | {module}}
    assert not others, f"{module} imports the command(s) {sorted(others)}: move what they share to the library"


def test_tests_recipes_and_egs_import_no_command():
    root = PACKAGE.parent
    files = [p for folder in ("tests", "recipes", "egs") for p in sorted((root / folder).rglob("*.py"))]
    assert len(files) > 30
    reaching = {str(p.relative_to(root)): sorted(t for t in imports(p) if unit(t) == "tts.commands")
                for p in files}
    assert not {f: t for f, t in reaching.items() if t}
    shells = [p for p in (root / "egs").rglob("*.sh") if "tts.commands" in p.read_text()]
    assert not shells, f"{shells} reach into tts.commands: call the library or the tts command"


def test_declaring_any_command_imports_nothing_heavy():
    """``tts --help`` and ``tts CMD --help`` parse arguments only: torch, matplotlib and the G2P's
    dependencies are imported when a command runs, not when its parser is built."""
    import subprocess
    import sys

    code = ("import sys; from tts import cli; from tts.commands.bench import BENCHMARKS; name = sys.argv[1]; "
            "argvs = [[name, b] for b in BENCHMARKS.commands] if name == 'bench' else [[name] if name != '-' else []]; "
            "[cli.build_parser(argv) for argv in argvs]; "
            "print(' '.join(m for m in ('torch', 'matplotlib', 'scipy', 'librosa', 'starlette', 'nltk', 'g2p_en') "
            "if m in sys.modules))")
    from tts.cli import COMMANDS

    for name in ["-", *COMMANDS.commands]:
        out = subprocess.run([sys.executable, "-c", code, name], capture_output=True, text=True, check=True,
                             cwd=PACKAGE.parent)
        assert out.stdout.strip() == "", f"declaring {name!r} imported {out.stdout.strip()}"
