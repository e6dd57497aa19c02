"""2.15's generated v1 API package."""
