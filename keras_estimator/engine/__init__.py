"""The translation core: a user's model_fn becomes the steps of a keras.Model."""
