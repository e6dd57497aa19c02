"""2.15's `tpu` package of the estimator tree: it held no names of its own (TPUEstimator
and its configs are in the submodules `tpu_estimator`, `tpu_config`, `tpu_context`, ...)."""
