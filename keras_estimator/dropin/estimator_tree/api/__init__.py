"""2.15's generated API package (`tensorflow_estimator.python.estimator.api`)."""
