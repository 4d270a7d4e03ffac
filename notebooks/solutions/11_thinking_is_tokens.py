"""Solutions to the exercises of notebook 11."""
import re


def hide_thinking(reply):
    return re.sub(r"<think>.*?</think>", "", reply, flags=re.S)   # .*? stops at the first </think>


def answer_room(n_ctx, prompt_tokens, thinking_tokens):
    return max(0, n_ctx - prompt_tokens - thinking_tokens)
