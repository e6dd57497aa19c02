"""2.15's `canned/linear_optimizer/python` package."""
