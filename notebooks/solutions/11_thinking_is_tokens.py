"""Solutions to the exercises of notebook 11."""
import re


def hide_thinking(reply):
    return re.sub(r"<think>.*?</think>", "", reply, flags=re.S)   # .*? stops at the first </think>


def answer_room(n_ctx, prompt_tokens, thinking_tokens):
    return max(0, n_ctx - prompt_tokens - thinking_tokens)


def column_work(a, b):
    xs, ys = str(a)[::-1], str(b)[::-1]                  # units first
    work, carry = [], 0
    for k in range(max(len(xs), len(ys))):
        x = int(xs[k]) if k < len(xs) else 0
        y = int(ys[k]) if k < len(ys) else 0
        total = x + y + carry                            # the carry written in the column before
        work.append((total % 10, total // 10))
        carry = total // 10
    if carry:
        work.append((carry, 0))
    return work
