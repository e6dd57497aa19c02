"""2.15's `canned` package: its modules hold the canned estimators (see each module)."""
