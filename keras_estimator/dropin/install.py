"""`install()` / `uninstall()`: legacy estimator imports resolve to keras_estimator.

After `install()`:

- `tf.estimator` is the `keras_estimator` package and `tf.compat.v1.estimator` is
  `keras_estimator.v1` (the same, but for 2.15's v1 `Estimator`, canned estimators and
  parse-spec functions), both with `.tpu`, `.export`, `.inputs`, `.experimental`;
- `tf.compat.v1.contrib` holds the estimator-adjacent pieces of `tf.contrib`
  (`keras_estimator.dropin.contrib`), also importable as `tensorflow.contrib`;
- the modules legacy code imported directly (`tensorflow_estimator`,
  `tensorflow_estimator.python.estimator.estimator`, `...model_fn`, `...run_config`,
  `...export.export`, `...canned.dnn`, ..., and the same under TensorFlow's own former
  estimator path, `seam.legacy_paths.ESTIMATOR_MODULE_ROOTS`) are importable and hold
  our classes;
- `tf.keras.layers.DenseFeatures`, `tf.keras.experimental.SequenceFeatures` and
  `tf.keras.estimator.model_to_estimator` (`keras_estimator.keras_bridge`), which Keras 3
  dropped;
- `tf.compat.v1.nn.rnn_cell` holds TensorFlow's TF1 cells (`dropin.rnn_cell`), which Keras
  3's lazy loader there refuses;
- Keras 3's `Model.compile(optimizer=...)` takes a `tf.compat.v1.train` optimizer, as
  tf.keras 2 did, as the Keras 3 optimizer with the same settings
  (`keras_bridge.v1_optimizers`);
- tf.keras 2's `to_categorical(y=...)` and `from tensorflow.python.keras import models`
  (TensorFlow's frozen tf.keras 2 copy) resolve to Keras 3 (`dropin.tf_keras2`);
- `tensorflow.python.distribute.estimator_training` (TF 2.15's coordinator entry points,
  which EasyRec imports) is `dropin.estimator_training`;
- `tensorflow.python.training.tracking.*` (moved by TensorFlow 2.11; AdaNet imports its
  graph_view) are the modules TensorFlow keeps them in now;
- `tensorflow.examples.tutorials.mnist.input_data` reads MNIST's idx files from the
  given folder (`dropin.mnist_input_data`; no download);
- `tf.compat.v1.layers` is keras_estimator's Keras 3 port of the TF1 layers (as for any
  Estimator; it stays after `uninstall()`);
- `tf.compat.v1.disable_v2_behavior` / `disable_eager_execution` /
  `disable_resource_variables` / `disable_v2_tensorshape` apply only what keras_estimator
  can run with (TF1 shapes, for the calling code only: `dropin.tf1_shapes`) and log what
  they kept (`dropin.tf1_switches`).

Nothing else about TensorFlow or Keras changes: only attributes and `sys.modules`
entries that did not exist are added, and the four switches replaced (through
`seam.patching`); `uninstall()` restores exactly those.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys
import threading
import types
from typing import Any

from keras_estimator.dropin.tf1_shapes import forget_all, wants_tf1_shapes
from keras_estimator.dropin.tf1_switches import switch_attributes
from keras_estimator.seam.legacy_paths import (
    ESTIMATOR_MODULE_ROOTS,
    GUARDED_ROOTS,
    MOVED_TRACKING_MODULES,
)
from keras_estimator.seam.patching import AttributePatch

_lock = threading.Lock()
_installed: dict[str, Any] | None = None  # what install() added, for uninstall()

# 2.15's module tree (`tensorflow_estimator.python.estimator.X`, and TensorFlow's former
# forwarding tree `tensorflow.python.estimator.X`) is mirrored file for file by the package
# `estimator_tree` beside this module: each legacy path X imports as
# `keras_estimator.dropin.estimator_tree.X`, loaded on first import (the tree is large:
# TPU internals, time series, SDCA; most programs import three of its modules).
_TREE_PACKAGE = "keras_estimator.dropin.estimator_tree"
_TREE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "estimator_tree")


def legacy_module_suffixes() -> list[str]:
    """The module paths below `tensorflow_estimator.python.estimator` that import as ours.

    Read from the files of `estimator_tree`, so `keras-estimator check` needs no TensorFlow.
    """
    suffixes = []
    for folder, dirs, files in os.walk(_TREE_DIR):
        dirs[:] = sorted(d for d in dirs if not d.startswith("__"))
        relative = os.path.relpath(folder, _TREE_DIR)
        prefix = "" if relative == "." else relative.replace(os.sep, ".") + "."
        if prefix:
            suffixes.append(prefix[:-1])
        suffixes += [prefix + f[:-3] for f in sorted(files)
                     if f.endswith(".py") and f != "__init__.py"]  # fmt: skip
    return sorted(suffixes)


def _tree_module_for(fullname: str) -> str | None:
    """The `estimator_tree` module a legacy module name imports as, or None."""
    for root in ESTIMATOR_MODULE_ROOTS:
        if fullname == root:
            return _TREE_PACKAGE
        if fullname.startswith(root + "."):
            suffix = fullname[len(root) + 1 :]
            return f"{_TREE_PACKAGE}.{suffix}" if suffix in _tree_suffixes() else None
    return None


_suffixes: frozenset[str] | None = None


def _tree_suffixes() -> frozenset[str]:
    global _suffixes
    if _suffixes is None:
        _suffixes = frozenset(legacy_module_suffixes())
    return _suffixes


def _alias_module(
    name: str, sources: list[types.ModuleType] | None, **attributes: Any
) -> types.ModuleType:
    """A stand-in package `name` with the public names of `sources`, and `attributes`."""
    module = types.ModuleType(name, f"keras_estimator's stand-in for `{name}`.")
    module.__path__ = []  # a package: its submodules are aliases too
    for source in sources or []:
        public = getattr(source, "__all__", None) or [
            n for n in vars(source) if not n.startswith("_")
        ]
        for attr in public:
            setattr(module, attr, getattr(source, attr))
    for attr, value in attributes.items():
        setattr(module, attr, value)
    return module


def _legacy_modules() -> dict[str, types.ModuleType]:
    """The legacy module names made at install(): the package roots above the tree, and
    tf.contrib's. The tree's own modules load on first import (`_LegacyModuleFinder`)."""
    estimator = importlib.import_module("keras_estimator")
    estimator_v1 = importlib.import_module("keras_estimator.v1")
    modules: dict[str, types.ModuleType] = {}
    # `from tensorflow_estimator import estimator`
    top = _alias_module("tensorflow_estimator", None, estimator=estimator)
    modules["tensorflow_estimator"] = top
    modules["tensorflow_estimator.python"] = _alias_module("tensorflow_estimator.python", None)
    # `from tensorflow_estimator.compat.v1 import estimator` (Google research code).
    modules["tensorflow_estimator.compat"] = _alias_module("tensorflow_estimator.compat", None)
    for version, namespace in (("v1", estimator_v1), ("v2", estimator)):
        compat = _alias_module(f"tensorflow_estimator.compat.{version}", None, estimator=namespace)
        modules[compat.__name__] = compat
    tree = importlib.import_module(_TREE_PACKAGE)
    for root in ESTIMATOR_MODULE_ROOTS:  # made here, so uninstall() unlinks them from TF
        modules[root] = tree
    contrib = importlib.import_module("keras_estimator.dropin.contrib")
    modules["tensorflow.contrib"] = contrib
    modules.update(contrib.submodules())
    modules.update(_mnist_tutorial_modules())
    modules.update(_estimator_training_module())
    modules.update(_moved_tracking_modules())
    return modules


_TRACKING = "tensorflow.python.training.tracking"


def _moved_tracking_modules() -> dict[str, types.ModuleType]:
    """`tensorflow.python.training.tracking` and its modules (TensorFlow 2.11 moved them:
    `MOVED_TRACKING_MODULES`), unless the installed TensorFlow still has them."""
    try:
        if importlib.util.find_spec(_TRACKING) is not None:
            return {}
    except (ImportError, ValueError):
        pass
    moved = {old: importlib.import_module(new) for old, new in MOVED_TRACKING_MODULES.items()}
    package = _alias_module(
        _TRACKING, None, **{old.rsplit(".", 1)[1]: module for old, module in moved.items()}
    )
    return {_TRACKING: package, **moved}


_ESTIMATOR_TRAINING = "tensorflow.python.distribute.estimator_training"


def _estimator_training_module() -> dict[str, types.ModuleType]:
    """`tensorflow.python.distribute.estimator_training` (gone with TF 2.16's estimator),
    unless the installed TensorFlow still has it."""
    try:
        if importlib.util.find_spec(_ESTIMATOR_TRAINING) is not None:
            return {}
    except (ImportError, ValueError):
        pass
    return {
        _ESTIMATOR_TRAINING: importlib.import_module("keras_estimator.dropin.estimator_training")
    }


_MNIST_TUTORIAL = "tensorflow.examples.tutorials.mnist"


def _mnist_tutorial_modules() -> dict[str, types.ModuleType]:
    """`tensorflow.examples.tutorials.mnist.input_data` (TF 1's MNIST reader), unless the
    installed TensorFlow has its own."""
    try:
        if importlib.util.find_spec("tensorflow.examples") is not None:
            return {}
    except (ImportError, ValueError):
        pass
    parts = _MNIST_TUTORIAL.split(".")
    modules = {
        ".".join(parts[:end]): _alias_module(".".join(parts[:end]), None)
        for end in range(2, len(parts) + 1)
    }
    modules[f"{_MNIST_TUTORIAL}.input_data"] = importlib.import_module(
        "keras_estimator.dropin.mnist_input_data"
    )
    return modules


def _namespace_attributes() -> list[tuple[Any, str, Any]]:
    """(module object, attribute, value) for `tf.estimator`, `tf.compat.v1.estimator`, ..."""
    import tensorflow as tf

    estimator = importlib.import_module("keras_estimator")
    estimator_v1 = importlib.import_module("keras_estimator.v1")  # 2.15's v1 classes
    contrib = importlib.import_module("keras_estimator.dropin.contrib")
    importlib.import_module("tensorflow.compat.v1")
    importlib.import_module("tensorflow.compat.v2")  # `import tensorflow.compat.v2 as tf` (AdaNet)
    v1_modules = {id(tf.compat.v1): tf.compat.v1}
    v1_modules.update({id(m): m for n, m in list(sys.modules.items()) if n.endswith("compat.v1")})
    v2_modules = {id(tf): tf, id(tf.compat.v2): tf.compat.v2}
    v2_modules.update({id(m): m for n, m in list(sys.modules.items()) if n.endswith("compat.v2")})
    attributes = [(m, "estimator", estimator) for m in v2_modules.values()]
    attributes += [(m, "estimator", estimator_v1) for m in v1_modules.values()]
    attributes += [(m, "contrib", contrib) for m in v1_modules.values()]
    # What Keras 3 dropped from tf.keras: layers.DenseFeatures and estimator.model_to_estimator.
    keras_layers = tf.keras.layers
    keras_root = sys.modules[keras_layers.__name__.rpartition(".")[0]]
    bridge = importlib.import_module("keras_estimator.keras_bridge.model_to_estimator")
    dense_features = importlib.import_module("keras_estimator.keras_bridge.dense_features")
    attributes += [(keras_layers, "DenseFeatures", dense_features.DenseFeatures)]
    # tf.keras.experimental.SequenceFeatures, which Keras 3 dropped with the namespace.
    sequence_features = importlib.import_module("keras_estimator.keras_bridge.sequence_features")
    experimental = getattr(keras_root, "experimental", None)
    if experimental is None:
        experimental = _alias_module(f"{keras_root.__name__}.experimental", None)
        attributes += [(keras_root, "experimental", experimental)]
    attributes += [(experimental, "SequenceFeatures", sequence_features.SequenceFeatures)]
    attributes += [(keras_root, "estimator", bridge)]  # tf.keras.estimator.model_to_estimator
    return attributes


def _link_parents(modules: dict[str, types.ModuleType]) -> list[tuple[Any, str, Any]]:
    """Each alias module as an attribute of its parent, as an import would leave it."""
    links = []
    for name, module in modules.items():
        parent_name, _, child = name.rpartition(".")
        parent = modules.get(parent_name) or sys.modules.get(parent_name)
        if parent is not None:
            links.append((parent, child, module))
    return links


class _AliasLoader(importlib.abc.Loader):
    """Loads a legacy module name as the `estimator_tree` module it mirrors: the same
    module object under both names, so a class imported either way is the same class."""

    def __init__(self, target: str) -> None:
        self._target = target

    def create_module(self, spec: Any) -> types.ModuleType:
        return types.ModuleType(spec.name)  # replaced in sys.modules by exec_module

    def exec_module(self, module: types.ModuleType) -> None:
        # The import system returns what sys.modules holds under the name once this returns.
        sys.modules[module.__name__] = importlib.import_module(self._target)


class _LegacyModuleFinder(importlib.abc.MetaPathFinder):
    """While installed: a module of 2.15's tree imports as its `estimator_tree` mirror; a
    legacy module path we do not provide fails to import with a message saying so."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname.startswith("tensorflow.contrib."):
            from keras_estimator.dropin.contrib.removed import removed_module_message

            raise ModuleNotFoundError(removed_module_message(fullname), name=fullname)
        mirror = _tree_module_for(fullname)
        if mirror is not None:
            return importlib.util.spec_from_loader(fullname, _AliasLoader(mirror), is_package=True)
        if fullname.startswith(tuple(root + "." for root in GUARDED_ROOTS)):
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: keras_estimator.install() provides "
                "tf.estimator 2.15's module tree (tensorflow_estimator.python.estimator.*) "
                "and tf.contrib's estimator-side modules, not this one. Fix: import the "
                f"class from tf.estimator / keras_estimator. Received: import {fullname}",
                name=fullname,
            )
        return None


_guard = _LegacyModuleFinder()


def install() -> None:
    """Makes legacy `tf.estimator` / `tensorflow_estimator` / `tf.contrib` code use us.

    Idempotent and thread-safe; `uninstall()` reverses it.

    Example:
        >>> import keras_estimator; keras_estimator.install()
        >>> import tensorflow.compat.v1 as tf
        >>> est = tf.estimator.Estimator(model_fn)   # a keras_estimator.Estimator
    """
    global _installed
    with _lock:
        if _installed is not None:
            return
        modules = _legacy_modules()
        added_modules = {name: m for name, m in modules.items() if name not in sys.modules}
        attributes = _namespace_attributes() + _link_parents(added_modules)
        # Imported here: `keras-estimator check` reads this module without TensorFlow.
        from keras_estimator.compat.v1_layers_install import install_v1_layers

        install_v1_layers()
        # Never replace what exists (e.g. a real tensorflow_estimator).
        patches = [AttributePatch(owner, attr, value, only_if_missing=True)
                   for owner, attr, value in attributes]  # fmt: skip
        patches += [
            AttributePatch(owner, attr, value) for owner, attr, value in switch_attributes()
        ]
        from keras_estimator.dropin.rnn_cell import rnn_cell_attributes

        # tf.compat.v1.nn.rnn_cell: replaced only where it gives no cells (Keras 3).
        patches += [AttributePatch(o, a, v) for o, a, v in rnn_cell_attributes()]
        from keras_estimator.keras_bridge.v1_optimizers import v1_optimizers_in_compile

        # Keras 3's compile(optimizer=tf.compat.v1.train.RMSPropOptimizer(...)), as tf.keras 2.
        patches.append(v1_optimizers_in_compile())
        from keras_estimator.dropin.tf_keras2 import tf_keras2_attributes

        patches += [AttributePatch(o, a, v) for o, a, v in tf_keras2_attributes()]
        from keras_estimator.dropin.contrib.tf_slim_bridge import control_flow_attributes

        # tf-slim's control_flow_ops.cond / case / while_loop, which TensorFlow 2.13 moved.
        patches += [AttributePatch(o, a, v) for o, a, v in control_flow_attributes()]
        from keras_estimator.seam.internals import tensor_shapes_chosen_by_caller

        patches.append(tensor_shapes_chosen_by_caller(wants_tf1_shapes))
        sys.modules.update(added_modules)
        sys.meta_path.insert(0, _guard)
        _installed = {
            "modules": list(added_modules),
            "patches": [patch for patch in patches if patch.applied],
            "before": {n for n in sys.modules if n.startswith(GUARDED_ROOTS)} - set(added_modules),
        }


def uninstall() -> None:
    """Removes exactly what `install()` added. Idempotent and thread-safe."""
    global _installed
    with _lock:
        if _installed is None:
            return
        for name in _installed["modules"]:
            sys.modules.pop(name, None)
        # Anything imported under a legacy name meanwhile goes too.
        for name in [n for n in sys.modules if n.startswith(GUARDED_ROOTS)]:
            if name not in _installed["before"]:
                sys.modules.pop(name, None)
        if _guard in sys.meta_path:
            sys.meta_path.remove(_guard)
        for patch in _installed["patches"]:
            patch.undo()
        forget_all()
        from keras_estimator.keras_bridge.metric_names import ask_for_graph_mode_names

        ask_for_graph_mode_names(False)
        _installed = None


def is_installed() -> bool:
    return _installed is not None
