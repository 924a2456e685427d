"""docs/migrations.md shows the files of examples/migrations; they must not drift apart.
(tests/test_docs.py runs the page, which runs the example with the alembic command.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOWN = re.compile(
    r"^```python\n# (?P<path>examples/migrations/\S+)\n(?P<code>.*?)^```", re.MULTILINE | re.DOTALL
)
BLOCKS = {m["path"]: m["code"] for m in SHOWN.finditer((ROOT / "docs" / "migrations.md").read_text())}


def test_the_page_shows_every_file_of_the_example():
    files = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "examples" / "migrations").rglob("*.py")
        if "__pycache__" not in path.parts
    )
    assert sorted(BLOCKS) == files


@pytest.mark.parametrize("path", sorted(BLOCKS))
def test_a_file_shown_is_the_file(path):
    assert BLOCKS[path] == (ROOT / path).read_text()
