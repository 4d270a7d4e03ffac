"""Conversations for supervised fine-tuning: a JSONL file, one conversation per line.

    {"messages": [{"role": "user", "content": "What is 2 + 2?"},
                  {"role": "assistant", "content": "4."}]}

Each line is a JSON object with one key, ``messages``: a non-empty list of messages, each with
exactly ``role`` (system, user or assistant) and ``content`` (a string); a system message may
only come first, and every conversation needs at least one non-empty assistant reply (the only
tokens the loss counts: mask.py). Blank lines are skipped. Anything else is a ValueError naming
the file and the line: nothing is skipped silently.

Example: ``read_conversations("chat.jsonl")`` -> ``[[{"role": "user", …}, {"role": "assistant",
…}], …]`` (``parse_conversations(text)`` does the same for text already read).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

ROLES = ("system", "user", "assistant")
MAX_FILE_BYTES = 1 << 30           # a conversation file
MAX_LINE_BYTES = 1 << 22           # one conversation (4 MB: ~1M tokens, past any context)
MAX_MESSAGES = 10_000              # the messages of one conversation
MAX_CONVERSATIONS = 1_000_000      # a file's conversations (each a few hundred bytes in memory)
_CHUNK = 1 << 20


def read_conversations(path: str | Path) -> list[list[dict]]:
    """The conversations of a JSONL file (UTF-8), checked line by line (see the module doc).

    The file is streamed 1 MB at a time (never read whole); a line longer than MAX_LINE_BYTES
    is refused before it is held, runs of blank lines cost a count, not a string each, and
    more than MAX_CONVERSATIONS conversations are refused at the first one too many. Lines
    end at "\\n" only (U+2028 inside a string is text, as for json.loads)."""
    from minillm.io.bounded import open_regular, shown
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder: expected one JSONL file of conversations, "
                                f"a {{\"messages\": [...]}} object per line (for example "
                                f"data/tarvessa/train.jsonl)")
    with open_regular(path) as f:          # (a FIFO, /dev/zero, a directory: refused by type)
        size = os.fstat(f.fileno()).st_size
        if size > MAX_FILE_BYTES:
            raise ValueError(f"{shown(path)}: {size:,} bytes, more than the "
                             f"{MAX_FILE_BYTES:,} a conversation file may have")
        return _parse_lines(_lines(f, str(path)), str(path))


def _lines(f, source: str):
    """(number, line bytes) of each non-blank line of the binary file ``f``."""
    number, carry = 0, b""
    while chunk := f.read(_CHUNK):
        if not carry and not chunk.strip():          # only blank lines: counted, not split
            number += chunk.count(b"\n")
            continue
        *whole, carry = (carry + chunk).split(b"\n")
        if len(carry) > MAX_LINE_BYTES:
            raise ValueError(f"{source}, line {number + len(whole) + 1}: longer than "
                             f"{MAX_LINE_BYTES:,} bytes, the most one conversation may have")
        for line in whole:
            number += 1
            if len(line) > MAX_LINE_BYTES:
                raise ValueError(f"{source}, line {number}: {len(line):,} bytes, more than the "
                                 f"{MAX_LINE_BYTES:,} one conversation may have")
            if line.strip():
                yield number, line
    if carry.strip():
        yield number + 1, carry


def parse_conversations(text: str, source: str = "<text>") -> list[list[dict]]:
    """JSONL text -> conversations; ``source`` names the file in the errors."""
    lines = ((n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip())
    return _parse_lines(lines, source)


def _parse_lines(lines, source: str) -> list[list[dict]]:
    conversations = []
    for number, line in lines:
        where = f"{source}, line {number}"
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        if len(line) > MAX_LINE_BYTES:
            raise ValueError(f"{where}: {len(line):,} characters, more than the "
                             f"{MAX_LINE_BYTES:,} one conversation may have")
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"{where}: not valid JSON ({str(exc)[:80]})") from None
        if len(conversations) == MAX_CONVERSATIONS:
            raise ValueError(f"{source}: more than {MAX_CONVERSATIONS:,} conversations, the "
                             f"most one file may have")
        conversations.append(check_conversation(record, where))
    if not conversations:
        raise ValueError(f"{source}: no conversations (expected one JSON object per line, "
                         f'{{"messages": [{{"role": ..., "content": ...}}, ...]}})')
    return conversations


def check_conversation(record, where: str = "conversation") -> list[dict]:
    """{"messages": [...]} -> its list of messages, or a ValueError saying what is wrong where."""
    if not isinstance(record, dict) or set(record) != {"messages"}:
        keys = sorted(record) if isinstance(record, dict) else type(record).__name__
        raise ValueError(f"{where}: expected an object with one key 'messages', got {keys}")
    messages = record["messages"]
    if not isinstance(messages, list) or not messages:
        raise ValueError(f"{where}: 'messages' must be a non-empty list of messages")
    if len(messages) > MAX_MESSAGES:
        raise ValueError(f"{where}: {len(messages):,} messages, more than the {MAX_MESSAGES:,} "
                         f"one conversation may have")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or set(m) != {"role", "content"}:
            raise ValueError(f"{where}: message {i} must have exactly 'role' and 'content', got "
                             f"{sorted(m) if isinstance(m, dict) else type(m).__name__}")
        if m["role"] not in ROLES:
            raise ValueError(f"{where}: message {i} has role {m['role']!r}; roles are {ROLES}")
        if not isinstance(m["content"], str):
            raise ValueError(f"{where}: message {i}'s content must be a string, got "
                             f"{type(m['content']).__name__}")
        if m["role"] == "system" and i > 0:
            raise ValueError(f"{where}: message {i} is a system message; only the first may be")
    if not any(m["role"] == "assistant" and m["content"] for m in messages):
        raise ValueError(f"{where}: no assistant reply with content (nothing to learn from)")
    return messages
