"""2.15's `tools` package: the v1-to-v2 checkpoint converter and the analytics no-ops."""
