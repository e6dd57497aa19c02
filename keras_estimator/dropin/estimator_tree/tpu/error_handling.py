"""2.15's `tpu.error_handling`: `ErrorRendezvous`, which collects the errors of several
threads and re-raises the most informative one (a working object: keras_estimator's
`tpu.loop_control.ErrorRendezvous`)."""

from keras_estimator.tpu.loop_control import ErrorRendezvous

__all__ = ["ErrorRendezvous"]
