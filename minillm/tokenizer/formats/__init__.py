"""Tokenizer files: reading each format into the keyword arguments of `Tokenizer(...)` and
writing a tokenizer back (dispatch.py chooses the format by name and content)."""
from .dispatch import read, write

__all__ = ["read", "write"]
