"""2.15's `inputs/queues/feeding_queue_runner`.

Unavailable here: `_FeedingQueueRunner`, a `tf.compat.v1.train.QueueRunner` whose threads
feed placeholders inside a session; keras_estimator runs no sessions or queue runners.
"""

from keras_estimator.dropin.unavailable import unavailable_class

_FeedingQueueRunner = unavailable_class(
    "inputs.queues.feeding_queue_runner._FeedingQueueRunner",
    "it is a QueueRunner whose threads feed placeholders in a tf.compat.v1.Session",
    "read the data with tf.data.Dataset (from_tensor_slices / from_generator), or with "
    "keras_estimator.inputs.numpy_input_fn / pandas_input_fn",
)
