"""2.15's `canned/linear_optimizer` package (SDCA's utilities are in python/utils)."""
