"""The harness version (one place; the package metadata says the same)."""

__version__ = "0.1.0"
