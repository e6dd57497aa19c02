"""What a model_fn receives and returns, and what configures a run: ModeKeys,
EstimatorSpec (with its validation), RunConfig (with TF_CONFIG parsing), Scaffold checks.
Definitions only; nothing here trains."""
