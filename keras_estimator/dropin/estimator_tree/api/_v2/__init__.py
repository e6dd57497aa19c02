"""2.15's generated v2 API package."""
