"""One Estimator call, as data flowing one way: prepare (input_fn, hooks) -> trace (the
engine) -> restore or initialise (checkpoint) -> loop (train / evaluate / predict) -> save.
Also what a call shows the user: progress bar, history, interrupts."""
