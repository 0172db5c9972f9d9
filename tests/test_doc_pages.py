"""Every code block of README.md and of the user guide (docs/guide/*.md) runs as written.

The fenced ```python and ```sh blocks are extracted and executed in a fresh temporary folder
per section of a page:

- a python block runs in a subprocess, after the python blocks before it in the same section
  (a section's blocks read as one session: the usage example saves the model the block above
  it fitted);
- an sh block holds `cwrs ...` command lines (comments and blank lines aside), each run with the
  installed `cwrs` command, in order, in the section's folder (so a model that `cwrs train`
  writes is there for `cwrs test`).

Data comes from the package (`cwrs.datasets`, the CLI's bundled name `svmguide3`) or from the
blocks themselves: nothing is downloaded. A block that cannot run here (`make`, `pip install`)
is marked explicitly, on the line before it, with `<!-- page-test: skip (reason) -->`; an
unmarked sh block with another command than `cwrs` fails this test, so a new example cannot
silently escape it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
SKIP_MARKER = re.compile(r"<!--\s*page-test:\s*skip\s*\((.+?)\)\s*-->")
FENCE = re.compile(r"^```(\w*)\s*$")
RUN_LANGUAGES = {"python", "sh"}
TIMEOUT = 600  # seconds; a hung example fails instead of stalling the suite


@dataclass
class Block:
    page: str  # the path from the repository's root
    language: str
    code: str
    line: int  # of the opening fence, 1-based
    section: str
    skip_reason: str | None

    @property
    def id(self) -> str:
        return f"{self.page}-{self.language}-line{self.line}"


def page_blocks(page: str, text: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, with their section and skip marker."""
    blocks = []
    lines = text.splitlines()
    section, i = "", 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
        fence = FENCE.match(line)
        if fence is None:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = SKIP_MARKER.search(previous)
        blocks.append(
            Block(
                page=page,
                language=fence.group(1),
                code="\n".join(lines[i + 1 : end]) + "\n",
                line=i + 1,
                section=section,
                skip_reason=marker.group(1) if marker else None,
            )
        )
        i = end + 1
    return blocks


BLOCKS = [
    block
    for page in PAGES
    for block in page_blocks(page.relative_to(ROOT).as_posix(), page.read_text(encoding="utf-8"))
]
RUNNABLE = [b for b in BLOCKS if b.language in RUN_LANGUAGES]


def cwrs_command() -> list[str]:
    """The installed `cwrs` command (the script beside this interpreter, as pip installs it)."""
    script = Path(sys.executable).with_name("cwrs")
    return [str(script)] if script.exists() else [sys.executable, "-m", "cwrs"]


def command_lines(block: Block) -> list[list[str]]:
    """The commands of an sh block, one per line, comments and blank lines left out."""
    commands = [shlex.split(line, comments=True) for line in block.code.splitlines()]
    return [words for words in commands if words]


def session_prefix(block: Block) -> str:
    """The python blocks before `block` in its section, which it continues."""
    earlier = [
        b.code
        for b in RUNNABLE
        if (b.page, b.section) == (block.page, block.section)
        and b.language == "python"
        and b.line < block.line
        and b.skip_reason is None
    ]
    return "".join(earlier)


def run(args: list[str], cwd: Path, block: Block) -> None:
    # Plots render without a display; the package under test is the installed one.
    env = {**os.environ, "MPLBACKEND": "Agg"}
    result = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert result.returncode == 0, (
        f"{block.page} line {block.line} ({block.section}): {shlex.join(args[:1] + args[1:3])} "
        f"... exited with {result.returncode}\nstdout:\n{result.stdout[-2000:]}\n"
        f"stderr:\n{result.stderr[-4000:]}"
    )


def test_the_pages_have_their_examples():
    # The parser sees the blocks (a broken fence or marker would hide them all).
    for page in ("README.md", "docs/guide/getting-started.md"):
        runnable = [b for b in RUNNABLE if b.page == page and b.skip_reason is None]
        assert sum(b.language == "python" for b in runnable) >= 1, page
        assert sum(b.language == "sh" for b in runnable) >= 1, page
    assert sum(b.language == "python" for b in RUNNABLE) >= 10
    skipped = [b for b in BLOCKS if b.skip_reason is not None]
    assert all(b.language in RUN_LANGUAGES for b in skipped), "a skip marker on a block never run"


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.id for b in RUNNABLE])
def test_page_block_runs(block, tmp_path):
    if block.skip_reason is not None:
        pytest.skip(f"marked in {block.page}: {block.skip_reason}")
    if block.language == "python":
        script = tmp_path / "example.py"
        script.write_text(session_prefix(block) + block.code, encoding="utf-8")
        run([sys.executable, str(script)], tmp_path, block)
        return
    for words in command_lines(block):
        assert words[0] == "cwrs", (
            f"{block.page} line {block.line}: `{shlex.join(words)}` is not a cwrs command; make the "
            "example run with cwrs alone, or mark the block <!-- page-test: skip (why) -->"
        )
        run(cwrs_command() + words[1:], tmp_path, block)
