"""A conversation with a chat model: ``conversation.py`` (``Chat``: the history, one KV cache
across turns, streamed replies), ``chatml.py`` (the ChatML text format and its stop tokens) and
``formats/`` (each family's format by name: chatml, smollm2, qwen2.5, qwen3, llama3, llama3.1,
llama3.2, gemma2, gemma3, phi3, phi3.5, mistral, mistral-tekken, olmo2, smollm3,
smollm3-unsloth; ``formats/detect.py`` picks one
from the model's chat template)."""
from minillm.chat.chatml import DEFAULT_SYSTEM, chatml_ids, render_chatml
from minillm.chat.conversation import Chat
from minillm.chat.formats import ChatFormat, get_format

__all__ = ["Chat", "ChatFormat", "DEFAULT_SYSTEM", "chatml_ids", "get_format", "render_chatml"]
