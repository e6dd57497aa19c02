"""model_dir checkpoints: writing and reading TF1-named checkpoints atomically, the
`checkpoint` state file, warm starts (with vocabulary remapping) and
`tf.compat.v1.train.init_from_checkpoint` inside a model_fn."""
