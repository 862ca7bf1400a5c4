"""The package's layers, as docs/architecture.md draws them: every import inside liemech (at module
level or inside a function) goes to its own package or down the layers, never up; the method
families do not import each other; and the map names every package that exists."""

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "liemech"
ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"

LAYERS: list[list[str]] = [
    ["owned_compilation", "xla_options"],
    ["types", "jax_support"],
    ["numerics", "input_checks"],
    ["groups", "tableaux"],
    ["mechanics"],
    ["solvers"],
    ["methods"],
    ["run"],
    ["diagnostics", "testing", "interop"],
    ["plot"],
    ["systems", "multibody"],
    ["", "cli", "__main__"],
]
"""Bottom to top; "" is the package's own ``__init__`` (the re-exported public API)."""

FRONT_DOOR = {"", "cli", "__main__"}
SHARED_BY_METHODS = {"method", "compiled", "flat"}


def unit(module: str) -> str:
    """The top-level piece of liemech a dotted module belongs to ("" for liemech itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def rank(piece: str) -> int:
    for level, pieces in enumerate(LAYERS):
        if piece in pieces:
            return level
    raise AssertionError(f"liemech.{piece} is on no layer of the architecture map")


def modules() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        dotted = ".".join(("liemech", *path.relative_to(PACKAGE).with_suffix("").parts))
        found.append((dotted.removesuffix(".__init__"), ast.parse(path.read_text(), str(path))))
    return found


def imported(tree: ast.Module) -> list[str]:
    """Every module an import names, ``from a import b`` giving a.b too (b may be a module)."""
    named: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            named += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            named += [alias.name for alias in node.names]
    return named


def imports(tree: ast.Module) -> list[str]:
    """Every liemech module an import names (``imported``)."""
    return [name for name in imported(tree) if name == "liemech" or name.startswith("liemech.")]


def test_no_import_runs_up_the_layers() -> None:
    upward = []
    for module, tree in modules():
        here = unit(module)
        for target in {unit(name) for name in imports(tree) if name != "liemech" or here in FRONT_DOOR}:
            same_package = target == here or {target, here} <= FRONT_DOOR
            if not same_package and rank(target) >= rank(here):
                upward.append(f"{module} imports {'liemech.' + target if target else 'liemech'}")
    assert not upward, "\n".join(upward)


def test_method_families_are_independent() -> None:
    crossing = []
    for module, tree in modules():
        parts = module.split(".")
        if parts[:2] != ["liemech", "methods"] or len(parts) < 4:
            continue
        family = parts[2]
        for name in imports(tree):
            target = name.split(".")
            if target[:2] == ["liemech", "methods"] and len(target) > 2:
                if target[2] not in (family, *SHARED_BY_METHODS):
                    crossing.append(f"{module} imports {name}")
    assert not crossing, "\n".join(crossing)


def test_every_package_is_on_the_map_and_the_map_is_documented() -> None:
    pieces = {path.name for path in PACKAGE.iterdir() if path.is_dir() and (path / "__init__.py").is_file()}
    pieces |= {path.stem for path in PACKAGE.glob("*.py") if path.stem != "__init__"}
    on_map = {piece for layer in LAYERS for piece in layer} - {""}
    assert pieces == on_map
    page = ARCHITECTURE.read_text()
    missing = [piece for piece in sorted(on_map) if f"`{piece}" not in page]
    assert not missing, f"docs/architecture.md does not name {missing}"



def test_no_private_jax() -> None:
    """liemech imports JAX's public modules only (``jax``, ``jax.numpy``, ``jax.extend``, …): a module
    under ``jax._src`` moves or vanishes between releases without notice."""
    private = [f"{module} imports {name}" for module, tree in modules() for name in imported(tree)
               if name.startswith(("jax._src", "jaxlib"))]
    assert not private, "\n".join(private)


def test_the_solver_layer_names_no_method() -> None:
    """Newton reports solver facts (``compiled_newton.Status``) and knows no method: a method maps
    them to its own failures and hints. No name of a method, a method family or a tableau appears
    in ``liemech/solvers``, code or prose."""
    import liemech.methods

    names = set(liemech.methods.__all__) | {"Lobatto", "Gauss", "Radau", "RATTLE", "Simpson", "Splitting"}
    names |= {path.name for path in (PACKAGE / "methods").iterdir() if path.is_dir() and path.name != "__pycache__"}
    word = re.compile(r"\b(" + "|".join(sorted(names)) + r")\b")
    named = [f"{path.relative_to(PACKAGE)} names {found}" for path in sorted((PACKAGE / "solvers").glob("*.py"))
             for found in sorted(set(word.findall(path.read_text())))]
    assert not named, "\n".join(named)
