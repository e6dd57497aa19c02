"""2.15's `canned/timeseries` package: the time-series estimators (see each module; the
machinery is keras_estimator.canned.timeseries)."""
