"""2.15's `tpu.iteration_count_estimator`: how many steps fit a time budget, from the step
times seen so far (working objects: keras_estimator's `tpu.loop_control`)."""

from keras_estimator.tpu.loop_control import IterationCountEstimator, RuntimeCounter

__all__ = ["IterationCountEstimator", "RuntimeCounter"]
