"""Where a claim is checked against its authors' own code: a test module that compares reasonlab with fixtures that
code made (``tests/reference/``). The README's verdict table (``reasonlab.studies.tables``) says, per claim, how many
tests and against which repository and commit, read off the module itself."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

FIXTURES = "tests/reference/fixtures"


@dataclass(frozen=True)
class Reference:
    """The reference test modules of a study (``tests``, repository paths; each names the one reference repository
    and commit in its docstring) and the doc whose "Checked against the authors' code" section says what they
    check."""

    tests: tuple[str, ...]
    doc: str

    def read(self, root: Path) -> tuple[int, str, str]:
        """The number of test functions in the modules, the reference repository and the commit they name."""
        n, named = 0, set()
        for module in self.tests:
            tree = ast.parse((root / module).read_text())
            doc = ast.get_docstring(tree) or ""
            n += sum(isinstance(node, ast.FunctionDef) and node.name.startswith("test_") for node in tree.body)
            repo = re.search(r"``(\w+)``", doc)
            commit = re.search(r"\b[0-9a-f]{40}\b", doc)
            if not (repo and commit):
                raise ValueError(f"{module}: its docstring names no ``repository`` and 40-digit commit")
            named.add((repo.group(1), commit.group(0)))
        if len(named) != 1:
            raise ValueError(f"{', '.join(self.tests)}: they name {len(named)} repositories or commits, not one")
        return n, *named.pop()

    def inputs(self) -> list[str]:
        return [*self.tests, FIXTURES]


def reference_cell(root: Path, reference: Reference | None) -> str:
    """The README's "checked against the authors' code" cell of one row."""
    if reference is None:
        return "not checked"
    n, repo, commit = reference.read(root)
    return f"{n} tests on fixtures of `{repo}` {commit[:7]} ([what]({reference.doc}#checked-against-the-authors-code))"
