"""2.15's `canned/linear_optimizer/python/utils`: the SDCA model and its sharded hash table."""
