"""Reading the files `check` scans, when nothing about them can be trusted.

Only regular files are opened (a FIFO named `x.py` or a link to `/dev/zero` is skipped, never
read), never more than a size cap (a bigger file is skipped with a line saying so), a
declared `coding:` must be a text encoding, and a notebook must be a JSON object of cells
with string sources before any of it is used. Each problem is a `SkippedFile` or an
`UnreadableFile` naming the reason; nothing here imports TensorFlow or runs what it reads.
"""

from __future__ import annotations

import codecs
import io
import json
import os
import re
import stat
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

MAX_SOURCE_BYTES = 2_000_000  # a Python file, or the code of a notebook
NOTEBOOK_SIZE_FACTOR = 16  # a notebook file may be this much bigger (outputs, images)
SUFFIXES = (".py", ".ipynb")

# Cell magics whose body is Python (`%%time` then code); every other `%%magic` cell is not.
_PYTHON_CELL_MAGICS = ("time", "timeit", "capture", "prun", "debug", "memit")
_MAGIC_OR_SHELL = re.compile(r"^\s*(%[A-Za-z_]|![^=])")  # not `% x` / `!= y` continuations
_SHELL_ASSIGNMENT = re.compile(r"^\s*[\w.,\s\[\]()*]+=\s*[!%]")


class SkippedFile(Exception):
    """A path `check` does not read (not a regular file, over the size cap)."""


class UnreadableFile(Exception):
    """A file `check` could not read as Python or as a notebook; the message says why."""


@dataclass
class Cell:
    """A notebook code cell: `number` counts every cell from 1, as Jupyter lists them."""

    number: int
    text: str


def find_files(paths: list[str]) -> Iterator[str]:
    """The .py / .ipynb paths below `paths` (sorted; hidden and __pycache__ folders left out).

    Links to folders are not followed; a path named on the command line is yielded as given.
    """
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
                for name in sorted(names):
                    if name.endswith(SUFFIXES):
                        yield os.path.join(root, name)
        else:
            yield path


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_bytes(path: str, limit: int) -> bytes:
    """At most `limit` bytes of the regular file at `path` (links followed to a regular file).

    Raises SkippedFile for anything else or anything bigger, FileNotFoundError when missing.
    """
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise SkippedFile(f"not a regular file ({_kind(st.st_mode)}): not read")
    if st.st_size > limit:
        raise SkippedFile(f"{st.st_size:,} bytes, over the {limit:,}-byte limit (--max-size)")
    # O_NONBLOCK: were it swapped for a FIFO since the stat, opening must not wait for a writer.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SkippedFile("not a regular file when opened: not read")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise SkippedFile(f"over the {limit:,}-byte limit (--max-size): it grew while read")
    return b"".join(chunks)


def decode_python(data: bytes) -> str:
    """Python source bytes to text, honouring a BOM or a `# -*- coding: ... -*-` line."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise UnreadableFile(f"bad encoding declaration: {exc}") from None
    if not getattr(codecs.lookup(encoding), "_is_text_encoding", True):
        raise UnreadableFile(
            f"declares `coding: {encoding}`, which is not a text encoding (Python would refuse "
            "it too)"
        )
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise UnreadableFile(f"not decodable as {encoding}: {exc}") from None


def _strings(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    return None


def notebook_cells(data: bytes, code_limit: int) -> list[Cell]:
    """The code cells of a notebook (nbformat 4, or 3's worksheets), validated.

    Raises UnreadableFile for what is not a notebook: not UTF-8 JSON, JSON nested beyond
    Python's limits, a top level that is not an object, cells that are not objects, sources
    that are not strings; SkippedFile when the code itself is over `code_limit`.
    """
    try:
        notebook = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise UnreadableFile(f"malformed notebook: not UTF-8 ({exc})") from None
    except RecursionError:
        raise UnreadableFile("malformed notebook: JSON nested too deep to read") from None
    except ValueError as exc:
        raise UnreadableFile(f"malformed notebook: not JSON ({exc})") from None
    if not isinstance(notebook, dict):
        raise UnreadableFile(
            f"malformed notebook: the top level is a JSON {type(notebook).__name__}, "
            "expected an object with `cells`"
        )
    source_key = "source"
    cells = notebook.get("cells")
    if cells is None and isinstance(notebook.get("worksheets"), list):  # nbformat 3
        source_key, cells = "input", []
        for sheet in notebook["worksheets"]:
            if not isinstance(sheet, dict) or not isinstance(sheet.get("cells"), list):
                raise UnreadableFile("malformed notebook: a worksheet without a `cells` list")
            cells += sheet["cells"]
    if not isinstance(cells, list):
        raise UnreadableFile("malformed notebook: no `cells` list")
    code, total = [], 0
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            raise UnreadableFile(
                f"malformed notebook: cell {number} is a JSON {type(cell).__name__}, "
                "expected an object"
            )
        if cell.get("cell_type") != "code":
            continue
        text = _strings(cell.get(source_key, ""))
        if text is None:
            raise UnreadableFile(
                f"malformed notebook: cell {number}'s `{source_key}` is not a string or a "
                "list of strings"
            )
        total += len(text)
        if total > code_limit:
            raise SkippedFile(f"its code is over the {code_limit:,}-character limit (--max-size)")
        code.append(Cell(number, python_lines(text)))
    return code


def python_lines(cell: str) -> str:
    """The cell with what is not Python blanked, line for line (numbers stay true).

    Blanked: a cell magic's cell (`%%bash`, `%%writefile`, ...; the body of `%%time` and
    its kind is kept), line magics (`%matplotlib inline`), shell lines (`!pip install x`,
    `files = !ls`), help lines (`tf.estimator?`), each with its `\\` continuation lines.
    """
    lines = cell.split("\n")
    first = lines[0].lstrip() if lines else ""
    if first.startswith("%%"):
        name = first[2:].split()[0] if first[2:].split() else ""
        if name not in _PYTHON_CELL_MAGICS:
            return "\n" * (len(lines) - 1)
        lines[0] = ""
    out, continued = [], False
    for line in lines:
        stripped = line.strip()
        blank = continued or (
            bool(_MAGIC_OR_SHELL.match(line) or _SHELL_ASSIGNMENT.match(line))
            or (stripped.endswith("?") and not stripped.startswith("#"))
        )
        if blank:
            continued = stripped.endswith("\\")
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)
