"""Notebooks 08, 09 and 11: keeping a conversation in its window, scoring whole options, and the
written work of column addition."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .core import Exercise, Hint, Wrong, as_array, fmt, kind, output_hint, softmax64


# ---- 08: dropping whole turns, oldest first, keeping the system prompt --------------------------

def fit_turns_reference(turns, n_ctx):
    kept = list(turns)
    while sum(n for _, n in kept) > n_ctx and len(kept) > 1:
        del kept[1]                                     # the oldest turn after the system prompt
    return kept


def as_turns(got) -> list[tuple]:
    """``got`` as a list of (role, n_tokens) pairs, else Wrong."""
    if not isinstance(got, (list, tuple)) or not all(isinstance(t, (list, tuple)) and len(t) == 2 for t in got):
        raise Wrong(f"you returned {kind(got)}; expected a list of the kept (role, n_tokens) turns")
    return [(role, int(n)) for role, n in got]


def judge_fit_turns(fn, case):
    turns, n_ctx = case
    want = fit_turns_reference(turns, n_ctx)
    got = as_turns(fn([tuple(t) for t in turns], n_ctx))
    if got != want:
        return (f"you kept {got}; dropping whole turns, oldest first after the system prompt, until "
                f"the {sum(n for _, n in want)} tokens left fit n_ctx = {n_ctx}, keeps {want}")
    return None


def drops_system_prompt(case):
    turns, n_ctx = case
    kept = list(turns)
    while sum(n for _, n in kept) > n_ctx and kept:
        del kept[0]
    return kept


def drops_newest(case):
    turns, n_ctx = case
    kept = list(turns)
    while sum(n for _, n in kept) > n_ctx and len(kept) > 1:
        del kept[-1]
    return kept


def cut_a_turn(case, got) -> bool:
    """The symptom of trimming tokens off a turn instead of dropping it: a count that was not given."""
    try:
        return any(tuple(t) not in [tuple(u) for u in case[0]] for t in got)
    except TypeError:
        return False


def conversation(sizes, n_ctx):
    roles = ["system"] + ["user", "assistant"] * len(sizes)
    return [(roles[i], n) for i, n in enumerate(sizes)], n_ctx


# ---- 09: scoring full options --------------------------------------------------------------------

def toy_model(seed, V):
    """next_logprobs(ids) -> [V] log-probabilities that depend on the last two ids (a fixed table)."""
    table = np.random.default_rng(seed).normal(size=(V + 1, V + 1, V)) * 2
    table -= np.log(np.exp(table).sum(axis=-1, keepdims=True))
    def next_logprobs(ids):
        ids = [V, V, *ids]                                 # V: "nothing before"
        return table[ids[-2], ids[-1]].copy()
    return next_logprobs


def option_logprobs(next_logprobs, prompt, options):
    return np.array([sum(next_logprobs(list(prompt) + list(o[:k]))[o[k]] for k in range(len(o)))
                     for o in options])


def judge_score_options(fn, case):
    seed, V, prompt, options = case
    model = toy_model(seed, V)
    want = softmax64(option_logprobs(model, prompt, options))
    got = as_array(fn(model, list(prompt), [list(o) for o in options]), (len(options),),
                   "one probability per option")
    if not np.allclose(got, want, rtol=1e-6, atol=1e-9):
        return (f"you returned {fmt(got)}; P(option) ∝ exp(Σ_k log p(token k | prompt + the option's "
                f"earlier tokens)) = {fmt(want)}")
    return None


def first_token_only(case):
    seed, V, prompt, options = case
    model = toy_model(seed, V)
    return softmax64(np.array([model(list(prompt))[o[0]] for o in options]))


def mean_per_token(case):
    seed, V, prompt, options = case
    model = toy_model(seed, V)
    sums = option_logprobs(model, prompt, options)
    return softmax64(sums / np.array([len(o) for o in options]))


def prompt_every_time(case):
    seed, V, prompt, options = case
    model = toy_model(seed, V)
    return softmax64(np.array([sum(model(list(prompt))[t] for t in o) for o in options]))


def unnormalised(case):
    seed, V, prompt, options = case
    return np.exp(option_logprobs(toy_model(seed, V), prompt, options))


def option_case(seed, V, prompt, lengths):
    rng = np.random.default_rng(seed)
    options, seen = [], set()
    for n in lengths:
        o = tuple(int(i) for i in rng.integers(0, V, n))
        if o not in seen:
            seen.add(o)
            options.append(list(o))
    return seed, V, prompt, options


# ---- 11: the written work of column addition -----------------------------------------------------

def column_work_reference(a, b):
    xs, ys = str(a)[::-1], str(b)[::-1]
    work, carry = [], 0
    for k in range(max(len(xs), len(ys))):
        total = (int(xs[k]) if k < len(xs) else 0) + (int(ys[k]) if k < len(ys) else 0) + carry
        work.append((total % 10, total // 10))
        carry = total // 10
    if carry:
        work.append((carry, 0))
    return work


def as_work(got) -> list[tuple]:
    if not isinstance(got, (list, tuple)) or not all(isinstance(t, (list, tuple)) and len(t) == 2 for t in got):
        raise Wrong(f"you returned {kind(got)}; expected a list of (digit, carry) pairs, one per column")
    return [(int(d), int(c)) for d, c in got]


def judge_column_work(fn, case):
    a, b = case
    want = column_work_reference(a, b)
    got = as_work(fn(a, b))
    if got != want:
        return f"you wrote {got}; the columns, right to left, are {want} (sum {a + b})"
    return None


def without_carry_in(case):
    a, b = case
    xs, ys = str(a)[::-1], str(b)[::-1]
    out = []
    for k in range(max(len(xs), len(ys))):
        total = (int(xs[k]) if k < len(xs) else 0) + (int(ys[k]) if k < len(ys) else 0)
        out.append((total % 10, total // 10))
    return out


def left_to_right(case):
    return column_work_reference(*case)[::-1]


def no_last_carry(case):
    work = column_work_reference(*case)
    return work[:-1] if len(work) > max(len(str(case[0])), len(str(case[1]))) else work


EXERCISES = [
    Exercise("fit_turns", "fit(turns, n_ctx) -> the turns kept: turns is a list of (role, n_tokens), "
             "turns[0] the system prompt; drop whole turns, oldest first, never the system prompt, "
             "until the kept tokens fit n_ctx (or only the system prompt is left).", judge_fit_turns,
             lambda c: f"turns {c[0]}, n_ctx = {c[1]}",
             st.builds(conversation, st.lists(st.integers(1, 20), min_size=1, max_size=7), st.integers(1, 80)),
             (conversation([5, 10, 10, 10], 30), conversation([5, 10, 10, 10], 25), conversation([5, 8, 3], 16),
              conversation([30, 5], 10), conversation([4, 9], 13)),
             (output_hint("the system prompt stays: drop the oldest turn AFTER it", drops_system_prompt),
              output_hint("those are the oldest turns kept: drop the oldest, keep the newest", drops_newest),
              Hint("a turn is dropped whole, never cut: keep its token count as it is", cut_a_turn))),
    Exercise("score_full_options", "score(next_logprobs, prompt, options) -> [n] probabilities: each "
             "option's Σ_k log p(token k | prompt + the option's tokens before k), normalised over the "
             "options (a softmax of the sums). next_logprobs(ids) -> [V] log-probabilities.",
             judge_score_options, lambda c: f"prompt {c[2]}, options {c[3]} (toy model {c[0]}, V = {c[1]})",
             st.builds(option_case, st.integers(0, 999), st.integers(3, 6),
                       st.lists(st.integers(0, 2), min_size=1, max_size=3),
                       st.lists(st.integers(1, 4), min_size=2, max_size=4)),
             (option_case(1, 5, [0, 1], [1, 3, 2]), option_case(2, 4, [2], [3, 1])),
             (output_hint("that scores only each option's first token: add the log p of every token",
                          first_token_only),
              output_hint("a mean per token is a different rule: the contract is the sum", mean_per_token),
              output_hint("each token after the first is predicted from the prompt AND the option's earlier "
                          "tokens: feed them", prompt_every_time),
              output_hint("normalise over the options: divide by the sum (a softmax of the log-prob sums)",
                          unnormalised))),
    Exercise("column_work", "work(a, b) -> the written work of a + b, right to left: one (digit, "
             "carry out) per column, the carry of each column added in the next; a carry out of the "
             "last column is one more column (digit = that carry, carry 0).", judge_column_work,
             lambda c: f"a = {c[0]}, b = {c[1]}", st.tuples(st.integers(0, 99_999), st.integers(0, 99_999)),
             ((57, 68), (999, 1), (120, 305), (5, 5), (0, 0)),
             (output_hint("each column adds the carry written in the column before it", without_carry_in),
              output_hint("right to left: the first pair is the units column", left_to_right),
              output_hint("a carry out of the last column is a new digit: one more (carry, 0)", no_last_carry))),
]
