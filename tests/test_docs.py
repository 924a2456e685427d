"""The documentation is executed, so it cannot drift from the library.

Each page in docs/ is a script, run as a reader runs it: its ```python blocks, in order, in one
Python process started in an empty directory outside the repository, against the session's
DynamoDB Local (as the pages say, SA_DYNAMO_LOCAL_ENDPOINT points `dynamodb+local://` at a running
server, the one `sa-dynamo local start` would give). The rules a page follows:

- Opt-out: a block runs unless the last non-blank line before its fence is
  `<!-- no-run: REASON -->`. Use it only for code that needs real AWS; such a block is still
  compiled, so its syntax is checked.
- Files: a block (of any language) after the line **File:** `PATH` is a file the reader saves, as
  PATH in the working directory (e.g. an Alembic environment); it is written there before the
  page runs, and a Python one is compiled, not run as part of the page.
- Checked output: a ```text block that directly follows a ```python block (only blank lines
  between) is that block's expected output: each of its non-blank lines must appear, in order,
  in what the block printed (echo=True log lines included, their timestamps and timings ignored,
  and the time at the end of sa_dynamo's per-statement INFO line).
- Scans are errors: a doc example that scans must say so with dynamodb_scan="allow".
- AWS is out of reach: AWS_* variables are cleared and metadata lookups disabled, so a block that
  would reach real AWS fails instead of using the developer's credentials.
- Every `sa-dynamo ...` line of a ```sh block must name a real command (run with --help).

`scripts/dev test` also builds the site with `mkdocs build --strict` before pytest; the build is
repeated here so `pytest tests/test_docs.py` alone checks everything about the docs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))

_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*?)[ \t]*$")
# Anything that looks like the start of a Python fence, however written or indented.
_PYTHON_LOOKALIKE = re.compile(r"^[ \t>]*(`{3,}|~{3,})[ \t]*\{?[ \t]*\.?(python|py)\b", re.MULTILINE)
_NO_RUN = re.compile(r"^<!--\s*no-run:\s*(?P<reason>\S.*?)\s*-->$")
_FILE = re.compile(r"^\*\*File:\*\* `(?P<path>[\w./-]+)`$")
_ECHO_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ")
_ECHO_TIMING = re.compile(r"\[(generated in|cached since|no key) [\d.]+s")
_STATEMENT_TIME = re.compile(r", [\d,]+\.\d ms$")  # the end of sa_dynamo's per-statement INFO line


@dataclass
class Block:
    info: str
    line: int  # line of the first code line in the page, 1-based
    code: str
    no_run: str | None = None  # the reason given in the opt-out marker
    file: str | None = None  # where the reader saves the block, for a file block
    output: Block | None = None  # the ```text block that follows, for a python block


def parse(text: str) -> list[Block]:
    """The Python blocks of a Markdown page, with opt-out markers and expected outputs attached."""
    return [b for b in blocks_of(text) if b.info == "python" and b.file is None]


def files_of(text: str) -> list[Block]:
    """The blocks of a page that the reader saves as files."""
    return [b for b in blocks_of(text) if b.file is not None]


def blocks_of(text: str) -> list[Block]:
    """The fenced blocks of a Markdown page, with their markers and expected outputs attached."""
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
        saved = _FILE.match(before[-1].strip()) if before else None
        if saved:
            block.file = saved["path"]
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
    return blocks


def _normalised(line: str) -> str:
    line = _ECHO_TIMING.sub(r"[\1 ...s", _ECHO_TIMESTAMP.sub("", line.rstrip()))
    return _STATEMENT_TIME.sub(", ... ms", line)


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
        "<!-- no-run: needs AWS -->\n```python\naws()\n```\n\n```sh\nls\n```\n\n"
        "**File:** `env/models.py`\n```python\nx = 2\n```\n"
    )
    first, second = parse(page)
    assert (first.line, first.code, first.no_run, first.output.code) == (4, "x = 1\nprint(x)\n", None, "1\n")
    assert (second.code, second.no_run, second.output) == ("aws()\n", "needs AWS", None)
    ((saved),) = files_of(page)
    assert (saved.file, saved.code) == ("env/models.py", "x = 2\n")
    for hidden in (
        "```{.python}\nx\n```\n",
        "!!! note\n    ```python\n    x\n    ```\n",
    ):
        with pytest.raises(ValueError, match="does not run"):
            parse(hidden)


def test_a_page_runs_in_its_own_directory_and_process(tmp_path):
    """Each block's output is told apart, files are saved first, and a failing block fails the run."""
    page = tmp_path / "page.md"
    page.write_text(
        "**File:** `data/greeting.txt`\n\n```text\nhello\n```\n\n"
        "```python\nimport os\nprint(open('data/greeting.txt').read().strip(), os.getcwd())\n```\n\n"
        "```python\nprint(__name__)\nraise SystemExit(3)\n```\n"
    )
    directory = tmp_path / "reader"
    directory.mkdir()
    done, printed = run_page(page, directory, _without_aws(tmp_path))
    assert done.returncode == 3
    assert printed == [f"hello {directory}\n", "__main__\n"]


def test_output_lines_must_appear_in_order():
    printed = "2024-05-01 12:00:00,123 INFO sqlalchemy.engine.Engine [generated in 0.00021s] ('a',)\nx\ny\n"
    assert check_output(printed, "INFO sqlalchemy.engine.Engine [generated in 0.1s] ('a',)\n\ny\n") is None
    assert check_output(printed, "y\nx\n") == "x"
    assert check_output(printed, "z\n") == "z"


def _without_aws(tmp_path: Path) -> dict[str, str]:
    """The environment with every route to real AWS credentials cut, so that the docs can only
    talk to DynamoDB Local (and the pages' `dynamodb+local://` to the session's one)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("AWS_", "PYTHON"))}
    return env | {
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
    }


_MARK = "==== docs block {} ===="
# The page as one script: each block compiled under the page's name, padded so that tracebacks
# give the line numbers of the Markdown file, and run in the script's own globals.
_RUNNER = f"""
import json, sys, warnings

import sa_dynamo.exc


def _run_page(page, blocks, scope):
    warnings.simplefilter("error", sa_dynamo.exc.ScanWarning)  # a doc example that scans says so
    for number, (line, code) in enumerate(blocks):
        print({_MARK!r}.format(number), flush=True)
        exec(compile("\\n" * (line - 1) + code, page, "exec"), scope)


_run_page(*json.load(open(sys.argv[1])), globals())
"""


def run_page(
    page: Path, directory: Path, env: dict[str, str]
) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Save the page's files in ``directory`` and run its Python blocks there, as one script in a
    new process; what each block printed (stdout, echo logs included) and the process."""
    text = page.read_text()
    for saved in files_of(text):
        target = directory / saved.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(saved.code)
    runnable = [b for b in parse(text) if b.no_run is None]
    (directory / "blocks.json").write_text(json.dumps([str(page), [[b.line, b.code] for b in runnable]]))
    (directory / "run_page.py").write_text(_RUNNER)
    done = subprocess.run(
        [sys.executable, "-u", "run_page.py", "blocks.json"],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    printed = re.split(r"^" + re.escape(_MARK).replace(r"\{\}", r"\d+") + r"\n", done.stdout, flags=re.M)
    return done, printed[1:]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_runs_as_a_script_outside_the_repository(page: Path, dynamodb_local, tmp_path):
    """Run the page's Python blocks in order, as one script, and compare their checked outputs."""
    blocks = [b for b in parse(page.read_text()) if b.no_run is None]
    assert blocks, f"{page.name} has no runnable ```python block"
    for block in parse(page.read_text()) + [f for f in files_of(page.read_text()) if f.info == "python"]:
        compile("\n" * (block.line - 1) + block.code, str(page), "exec")  # opted out and saved ones too
    directory = tmp_path / "reader"
    directory.mkdir()
    done, printed = run_page(page, directory, _without_aws(tmp_path))
    assert done.returncode == 0, f"{page.name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    for block, output in zip(blocks, printed, strict=True):
        if block.output is not None:
            missing = check_output(output, block.output.code)
            assert missing is None, (
                f"{page.name}:{block.output.line}: the block at line {block.line} did not print "
                f"{missing!r}; it printed:\n{output}"
            )


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
