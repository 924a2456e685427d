"""The documentation is executed, so it cannot drift from the library.

Each page in docs/ is a script: its ```python blocks run in order in one fresh module, against
the session's DynamoDB Local (the `dynamodb_local` fixture sets SA_DYNAMO_LOCAL_ENDPOINT, so the
pages' own `create_engine("dynamodb+local://")` reuses it). The rules a page follows:

- Opt-out: a block runs unless the last non-blank line before its fence is
  `<!-- no-run: REASON -->`. Use it only for code that needs real AWS; such a block is still
  compiled, so its syntax is checked.
- Checked output: a ```text block that directly follows a ```python block (only blank lines
  between) is that block's expected output: each of its non-blank lines must appear, in order,
  in what the block printed (echo=True log lines included, their timestamps and timings ignored).
- Scans are errors: a doc example that scans must say so with dynamodb_scan="allow".
- AWS is out of reach: AWS_* variables are cleared and metadata lookups disabled, so a block that
  would reach real AWS fails instead of using the developer's credentials.
- Every `sa-dynamo ...` line of a ```sh block must name a real command (run with --help).

`scripts/dev test` also builds the site with `mkdocs build --strict` before pytest; the build is
repeated here so `pytest tests/test_docs.py` alone checks everything about the docs.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import shlex
import subprocess
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))

_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*?)[ \t]*$")
# Anything that looks like the start of a Python fence, however written or indented.
_PYTHON_LOOKALIKE = re.compile(r"^[ \t>]*(`{3,}|~{3,})[ \t]*\{?[ \t]*\.?(python|py)\b", re.MULTILINE)
_NO_RUN = re.compile(r"^<!--\s*no-run:\s*(?P<reason>\S.*?)\s*-->$")
_ECHO_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ")
_ECHO_TIMING = re.compile(r"\[(generated in|cached since|no key) [\d.]+s")


@dataclass
class Block:
    info: str
    line: int  # line of the first code line in the page, 1-based
    code: str
    no_run: str | None = None  # the reason given in the opt-out marker
    output: Block | None = None  # the ```text block that follows, for a python block


def parse(text: str) -> list[Block]:
    """The fenced blocks of a Markdown page, with opt-out markers and expected outputs attached."""
    lines = text.splitlines()
    blocks: list[Block] = []
    previous_end = -1  # index of the closing fence of the previous block
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence, info = opening["fence"], opening["info"]
        end = i + 1
        while end < len(lines) and not (
            lines[end].startswith(fence[0] * len(fence)) and lines[end].rstrip().strip(fence[0]) == ""
        ):
            end += 1
        if end == len(lines):
            raise ValueError(f"line {i + 1}: the fence opened here is never closed")
        block = Block(info=info, line=i + 2, code="\n".join(lines[i + 1 : end]) + "\n")
        before = [line for line in lines[previous_end + 1 : i] if line.strip()]
        marker = _NO_RUN.match(before[-1].strip()) if before else None
        if marker:
            block.no_run = marker["reason"]
        if info == "text" and not before and blocks and blocks[-1].info == "python":
            blocks[-1].output = block
        blocks.append(block)
        previous_end = i = end
        i += 1
    python = [b for b in blocks if b.info == "python"]
    if len(_PYTHON_LOOKALIKE.findall(text)) != len(python):
        raise ValueError(
            "a Python fence is written in a form this test does not run (only ```python at the "
            "start of a line is); write it as ```python"
        )
    return python


def _normalised(line: str) -> str:
    return _ECHO_TIMING.sub(r"[\1 ...s", _ECHO_TIMESTAMP.sub("", line.rstrip()))


def check_output(printed: str, expected: str) -> str | None:
    """None if every expected line appears in the printed output in order, else what is missing."""
    remaining = iter([_normalised(line) for line in printed.splitlines()])
    for wanted in (_normalised(line) for line in expected.splitlines()):
        if wanted and wanted not in remaining:
            return wanted
    return None


def test_parse_finds_blocks_markers_and_outputs():
    """The harness must not pass a page by silently running nothing."""
    page = (
        "# T\n\n```python\nx = 1\nprint(x)\n```\n\n```text\n1\n```\n\n"
        "<!-- no-run: needs AWS -->\n```python\naws()\n```\n\n```sh\nls\n```\n"
    )
    first, second = parse(page)
    assert (first.line, first.code, first.no_run, first.output.code) == (4, "x = 1\nprint(x)\n", None, "1\n")
    assert (second.code, second.no_run, second.output) == ("aws()\n", "needs AWS", None)
    for hidden in (
        "```{.python}\nx\n```\n",
        "!!! note\n    ```python\n    x\n    ```\n",
    ):
        with pytest.raises(ValueError, match="does not run"):
            parse(hidden)


def test_output_lines_must_appear_in_order():
    printed = "2024-05-01 12:00:00,123 INFO sqlalchemy.engine.Engine [generated in 0.00021s] ('a',)\nx\ny\n"
    assert check_output(printed, "INFO sqlalchemy.engine.Engine [generated in 0.1s] ('a',)\n\ny\n") is None
    assert check_output(printed, "y\nx\n") == "x"
    assert check_output(printed, "z\n") == "z"


@pytest.fixture
def no_aws(monkeypatch, tmp_path):
    """Cut every route to real AWS credentials, so the docs can only talk to DynamoDB Local."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))


@contextlib.contextmanager
def _own_echo_handler() -> Iterator[io.StringIO]:
    """Capture stdout, including the echo=True log. SQLAlchemy adds its echo handler to the
    shared engine logger once per process, bound to the stdout of that moment; clearing the
    handlers for the page lets this page's first echo engine bind one to our buffer."""
    logger = logging.getLogger("sqlalchemy.engine.Engine")
    saved = logger.handlers[:]
    logger.handlers.clear()
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            yield buffer
    finally:
        logger.handlers[:] = saved
        print(buffer.getvalue())  # shown by pytest when the page fails


@pytest.mark.filterwarnings("error::sa_dynamo.exc.ScanWarning")
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_runs(page: Path, dynamodb_local, no_aws):
    """Run the page's Python blocks in order, as one script, and compare their checked outputs."""
    blocks = parse(page.read_text())
    runnable = [b for b in blocks if b.no_run is None]
    assert runnable, f"{page.name} has no runnable ```python block"
    module = types.ModuleType(f"docs_{page.stem}")
    module.__file__ = str(page)
    sys.modules[module.__name__] = module  # SQLAlchemy resolves ORM annotations through it
    try:
        with _own_echo_handler() as printed:
            for block in blocks:
                # Padded so tracebacks give the line numbers of the Markdown file.
                code = compile("\n" * (block.line - 1) + block.code, str(page), "exec")
                if block.no_run is not None:
                    continue
                start = printed.tell()
                exec(code, module.__dict__)
                if block.output is not None:
                    missing = check_output(printed.getvalue()[start:], block.output.code)
                    assert missing is None, (
                        f"{page.name}:{block.output.line}: the block at line {block.line} did not "
                        f"print {missing!r}"
                    )
    finally:
        for value in list(module.__dict__.values()):
            if isinstance(value, Engine):
                value.dispose()
        del sys.modules[module.__name__]


def _cli_lines(page: Path) -> list[str]:
    text = page.read_text()
    shell = re.findall(r"^```(?:sh|bash|console)\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    lines = [line.strip().removeprefix("$ ") for block in shell for line in block.splitlines()]
    return [line for line in lines if line.startswith("sa-dynamo ")]


CLI_LINES = [(page, line) for page in PAGES for line in _cli_lines(page)]


@pytest.mark.parametrize(("page", "line"), CLI_LINES, ids=[f"{p.name}: {line}" for p, line in CLI_LINES])
def test_cli_lines_name_real_commands(page: Path, line: str):
    """argparse reads the words in order, so an unknown command or bad option value fails
    before --help prints and exits 0; nothing is started."""
    args = shlex.split(line, comments=True)[1:]
    done = subprocess.run(
        [sys.executable, "-m", "sa_dynamo.cli", *args, "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0, f"{page.name}: `{line}` is not a valid command:\n{done.stderr}"


def test_mkdocs_build_strict(tmp_path):
    """Broken links, anchors and pages missing from the nav fail the build."""
    pytest.importorskip("mkdocs")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_option_the_package_reads_is_documented():
    """Every ``dynamodb_*`` option the package reads (a quoted name, a dialect keyword argument,
    a create_engine keyword) is in the option table of connecting.md."""
    import inspect

    from sa_dynamo.dialect.base import DynamoDBDialect

    names: set[str] = set()
    for path in [*Path("sa_dynamo").rglob("*.py"), *Path("alembic_like_migrations").rglob("*.py")]:
        names |= set(re.findall(r"[\"'](dynamodb_[a-z_]+)[\"']", path.read_text()))
    for _construct, arguments in DynamoDBDialect.construct_arguments:
        names |= {f"dynamodb_{name}" for name in arguments}
    names |= {p for p in inspect.signature(DynamoDBDialect.__init__).parameters if p.startswith("dynamodb_")}
    table = Path("docs/connecting.md").read_text().partition("## Every option")[2]
    assert {"dynamodb_scan", "dynamodb_index", "dynamodb_remove", "dynamodb_key"} <= names
    assert sorted(n for n in names if f"`{n}" not in table and f", `{n}`" not in table) == []
