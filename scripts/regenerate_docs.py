"""Regenerate the docs' figures and tables of numbers from the committed ``results/``, without training.

    python scripts/regenerate_docs.py            # draw every figure, rewrite every generated table in place
    python scripts/regenerate_docs.py --tables   # rewrite the tables only, drawing nothing (seconds)
    python scripts/regenerate_docs.py --check    # exit 1 on any drift (below); draws nothing unless --draw
    python scripts/regenerate_docs.py --pending  # what lacks committed inputs, with the command that commits them

A figure is a file under ``docs/figures/`` or an image a doc or the README shows; each has a generator, which
draws it with the package's own study and plot functions from files under ``results/``. A table is the text
between ``<!-- table: NAME -->`` and ``<!-- /table -->`` in a markdown file (or a whole generated file, such as
``results/anchor-trajectory/summary.md``), rebuilt from ``results/`` by the generator of that name. ``--check``
fails when a figure has no generator, a generator's inputs are missing, an image a doc shows does not exist, a
marker names no generator (or a generator's marker is gone), or a regenerated table differs from the committed
text; with ``--draw`` it also draws every figure into a scratch folder. A generator whose inputs are missing is named
with the command that trains and packs them (its ``command``), which ``--pending`` lists alone.

The generators are the sections of every registered study (``Study.sections``, ``reasonlab.studies.sections``)
and the generic tables: the README's verdict table and docs/results.md's tables, gathered from every study's claims
and findings (``reasonlab.studies.tables``), and docs/config.md, from the schema (``reasonlab.config.reference``).
This script merges them, so that ``--check`` sees the whole coverage in one place: each invocation reads the
repository once (``Docs`` over a ``Repository``, which holds what has been read, so that a table, a figure and the
results tables that read the same runs read them once), and only a rewrite may keep what a section measures beside a
committed run (``--check`` and ``--pending`` change nothing).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from reasonlab.config.reference import config_reference
from reasonlab.errors import UserError
from reasonlab.registry import studies
from reasonlab.studies import tables as results_tables
from reasonlab.studies.sections import FIGURES, Figures, Repository, Sections, Table

REPO = Path(__file__).resolve().parents[1]
TABLE = re.compile(r"<!-- table: (?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /table -->", re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\((?P<path>[^)\s]+\.(?:png|svg))\)")


def generic(repo: Repository) -> Sections:
    """The tables no study owns: the results tables (``reasonlab.studies.tables``) and docs/config.md, generated
    from the schema."""
    return [*results_tables.sections(repo),
            ("config-reference", Table("docs/config.md", lambda: ["src/reasonlab/config", "src/reasonlab/kinds"],
                                       config_reference, whole=True))]


class Docs:
    """The docs' generators over one reading of a repository: every section of every registered study, then the
    generic tables, as the figures and the tables by name (a name registered twice as a figure or twice as a table
    is refused), and the pages whose images and markers the coverage reads (the README and docs/)."""

    def __init__(self, repo: Repository) -> None:
        self.root = repo.root
        self.figures: dict[str, Figures] = {}
        self.tables: dict[str, Table] = {}
        for blocks in [*(study.sections(repo) for study in studies().values()), generic(repo)]:
            for name, block in blocks:
                registry = self.figures if isinstance(block, Figures) else self.tables
                assert name not in registry, f"{name} registered twice"
                registry[name] = block
        self.pages = ("README.md", *sorted(str(p.relative_to(self.root)) for p in (self.root / "docs").glob("*.md")))

    def _missing(self, paths: list[str]) -> list[str]:
        return [p for p in paths if not (self.root / p).exists()]

    def pending(self) -> list[str]:
        """Each generator whose inputs are not all committed: how many are missing and the command that commits
        them (for a generator that reads other generators' inputs, such as the results tables, those generators'
        names)."""
        generators = {**self.figures, **self.tables}
        missing = {name: self._missing(gen.inputs()) for name, gen in generators.items()}
        commands = {name: gen.command for name, gen in generators.items()}
        lines = []
        for name, paths in missing.items():
            if not paths:
                continue
            others: dict[str, str] = {}  # one generator per command, in registry order
            for other, theirs in missing.items():
                if commands[other] and other != name and set(theirs) & set(paths):
                    others.setdefault(commands[other], other)
            how = (f"to commit them: {commands[name]}" if commands[name] else f"committed by the commands of: "
                   f"{', '.join(others.values())}" if others else "no command recorded")
            lines.append(f"{name}: {len(paths)} input(s) missing from the repository (first: {paths[0]}); {how}")
        return lines

    def coverage(self, check: bool = True) -> list[str]:
        """Every problem that needs no drawing: figures without a generator, generators without inputs, images the
        docs show that no generator draws (or, when ``check``, that are not drawn yet), markers without a generator
        and generators without a marker."""
        root, problems = self.root, []
        outputs = {o for g in self.figures.values() for o in g.outputs}
        for png in sorted((root / FIGURES).iterdir()):
            if str(png.relative_to(root)) not in outputs:
                problems.append(f"{png.relative_to(root)}: no generator (no study's sections draw it)")
        problems += self.pending()
        for doc in self.pages:
            text = (root / doc).read_text()
            for m in IMAGE.finditer(text):
                target = str(((root / doc).parent / m["path"]).resolve().relative_to(root))
                if target not in outputs:
                    problems.append(f"{doc}: shows {m['path']}, which no generator draws")
                elif not (root / target).is_file() and check:  # else drawn by this very invocation
                    problems.append(f"{doc}: shows {m['path']}, which does not exist (run scripts/regenerate_docs.py)")
            problems += [f"{doc}: marker `{m['name']}` names no table generator" for m in TABLE.finditer(text)
                         if m["name"] not in self.tables]
        for name, table in self.tables.items():
            if not table.whole and name not in {m["name"] for m in TABLE.finditer((root / table.doc).read_text())}:
                problems.append(f"{table.doc}: no `<!-- table: {name} -->` … `<!-- /table -->` block")
        return problems

    def regenerate_tables(self, write: bool) -> list[str]:
        """Rebuild every table; write the docs when ``write``, else name each table whose text differs."""
        changed = []
        for doc in sorted({t.doc for t in self.tables.values()}):
            path = self.root / doc
            old = path.read_text()
            whole = [t for t in self.tables.values() if t.doc == doc and t.whole]
            if whole:
                new = whole[0].render()
            else:
                new = TABLE.sub(lambda m: f"<!-- table: {m['name']} -->\n{self.tables[m['name']].render()}"
                                          "<!-- /table -->", old)
            if new != old:
                changed.append(doc)
                if write:
                    path.write_text(new)
        return changed

    def draw_figures(self, into: Path | None) -> list[Path]:
        """Draw every generator's figures in a scratch folder, one call of each drawer (generators that share one,
        such as one sweep's figures, draw together); copy them into place (``into`` None) or under ``into`` (a check:
        the drawing works, nothing in the repository changes)."""
        by_drawer: dict[Callable[[Path], object], list[Figures]] = {}
        for gen in self.figures.values():
            by_drawer.setdefault(gen.draw, []).append(gen)
        written = []
        for draw, gens in by_drawer.items():
            with tempfile.TemporaryDirectory() as scratch:
                draw(Path(scratch))
                for target, made in (item for gen in gens for item in gen.outputs.items()):
                    dest = (into or self.root) / target
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(Path(scratch) / made, dest)
                    written.append(dest)
        return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a figure or table would drift")
    parser.add_argument("--draw", action="store_true", help="with --check: also draw every figure (scratch copy)")
    parser.add_argument("--pending", action="store_true",
                        help="list what lacks committed inputs, with the command that commits them")
    parser.add_argument("--tables", action="store_true", help="rewrite the tables only, drawing nothing (seconds)")
    args = parser.parse_args()
    try:
        if args.draw and not args.check:
            raise UserError("--draw goes with --check (without --check every figure is drawn anyway)")
        if args.tables and args.check:
            raise UserError("--tables rewrites the docs; --check only reads them: use one")
        docs = Docs(Repository(REPO, writes=not (args.check or args.pending)))
        if args.pending:
            print("\n".join(docs.pending()) or "nothing pending: every generator's inputs are committed")
            return 0
        problems = docs.coverage(args.check)
        if args.check:
            if not problems:
                problems += [f"{doc}: a generated table differs from results/ (run scripts/regenerate_docs.py)"
                             for doc in docs.regenerate_tables(write=False)]
            if not problems and args.draw:
                with tempfile.TemporaryDirectory() as scratch:
                    docs.draw_figures(Path(scratch))
            for p in problems:
                print(p, file=sys.stderr)
            print(f"{len(problems)} problem(s)" if problems else "docs match results/")
            return 1 if problems else 0
        if problems:
            raise UserError(problems[0] + (f" (and {len(problems) - 1} more; see --check)" if len(problems) > 1
                                           else ""))
        for path in docs.regenerate_tables(write=True):
            print(f"rewritten: {path}")
        for path in [] if args.tables else docs.draw_figures(None):
            print(f"drawn: {path.relative_to(REPO)}")
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
