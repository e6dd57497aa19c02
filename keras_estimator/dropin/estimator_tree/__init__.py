"""tf.estimator 2.15's module tree, file for file: `tensorflow_estimator.python.estimator.X`
(and TensorFlow's former `tensorflow.python.estimator.X`) import as this package's `X` once
`keras_estimator.install()` ran (dropin/install.py `_LegacyModuleFinder`).

Each module holds the names its 2.15 namesake defined, as working objects: the public
classes and functions are keras_estimator's own (the v1 ones where 2.15's module held the
v1 class under the plain name, as `canned.dnn.DNNClassifier` was
`tf.compat.v1.estimator.DNNClassifier`), and the private helpers libraries import
(`canned.head._Head`, `canned.optimizers.get_optimizer_instance`, `gc`, ...) are small
adapters over them. A name that cannot work on TensorFlow 2.21 raises, when used, an error
naming what to use instead; each module's docstring lists its own. The tree's root held no
names in 2.15 (`from tensorflow_estimator.python.estimator import estimator` gives the
submodule).
"""
