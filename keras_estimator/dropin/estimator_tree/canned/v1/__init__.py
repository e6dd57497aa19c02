"""2.15's `canned.v1` package (its modules were test utilities, left out of the tree)."""
