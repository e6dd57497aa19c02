"""Code that needs more than this machine when it runs: the network, Cloud Storage, a TPU.

`check` judges the environment it runs in. These uses fail here, under `run` as under
plain Python, for a reason written in the code itself, so they are blocking findings:

- a Keras dataset (`tf.keras.datasets.mnist.load_data()`) or `keras.utils.get_file` whose
  file is not in Keras' cache (`$KERAS_HOME` or `~/.keras`, `datasets/`): it is downloaded;
- a download call (`urllib.request.urlretrieve` / `urlopen`, `requests.get`, ...); inside
  an `if` that tests whether a file exists (`maybe_download`), only a caveat;
- a `gs://` path the code builds or uses (not a flag's default or help text, which the
  command line replaces): Cloud Storage needs the network and credentials;
- `TPUClusterResolver(...)` called unconditionally where no TPU is visible (no
  `/dev/accel*`, no `TPU_NAME`): it raises "Please provide a TPU Name to connect to".

Nothing is imported or fetched: the cache and the TPU are looked up on disk and in the
environment.
"""

from __future__ import annotations

import ast
import glob
import os
import re
from typing import NamedTuple

from keras_estimator.migration import tf1_api

NETWORK_FIX = "read the data from local files (a path given on the command line)"
GCS_NOTE = (
    "a Cloud Storage path (gs://): reading or writing it needs network access and GCS "
    "credentials, so the program fails when that code runs without them"
)
GCS_FIX = "a local path, e.g. passed as a command-line argument"
TPU_NOTE = (
    "TPUClusterResolver is built unconditionally and no TPU is visible here (no /dev/accel*, "
    "TPU_NAME unset): it raises 'Please provide a TPU Name to connect to' when that code runs"
)
TPU_FIX = (
    "build the resolver only when a TPU is used (`if FLAGS.use_tpu:`) and run with "
    "use_tpu=False on CPU/GPU"
)
# Keras' dataset modules -> what load_data() reads from the cache (`<keras home>/datasets/`).
KERAS_DATASET_FILES = {
    "mnist": ("mnist.npz",),
    "boston_housing": ("boston_housing.npz",),
    "california_housing": ("california_housing.npz",),
    "imdb": ("imdb.npz",),
    "reuters": ("reuters.npz",),
    "cifar10": ("cifar-10-batches-py-target",),
    "cifar100": ("cifar-100-python-target",),
    "fashion_mnist": tuple(
        f"fashion-mnist/{name}"
        for name in (
            "train-labels-idx1-ubyte.gz",
            "train-images-idx3-ubyte.gz",
            "t10k-labels-idx1-ubyte.gz",
            "t10k-images-idx3-ubyte.gz",
        )
    ),  # fmt: skip
}
_DATASET = re.compile(r"(?:^|\.)keras\.datasets\.(\w+)")
_GET_FILE = re.compile(r"(?:^|\.)keras\.utils\.(?:data_utils\.|file_utils\.)?get_file$")
_DOWNLOADS = (
    "urllib.request.urlretrieve", "urllib.request.urlopen", "urllib.urlretrieve",
    "urllib.urlopen", "urllib2.urlopen", "six.moves.urllib.request.urlretrieve",
    "six.moves.urllib.request.urlopen", "requests.get", "wget.download",
)  # fmt: skip
_TPU_RESOLVER = re.compile(r"(?:^|\.)cluster_resolver\.(?:tpu\.)?TPUClusterResolver$")
# Calls whose string arguments are patterns, defaults or tests, not paths that are opened.
_NOT_A_PATH_CALLS = ("startswith", "endswith", "search", "match", "fullmatch", "compile", "sub",
                     "findall", "split", "replace", "getenv", "get", "setdefault", "add_argument",
                     "print", "info", "warning", "error", "debug", "format_help")  # fmt: skip
_EXISTS_TESTS = ("exists", "isfile", "isdir", "Exists", "IsDirectory")


class Use(NamedTuple):
    """One finding of this module: (line, api, status, note, replacement)."""

    line: int
    api: str
    status: str
    note: str
    replacement: str


def keras_cache_dirs() -> list[str]:
    """Where keras.utils.get_file keeps downloads (`$KERAS_HOME`, else `~/.keras`; then the
    `/tmp/.keras` Keras falls back on), each with its `datasets` folder."""
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    return [os.path.join(base, "datasets") for base in dict.fromkeys([home, "/tmp/.keras"])]


def _cached(files: tuple[str, ...]) -> str | None:
    for folder in keras_cache_dirs():
        if all(os.path.exists(os.path.join(folder, f)) for f in files):
            return folder
    return None


def tpu_visible() -> bool:
    """Whether this machine shows a TPU (a TPU VM's /dev/accel*, or a named one)."""
    names = ("TPU_NAME", "COLAB_TPU_ADDR", "TPU_IP_ADDRESS", "KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS")
    return bool(glob.glob("/dev/accel*")) or any(os.environ.get(n) for n in names)


def _normal(dotted: str) -> str:
    for prefix in ("tensorflow.compat.v1.", "tensorflow.compat.v2.", "tensorflow.python."):
        if dotted.startswith(prefix):
            return "tensorflow." + dotted[len(prefix) :]
    return dotted


def _parents(nodes: list[ast.AST]) -> dict[int, ast.AST]:
    return {id(child): node for node in nodes for child in ast.iter_child_nodes(node)}


def _enclosing(node: ast.AST, parents: dict[int, ast.AST]) -> list[ast.AST]:
    """The nodes above `node`, up to (not including) its function or the module."""
    found = []
    current = parents.get(id(node))
    while current is not None and not isinstance(
        current, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.Module
    ):
        found.append(current)
        current = parents.get(id(current))
    return found


def _called(node: ast.AST) -> str:
    func = node.func if isinstance(node, ast.Call) else None
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _guarded_by_exists(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    for above in _enclosing(node, parents):
        if isinstance(above, ast.If):
            if any(_called(n) in _EXISTS_TESTS for n in ast.walk(above.test)):
                return True
    return False


def _keras_datasets(nodes: list[ast.AST], tree: ast.AST, bindings: dict[str, str]) -> list[Use]:
    found: dict[str, Use] = {}
    uses = tf1_api.tensorflow_uses(tree, bindings, ("tensorflow", "keras"), nodes)
    for use in uses:
        match = _DATASET.search(_normal(use.dotted))
        if match is None or match.group(1) not in KERAS_DATASET_FILES or match[1] in found:
            continue
        name = match.group(1)
        files = KERAS_DATASET_FILES[name]
        if _cached(files) is not None:
            continue
        where = os.path.join(keras_cache_dirs()[0], files[0].split("/")[0])
        found[name] = Use(
            use.line,
            f"keras.datasets.{name}.load_data",
            "unsupported",
            f"load_data() downloads the {name} dataset from the network (it is not in Keras' "
            f"cache: no {where}); the program fails when that code runs without network access",
            f"{NETWORK_FIX}, or put the dataset's file in {os.path.dirname(where)} first",
        )
    return list(found.values())


def _string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _get_file(call: ast.Call, parents: dict[int, ast.AST]) -> Use | None:
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    fname = _string(call.args[0] if call.args else keywords.get("fname"))
    subdir = _string(keywords.get("cache_subdir")) if "cache_subdir" in keywords else "datasets"
    if "cache_dir" not in keywords and fname and subdir:
        for folder in keras_cache_dirs():
            if os.path.exists(os.path.join(os.path.dirname(folder), subdir, fname)):
                return None
    return _download(call, "keras.utils.get_file", parents, "its file is not in Keras' cache")


def _download(call: ast.Call, api: str, parents: dict[int, ast.AST], why: str = "") -> Use:
    what = f"downloads from the network when it runs{f' ({why})' if why else ''}"
    if _guarded_by_exists(call, parents):
        return Use(call.lineno, api, "caveat",
                   f"{what}, only where a file-exists test finds no file: put the data "
                   "there first when the machine has no network access", "")  # fmt: skip
    return Use(call.lineno, api, "unsupported",
               f"{what}: the program fails when that code runs without network access",
               NETWORK_FIX)  # fmt: skip


def _calls(
    nodes: list[ast.AST], bindings: dict[str, str], parents: dict[int, ast.AST]
) -> list[Use]:
    found = []
    tpu = None
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        dotted = tf1_api.resolve(node.func, bindings)
        if dotted is None:
            continue
        dotted = _normal(dotted)
        if dotted in _DOWNLOADS:
            found.append(_download(node, dotted, parents))
        elif _GET_FILE.search(dotted):
            use = _get_file(node, parents)
            if use is not None:
                found.append(use)
        elif _TPU_RESOLVER.search(dotted) and not _conditional(node, parents):
            if tpu is None:
                tpu = tpu_visible()
            if not tpu and not (_string(node.args[0]) if node.args else None):
                found.append(Use(node.lineno, "TPUClusterResolver", "unsupported", TPU_NOTE,
                                 TPU_FIX))  # fmt: skip
    return found


def _conditional(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Inside an `if`, a conditional expression, a `try` or a loop of its function."""
    kinds = (ast.If, ast.IfExp, ast.Try, ast.For, ast.While, ast.BoolOp)
    return any(isinstance(above, kinds) for above in _enclosing(node, parents))


def _gcs_paths(nodes: list[ast.AST], parents: dict[int, ast.AST]) -> list[Use]:
    """gs:// strings the code builds or uses as a path (one finding per line)."""
    lines = []
    for node in nodes:
        parent = parents.get(id(node))
        if isinstance(node, ast.JoinedStr) and node.values:  # f"gs://{bucket}/data"
            text, built = _string(node.values[0]), True
        elif isinstance(node, ast.Constant) and not isinstance(parent, ast.JoinedStr):
            text = _string(node)
            built = isinstance(parent, ast.BinOp) and parent.left is node  # "gs://" + bucket
        else:
            continue
        if not text or not text.startswith("gs://"):
            continue
        if len(text) <= len("gs://") and not built:
            continue  # `path.startswith("gs://")`, `== "gs://"`
        if not _not_a_path(node, parent) and node.lineno not in lines:
            lines.append(node.lineno)
    return [Use(line, "gs:// path", "unsupported", GCS_NOTE, GCS_FIX) for line in lines]


def _not_a_path(node: ast.AST, parent: ast.AST | None) -> bool:
    """A docstring, help text, a flag's default, a comparison, a pattern or a message."""
    if isinstance(parent, ast.keyword | ast.Expr | ast.Compare | ast.FormattedValue):
        return True
    if isinstance(parent, ast.Call) and node in parent.args:
        name = _called(parent)
        return name in _NOT_A_PATH_CALLS or name.startswith("DEFINE")
    return False


def uses(tree: ast.AST, nodes: list[ast.AST], bindings: dict[str, str]) -> list[Use]:
    """The file's uses of the network, Cloud Storage or a TPU that fail here."""
    parents = _parents(nodes)
    found = _keras_datasets(nodes, tree, bindings)
    found += _calls(nodes, bindings, parents)
    found += _gcs_paths(nodes, parents)
    return sorted(found)
