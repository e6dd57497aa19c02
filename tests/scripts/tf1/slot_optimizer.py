"""A hand-written `tf.train.Optimizer` subclass with its slots made by `tf.get_variable`, as
TF 1.x research code wrote its optimizers (plain momentum here)."""

import re

import tensorflow as tf


class MomentumWithNamedSlots(tf.train.Optimizer):
    def __init__(self, learning_rate, momentum=0.9, name="MomentumWithNamedSlots"):
        super().__init__(False, name)
        self.learning_rate = learning_rate
        self.momentum = momentum

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        updates = []
        for grad, var in grads_and_vars:
            if grad is None:
                continue
            var_name = re.match("^(.*):\\d+$", var.name).group(1)
            velocity = tf.get_variable(
                var_name + "/velocity",
                shape=var.shape.as_list(),
                dtype=tf.float32,
                trainable=False,
                initializer=tf.zeros_initializer(),
            )
            new_velocity = self.momentum * velocity + grad
            updates += [
                velocity.assign(new_velocity),
                var.assign_sub(self.learning_rate * new_velocity),
            ]
        if global_step is not None:
            updates.append(global_step.assign_add(1))
        return tf.group(*updates, name=name)
