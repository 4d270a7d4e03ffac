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
from pathlib import Path

ROLES = ("system", "user", "assistant")
MAX_FILE_BYTES = 1 << 30


def read_conversations(path: str | Path) -> list[list[dict]]:
    """The conversations of a JSONL file (UTF-8), checked line by line (see the module doc)."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder: expected one JSONL file of conversations, "
                                f"a {{\"messages\": [...]}} object per line (for example "
                                f"data/tarvessa/train.jsonl)")
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file (a JSONL of conversations)")
    if not path.is_file():                              # (a folder, a FIFO, a device)
        raise ValueError(f"{path} is not a regular file (a JSONL of conversations is one)")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"{path}: {path.stat().st_size:,} bytes, more than the "
                         f"{MAX_FILE_BYTES:,} a conversation file may have")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_conversations(text, str(path))


def parse_conversations(text: str, source: str = "<text>") -> list[list[dict]]:
    """JSONL text -> conversations; ``source`` names the file in the errors."""
    conversations = []
    for number, line in enumerate(text.split("\n"), start=1):   # (not splitlines: U+2028 is text)
        if not line.strip():
            continue
        where = f"{source}, line {number}"
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"{where}: not valid JSON ({str(exc)[:80]})") from None
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
