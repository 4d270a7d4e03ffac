"""A conversation with a chat model: ``conversation.py`` (``Chat``: the history, one KV cache
across turns, streamed replies) and ``chatml.py`` (the ChatML text format and its stop tokens)."""
from minillm.chat.chatml import DEFAULT_SYSTEM, chatml_ids, render_chatml
from minillm.chat.conversation import Chat

__all__ = ["Chat", "DEFAULT_SYSTEM", "chatml_ids", "render_chatml"]
