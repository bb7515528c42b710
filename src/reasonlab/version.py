"""The package version, on the ground floor so that run records can name it without importing the package's
public face (``reasonlab/__init__.py``, which sits above everything it re-exports)."""

__version__ = "0.1.0"
