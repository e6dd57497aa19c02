"""Small helpers every layer may use: model_fn argument names, the logger, seeding and
the import-time environment check. Nothing here imports other keras_estimator rooms."""
