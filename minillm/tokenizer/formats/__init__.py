"""Tokenizer files: each format read into the keyword arguments of `Tokenizer(...)` (or of
`SentencePieceBPE(...)`) and a tokenizer written back. dispatch.py chooses the reader and the
writer by name and content; load.py's `load_tokenizer` builds the class a file needs (imported
from minillm.tokenizer, not here: load.py builds on tokenizer.py, whose files.py reads through
this package); gguf/ holds GGUF vocabularies, hf/ tokenizer.json."""
from .dispatch import read, write

__all__ = ["read", "write"]
