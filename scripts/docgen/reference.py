"""What each study is checked against in its authors' own code, read off the test modules that compare reasonlab
with fixtures that code made (``tests/reference/``): the README's column says how many tests and where they are."""

from __future__ import annotations

import ast
import re

from docgen.common import REPO

MODULES = {"anchor": "tests/reference/test_anchor_reference.py", "modular": "tests/reference/test_modular_reference.py"}
DOCS = {"anchor": "docs/anchor-composition.md", "modular": "docs/modular-icl.md"}


def reference_tests(study: str) -> tuple[int, str, str]:
    """The number of test functions in ``study``'s module, the reference repository and commit its docstring names."""
    tree = ast.parse((REPO / MODULES[study]).read_text())
    doc = ast.get_docstring(tree) or ""
    n = sum(isinstance(node, ast.FunctionDef) and node.name.startswith("test_") for node in tree.body)
    repo = re.search(r"``(\w+)``", doc)
    commit = re.search(r"\b[0-9a-f]{40}\b", doc)
    if not (repo and commit):
        raise ValueError(f"{MODULES[study]}: its docstring names no ``repository`` and 40-digit commit")
    return n, repo.group(1), commit.group(0)


def reference_cell(study: str | None) -> str:
    """The README's "checked against the authors' code" cell of one row."""
    if study is None:
        return "not checked"
    n, repo, commit = reference_tests(study)
    return f"{n} tests on fixtures of `{repo}` {commit[:7]} ([what]({DOCS[study]}#checked-against-the-authors-code))"


def reference_inputs() -> list[str]:
    return [*MODULES.values(), "tests/reference/fixtures"]
