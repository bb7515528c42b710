"""Every module's imports (parsed, not run; those inside functions too) follow the layer order of
``reasonlab.layers``, avoid its forbidden arrows, and form no circle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from reasonlab.layers import BASE, FORBIDDEN, KIND_IMPORTERS, LAYERS, layer_of

SRC = Path(__file__).parents[2] / "src"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted((SRC / "reasonlab").rglob("*.py"))}


def imports_of(name: str) -> set[str]:
    """The reasonlab modules ``name`` imports: ``from pkg import mod`` counts as ``pkg.mod`` when that is a
    module; relative imports are resolved."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for a in node.names:
                out.add(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base)
    return {m for m in out if m == "reasonlab" or m.startswith("reasonlab.")} - {name}


GRAPH = {name: imports_of(name) for name in MODULES}


def test_every_module_is_in_a_layer():
    for name in MODULES:
        layer_of(name)


def test_no_import_points_up():
    upward = [f"{a} ({LAYERS[layer_of(a)][0]}) -> {b} ({LAYERS[layer_of(b)][0]})"
              for a, targets in GRAPH.items() for b in targets if layer_of(b) > layer_of(a)]
    assert not upward, "\n".join(upward)


def test_no_forbidden_arrow():
    names = [n for n, _ in LAYERS]
    refused = {(names.index(a), names.index(b)) for a, b in FORBIDDEN}
    bad = [f"{a} -> {b}" for a, targets in GRAPH.items() for b in targets if (layer_of(a), layer_of(b)) in refused]
    assert not bad, "\n".join(bad)


def test_no_import_circle():
    """Tarjan's strongly connected components: any of more than one module is a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in GRAPH.get(v, ()):
            if w not in GRAPH:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in GRAPH:
        if v not in index:
            visit(v)
    assert not circles, circles


def test_the_known_circles_and_arrows_are_gone():
    assert "reasonlab.analysis.probes" not in GRAPH["reasonlab.kinds.anchor.probes"]
    assert "reasonlab.evaluate.scoring" not in GRAPH["reasonlab.evaluate.sequence"]
    assert not {m for m in GRAPH["reasonlab.store"] if m.startswith("reasonlab.config")}
    assert not any(m.startswith("reasonlab.analysis") for p in MODULES if p.startswith("reasonlab.plots")
                   for m in GRAPH[p])


def _long(files: list[Path]) -> list[Path]:
    return [path for path in files if len(path.read_text().splitlines()) > 400]


def test_no_module_of_the_package_is_over_400_lines():
    """A module over 400 lines is usually two things: it is split by meaning, not justified."""
    assert not _long(list(MODULES.values())), _long(list(MODULES.values()))


def test_a_script_benchmark_or_test_over_400_lines_says_why_in_its_docstring():
    """Outside the package a long file is a choice, said where it is read."""
    root = Path(__file__).resolve().parents[2]
    files = [p for d in ("scripts", "benchmarks", "tests") for p in (root / d).rglob("*.py")]
    unsaid = [str(path) for path in _long(files)
              if "\nOver 400 lines: " not in (ast.get_docstring(ast.parse(path.read_text())) or "")]
    assert files and not unsaid, unsaid


def is_kind(module: str) -> bool:
    return (module == "reasonlab.kinds" or module.startswith("reasonlab.kinds.")) and module != BASE


def test_no_generic_module_imports_a_kind():
    """Outside ``reasonlab.kinds`` only the studies import a kind's module, and the facade imports the package of
    kinds (its loader registers the built-ins); nothing imports another kind's module from within a kind. The base
    class ``Kind`` is no kind: its importers are the kinds, the studies and the facade."""
    bad = [f"{a} -> {b}" for a, targets in GRAPH.items() for b in targets
           if is_kind(b) and not is_kind(a) and not a.startswith(KIND_IMPORTERS[0] + ".")
           and (a, b) != (KIND_IMPORTERS[1], "reasonlab.kinds")]
    bad += [f"{a} -> {b}" for a, targets in GRAPH.items() for b in targets
            if is_kind(a) and a != "reasonlab.kinds" and is_kind(b) and a.split(".")[2] != b.split(".")[2]]
    assert not bad, "\n".join(bad)
    assert "reasonlab.kinds" in GRAPH["reasonlab"] and "reasonlab.studies" in GRAPH["reasonlab"]
    base_importers = {a for a, targets in GRAPH.items() if BASE in targets}
    assert base_importers and all(is_kind(a) or a.startswith(KIND_IMPORTERS[0] + ".") or a == KIND_IMPORTERS[1]
                                  for a in base_importers)


def test_a_kinds_module_takes_the_layer_of_its_role():
    names = [n for n, _ in LAYERS]
    assert names[layer_of("reasonlab.kinds.anchor.probes")] == "analysis"
    assert names[layer_of("reasonlab.kinds.modular.figures")] == "plots"
    assert names[layer_of("reasonlab.kinds.anchor")] == "kinds"
    kinds = [m for m in MODULES if is_kind(m) and m.count(".") == 3]
    assert kinds and all(names[layer_of(m)] != "kinds" for m in kinds)


def test_the_studies_generic_modules_import_no_study():
    """What every study speaks — its base class, its docs blocks, its rows of the results tables, the references
    and the tables that gather those rows — imports no study (nor the package, which registers the built-ins): the
    tables read the studies through the registry, so that a study added is one folder."""
    generic = {f"reasonlab.studies.{name}" for name in ("base", "sections", "claims", "reference", "tables")}
    assert generic <= set(MODULES)
    bad = [f"{a} -> {b}" for a in generic for b in GRAPH[a]
           if (b == "reasonlab.studies" or b.startswith("reasonlab.studies.")) and b not in generic]
    assert not bad, "\n".join(bad)


def test_the_registry_names_no_module():
    """The registry is the mechanism only: no "module:attr" string, no import of a higher layer (the checks of a
    registration's arguments import nothing but the errors)."""
    text = MODULES["reasonlab.registry"].read_text()
    strings = [node.value for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Constant)
               and isinstance(node.value, str)]
    assert not [s for s in strings if re.fullmatch(r"[\w.]+:[\w.]*", s)]
    assert GRAPH["reasonlab.registry"] <= {"reasonlab.errors", "reasonlab.arguments"}
    assert GRAPH["reasonlab.arguments"] <= {"reasonlab.errors"}


def test_the_scripts_and_benchmarks_import_what_the_package_has():
    """``scripts/`` and ``benchmarks/`` live outside the package, so a move inside it can leave them importing a
    module or a name that is gone (found once: three of them after the house moved by kind); every
    ``from reasonlab... import ...`` of theirs, those inside functions too, must resolve."""
    import importlib.util

    missing = []
    for path in sorted([*(SRC.parent / "scripts").glob("*.py"), *(SRC.parent / "benchmarks").glob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("reasonlab"):
                try:
                    module = importlib.import_module(node.module)
                except ImportError:
                    missing.append(f"{path.name}:{node.lineno} {node.module}")
                    continue
                missing += [f"{path.name}:{node.lineno} {node.module}.{a.name}" for a in node.names
                            if not hasattr(module, a.name) and importlib.util.find_spec(f"{node.module}.{a.name}")
                            is None]
    assert not missing, missing
