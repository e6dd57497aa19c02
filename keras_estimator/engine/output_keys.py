"""The keys of a compiled step's outputs, besides the model_fn's own metrics."""

LOSS_KEY = "loss"
GLOBAL_STEP_KEY = "global_step"
HOOKS_KEY = "__hooks__"  # step outputs the hooks asked for; not a metric name
