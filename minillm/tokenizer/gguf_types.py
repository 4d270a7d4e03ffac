"""What GGUF's `tokenizer.ggml.token_type` says of a token, and what llama.cpp makes of it.

Shared by the two GGUF vocabulary readers (gguf_meta.py: byte-level BPE; spm_meta.py:
SentencePiece-style), their writer (io/gguf/vocab.py), spm.py and hf_spm.py, in a module of their
own so that none of them imports another (no import cycles: tests/test_import_graph.py).

    >>> user_defined_tokens(["a", "<|im_end|>", "<x>"], [1, 4, 4])
    ['<x>']
"""
from __future__ import annotations

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6   # token_type's values
# llama.cpp makes these texts control tokens whatever their type says (end-of-generation and
# fill-in-the-middle markers: llama-vocab.cpp), so a user-defined one is not split out of text
LLAMA_CPP_CONTROL_TEXTS = frozenset({
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<｜end▁of▁sentence｜>", "[e~[", "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
    "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>", "<|fim_suffix|>",
    "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>",
    "<|suffix|>", "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>",
    "▁<MID>", "<|code_middle|>", "<|middle|>", "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>",
    "[PAD]", "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>",
    "<|file_sep|>"})
BYTE_TOKEN = "<0x{:02X}>"  # the byte-fallback token of one byte: <0x0A> is "\n"
SPACE = "\u2581"          # "▁", SentencePiece's visible space


def user_defined_tokens(tokens: list[str], types: list[int]) -> list[str]:
    """The tokens llama.cpp splits out of plain text: user-defined, and not control-looking."""
    return [t for t, ty in zip(tokens, types)
            if ty == USER_DEFINED and t not in LLAMA_CPP_CONTROL_TEXTS]
