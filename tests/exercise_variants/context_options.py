"""Variants of the exercises of notebooks 08 (whole turns), 09 (full options) and 11 (column work)."""
import numpy as np

from .common import SOLUTIONS as S, Attempt, forgets_return

from exercise_checks.context_options import without_carry_in  # noqa: E402  (notebooks/ is on the path: common.py)


def fit_by_total(turns, n_ctx):                          # right: counts what to drop first
    total, drop = sum(n for _, n in turns), 0
    while total > n_ctx and drop < len(turns) - 1:
        drop += 1
        total -= turns[drop][1]
    return [turns[0], *turns[1 + drop:]]


def fit_and_cut(turns, n_ctx):                           # trims the oldest turn instead of dropping it
    kept = [list(t) for t in turns]
    while sum(n for _, n in kept) > n_ctx and len(kept) > 1:
        over = sum(n for _, n in kept) - n_ctx
        if kept[1][1] > over:
            kept[1][1] -= over
        else:
            kept.pop(1)
    return [tuple(t) for t in kept]


def fit_from_the_start(turns, n_ctx):                    # drops the system prompt first
    kept = list(turns)
    while sum(n for _, n in kept) > n_ctx and kept:
        kept.pop(0)
    return kept


def fit_newest_first(turns, n_ctx):                      # drops the newest turns
    kept = list(turns)
    while sum(n for _, n in kept) > n_ctx and len(kept) > 1:
        kept.pop()
    return kept


def fit_one_too_many(turns, n_ctx):                      # drops while the total is >= n_ctx
    kept = list(turns)
    while sum(n for _, n in kept) >= n_ctx and len(kept) > 1:
        kept.pop(1)
    return kept


def score_in_log_space(next_logprobs, prompt, options):  # right: log-sum-exp normalisation
    sums = np.array([sum(next_logprobs(prompt + o[:k])[o[k]] for k in range(len(o))) for o in options])
    return np.exp(sums - (sums.max() + np.log(np.exp(sums - sums.max()).sum())))


def score_products(next_logprobs, prompt, options):      # right: products of probabilities
    p = [np.prod([np.exp(next_logprobs(prompt + o[:k])[o[k]]) for k in range(len(o))]) for o in options]
    return (np.array(p) / sum(p)).tolist()


def score_first(next_logprobs, prompt, options):
    z = np.array([next_logprobs(prompt)[o[0]] for o in options])
    return np.exp(z) / np.exp(z).sum()


def score_mean(next_logprobs, prompt, options):
    s = np.array([np.mean([next_logprobs(prompt + o[:k])[o[k]] for k in range(len(o))]) for o in options])
    return np.exp(s) / np.exp(s).sum()


def score_from_prompt(next_logprobs, prompt, options):
    s = np.array([sum(next_logprobs(prompt)[t] for t in o) for o in options])
    return np.exp(s) / np.exp(s).sum()


def score_unnormalised(next_logprobs, prompt, options):
    return np.exp([sum(next_logprobs(prompt + o[:k])[o[k]] for k in range(len(o))) for o in options])


def work_by_divmod(a, b):                                # right: arithmetic instead of strings
    work, carry = [], 0
    while a or b or carry:
        carry, digit = divmod(a % 10 + b % 10 + carry, 10)
        work.append((digit, carry))
        a, b = a // 10, b // 10
        if not (a or b) and carry:
            work.append((carry, 0))
            break
    return work or [(0, 0)]


def work_no_carry_in(a, b):                              # the bug the checker's hint names
    return without_carry_in((a, b))


def work_carry_over_ten(a, b):                           # carries only when the column exceeds 10
    xs, ys = str(a)[::-1], str(b)[::-1]
    work, carry = [], 0
    for k in range(max(len(xs), len(ys))):
        total = (int(xs[k]) if k < len(xs) else 0) + (int(ys[k]) if k < len(ys) else 0) + carry
        carry = 1 if total > 10 else 0
        work.append((total - 10 * carry, carry))
    if carry:
        work.append((carry, 0))
    return work


VARIANTS = {
    "fit_turns": (
        [Attempt("the solution", S["fit_turns"]), Attempt("counts the turns to drop first", fit_by_total),
         Attempt("lists instead of tuples", lambda t, n: [list(x) for x in S["fit_turns"](t, n)])],
        [Attempt("drops the system prompt too", fit_from_the_start, hint="the system prompt stays"),
         Attempt("drops the newest turns", fit_newest_first, hint="those are the oldest turns kept"),
         Attempt("cuts the oldest turn short", fit_and_cut, hint="a turn is dropped whole"),
         Attempt("drops one too many when it fits exactly", fit_one_too_many),
         forgets_return(S["fit_turns"])]),
    "score_full_options": (
        [Attempt("the solution", S["score_full_options"]), Attempt("log-sum-exp", score_in_log_space),
         Attempt("products of probabilities, a list", score_products)],
        [Attempt("scores the first token only", score_first, hint="that scores only each option's first token"),
         Attempt("a mean per token", score_mean, hint="a mean per token is a different rule"),
         Attempt("predicts every token from the prompt alone", score_from_prompt,
                 hint="each token after the first is predicted"),
         Attempt("forgets to normalise", score_unnormalised, hint="normalise over the options"),
         forgets_return(S["score_full_options"])]),
    "column_work": (
        [Attempt("the solution", S["column_work"]), Attempt("divmod on the numbers", work_by_divmod),
         Attempt("lists instead of tuples", lambda a, b: [list(p) for p in S["column_work"](a, b)])],
        [Attempt("forgets the carry in", work_no_carry_in, hint="each column adds the carry"),
         Attempt("writes left to right", lambda a, b: S["column_work"](a, b)[::-1], hint="right to left"),
         Attempt("carries only above 10", work_carry_over_ten),
         Attempt("forgets the last carry", lambda a, b: [w for w in S["column_work"](a, b)][:max(len(str(a)), len(str(b)))],
                 hint="a carry out of the last column is a new digit"),
         forgets_return(S["column_work"])]),
}
