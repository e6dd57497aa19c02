"""Legacy code unchanged: `install()` / `uninstall()` (tf.estimator, tensorflow_estimator.*
and tf.contrib names resolve to keras_estimator), the tf.contrib pieces it provides, and
running a script under them (`keras-estimator run`)."""
