"""Materialises the repository trees the recipes need, outside the project.

A checkout is `<root>/<owner>+<name>/`, the repository's files at the recipe's commit (only
the folders the recipes use). Sources: a git dir such as the `fetch` tool's mirror
(`<mirror_root>/<owner>+<name>/repo`), or `git clone` from GitHub when none is given. Blobs
missing from a partial mirror (large files) are skipped, not fatal.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def checkout_dir(root: Path, repo: str) -> Path:
    return root / repo.replace("/", "+")


def find_git_dir(mirror_root: Path, repo: str) -> Path | None:
    base = mirror_root / repo.replace("/", "+") / "repo"
    for candidate in (base / ".git", base):
        if (candidate / "objects").is_dir():
            return candidate
    return None


def extract(git_dir: Path, commit: str, folders: list[str], target: Path) -> int:
    """Writes the files under `folders` at `commit` into `target`; returns how many."""
    listing = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-z", commit, "--", *folders],
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    entries = []
    for line in filter(None, listing):
        meta, path = line.split(b"\t", 1)
        _, kind, sha = meta.split()
        if kind == b"blob":
            entries.append((sha.decode(), path.decode()))
    batch = subprocess.Popen(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    written = 0
    for sha, path in entries:
        batch.stdin.write(sha.encode() + b"\n")
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            continue  # not in this (partial) mirror
        data = batch.stdout.read(int(header[2]))
        batch.stdout.read(1)
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        written += 1
    batch.stdin.close()
    batch.wait()
    return written


def clone(repo: str, commit: str, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(target)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(target),
            "fetch",
            "-q",
            "--depth=1",
            f"https://github.com/{repo}.git",
            commit,
        ],
        check=True,
    )
    subprocess.run(["git", "-C", str(target), "checkout", "-q", "FETCH_HEAD"], check=True)
