"""Model tests: torch runs single-threaded, set once for the whole suite in tests/conftest.py."""
