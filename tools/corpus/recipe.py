"""What a recipe says: one real program, how to feed it and the smallest edits it needs."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class Edit:
    """Replace `old` by `new` in `file` (relative to the recipe's folder); `old` must occur."""

    file: str
    old: str
    new: str


@dataclasses.dataclass(frozen=True)
class Recipe:
    """One program of the corpus.

    `folder` (inside the repository) is copied to a fresh work directory per case; `entry`
    is a script path relative to it, or `-m package.module`. `args` may use `{work}` (the
    work directory). `data(work)` writes the tiny inputs where the program reads them (our
    own generator; it may also write small helper modules of ours that an edit imports).
    `edits` are what 2.15 needs (the same edits are run here too); the unmodified case runs
    the program's own code with the same data and arguments.

    `variant` edits are applied in every case, the unmodified one included: the program as a
    user of a library adapts it (e.g. which of the library's model classes an example
    builds), not a change 2.15 needs. `pip` names packages (requirement specifiers, or paths
    of wheel files) installed unmodified with `pip install --no-deps --target` into a side
    folder outside the project (under the checkouts folder; their metadata may pin an old
    TensorFlow, hence no dependencies) and put on `PYTHONPATH` on both sides: a library
    built on tf.estimator that the program imports.
    """

    name: str
    repo: str
    commit: str
    folder: str
    entry: str
    kind: str
    args: tuple[str, ...] = ()
    data: Callable[[Path], None] | None = None
    edits: tuple[Edit, ...] = ()
    variant: tuple[Edit, ...] = ()
    pip: tuple[str, ...] = ()
    pythonpath: tuple[str, ...] = ()
    timeout: int = 300
    note: str = ""

    @property
    def entry_file(self) -> str:
        """The entry point as a path relative to the folder."""
        if self.entry.startswith("-m "):
            return self.entry[3:].strip().replace(".", "/") + ".py"
        return self.entry


TF1_IMPORT = (
    "import tensorflow as tf\n",
    "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n",
)


def tf1(file: str) -> Edit:
    """The usual 2.15 edit for a TF 1.x script: the v1 API with v2 behaviour off."""
    return Edit(file, *TF1_IMPORT)
