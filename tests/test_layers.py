"""The package's imports run one way: no circle of modules, no import upward across the layers
(orm -> dialect -> dbapi; the driver imports nothing of the rest), and no module takes another
module's underscored names. Read from the source, TYPE_CHECKING imports included: a type-only
import is a real dependency of the reader's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("sa_dynamo", "alembic_like_migrations")

# (importer prefix, imported prefix): arrows that run upward. A prefix ending in "." is a package.
UPWARD = [
    ("sa_dynamo.dbapi.", "sa_dynamo."),  # the driver knows nothing of SQLAlchemy or the dialect
    ("sa_dynamo.dialect.", "sa_dynamo.orm."),
    ("sa_dynamo.dialect.", "sa_dynamo.pagination"),
    ("sa_dynamo.dialect.", "sa_dynamo.transaction"),
    ("sa_dynamo.dialect.", "sa_dynamo.check"),
    ("sa_dynamo.dialect.", "sa_dynamo.cli"),
    ("sa_dynamo.sql_text.", "sa_dynamo.dialect."),
    ("sa_dynamo.sql_text.", "sa_dynamo.orm."),
    ("sa_dynamo.orm.", "sa_dynamo.check"),
    ("sa_dynamo.orm.", "sa_dynamo.cli"),
    ("sa_dynamo.plan", "sa_dynamo.dialect."),
    ("sa_dynamo.plan", "sa_dynamo.orm."),
    ("sa_dynamo.exc", "sa_dynamo."),
    ("sa_dynamo.sqlalchemy_private", "sa_dynamo."),
]
# Each operator's one definition (dialect/operators.py) also gives SQL text its comparisons.
ALLOWED = [("sa_dynamo.sql_text.", "sa_dynamo.dialect.operators")]
# Within the driver's own package: the one face (dbapi/__init__.py) may be imported by nothing in it.
UPWARD += [("sa_dynamo.dbapi.", "sa_dynamo.dbapi")]
# SQLAlchemy's private names are read in one module only (docs/private-api.md).
PRIVATE_READER = "sa_dynamo.sqlalchemy_private"


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _resolve(importer: str, level: int, module: str | None) -> str:
    base = importer.split(".")
    base = base if _is_package(importer) else base[:-1]
    base = base[: len(base) - (level - 1)] if level else []
    return ".".join([*base, *([module] if module else [])])


def imports_of(name: str, source: str | None = None) -> list[tuple[str, list[str]]]:
    """(module imported, names taken from it) for every import of the module (its ``source``),
    at any depth."""
    tree = ast.parse(MODULES[name].read_text() if source is None else source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(name, node.level, node.module) if node.level else node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                found.append((submodule, []) if submodule in MODULES else (target, [alias.name]))
    return [(target, taken) for target, taken in found if target.split(".")[0] in PACKAGES]


def _matches(name: str, prefix: str) -> bool:
    return name.startswith(prefix) if prefix.endswith(".") else name == prefix


def test_no_import_runs_upward():
    upward = sorted(
        f"{importer} -> {target}"
        for importer in MODULES
        for target, _ in imports_of(importer)
        for low, high in UPWARD
        if _matches(importer, low)
        and _matches(target, high)
        and not _matches(target, low)
        and not any(_matches(importer, a) and _matches(target, b) for a, b in ALLOWED)
    )
    assert upward == []


def test_no_module_takes_anothers_underscored_names():
    taken = sorted(
        f"{importer} takes {name} from {target}"
        for importer in MODULES
        for target, names in imports_of(importer)
        for name in names
        if name.startswith("_") and not name.startswith("__")
    )
    assert taken == []


def test_no_module_reads_anothers_underscored_attributes():
    """``module._name`` for a module of the package imported as ``module``."""
    read = []
    for importer, path in MODULES.items():
        tree = ast.parse(path.read_text())
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                target = _resolve(importer, node.level, node.module)
                aliases |= {a.asname or a.name: f"{target}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                aliases |= {a.asname or a.name: a.name for a in node.names}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and aliases.get(node.value.id) in MODULES
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                read.append(f"{importer} reads {aliases[node.value.id]}.{node.attr}")
    assert sorted(read) == []


def test_no_circle_of_modules():
    graph = {name: {t for t, _ in imports_of(name) if t in MODULES and t != name} for name in MODULES}
    # a package's face imports its own rooms to hand their names on: not an arrow back
    graph = {
        name: {t for t in targets if not (_is_package(t) and name.startswith(t + "."))}
        for name, targets in graph.items()
    }
    circles = []
    state: dict[str, int] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                circles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(MODULES):
        if name not in state:
            visit(name, [name])
    assert circles == []


@pytest.mark.parametrize(
    ("importer", "source", "found"),
    [
        ("sa_dynamo.dbapi.buffer", "from . import _x", ("sa_dynamo.dbapi", ["_x"])),
        ("sa_dynamo.dbapi.buffer", "from .batch import read", ("sa_dynamo.dbapi.batch", ["read"])),
        ("sa_dynamo.dbapi", "from .transport import botocore", ("sa_dynamo.dbapi.transport.botocore", [])),
        (
            "sa_dynamo.dialect.base",
            "from ..dbapi import control_plane",
            ("sa_dynamo.dbapi.control_plane", []),
        ),
        ("sa_dynamo.dialect.base", "import sqlalchemy.orm", None),
    ],
)
def test_the_reader_resolves_relative_imports(importer, source, found):
    """The checks above are only as good as this reading of an import."""
    assert imports_of(importer, source) == ([found] if found else [])
