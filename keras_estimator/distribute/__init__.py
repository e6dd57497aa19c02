"""RunConfig / TF_CONFIG to tf.distribute: which strategy each mode runs under, the
distributed input, and parameter-server clusters (serving tasks, per-worker datasets)."""
