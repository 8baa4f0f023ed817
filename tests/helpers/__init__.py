"""Shared test helpers (one place, never copied)."""
