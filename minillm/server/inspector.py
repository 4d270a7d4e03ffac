"""The page at ``/`` and its JSON endpoints: each step of a generation with its candidates, and a
token's attention over the context.

    GET  /                    page/index.html (+ /page.js, /page.css): plain files, no CDN
    POST /inspect/steps       {"prompt", "max_tokens", "temperature", "top_k", "top_p", "min_p",
                               "seed", "candidates": K (1-64, default 20)} -> server-sent events,
                              one per token: {"id", "piece", "text", "candidates": [{"id",
                              "piece", "logprob", "sampled"}], "tail": [[logprob, count], ...]},
                              then {"finish_reason", "ids"} and [DONE]
    POST /inspect/attention   {"tokens": [ids], "position": i} -> {"pieces", "weights": [layer]
                              [head][j]: how much position i attends to position j <= i}
    POST /inspect/lens        {"tokens": [ids], "position": i} -> {"position", "next",
                              "next_piece", "layers": [{"layer", "id", "piece", "prob",
                              "next_prob"}]}: the logit lens column of position i

A step's ``candidates`` are its K most likely tokens under the RAW model distribution
(``logprob``: log softmax of the logits, as ``Step.top``) with ``sampled``, their probability in
the distribution the draw used (after temperature, top-k, top-p, min-p: ``Step.top_sampled``).
``tail`` summarises the other V − K tokens as a 32-bin histogram of their log-probs, so that
page.js can recompute the sampled column for any slider setting — with the tail's mass from the
histogram (exact whenever top-k <= K). The attention comes from ``model(ids,
return_weights=True)`` run in the request's thread (the weights are only read).

The lens column reads position i's residual stream after each of the L blocks (row 0: the
embeddings, row L: the model's own output) through the final norm and the head
(``minillm.lens``: ``probs_ℓ = softmax(Norm_f(h_ℓ) · W_U)``, over ``model.run_with_cache``):
each row's top token and its probability, and ``next_prob``, the probability of the token that
follows position i in ``tokens`` (the one the page's user clicked), absent at the last position.
"""
from __future__ import annotations

import dataclasses
import json
import queue
from pathlib import Path

import numpy as np

from minillm.functional import log_softmax, softmax
from minillm.lens.logit_lens import final_readout, residual_names
from minillm.server import fields, jobs
from minillm.server.errors import APIError, bad
from minillm.server.slots import Tagged

PAGE = Path(__file__).resolve().parent / "page"
STATIC = {"/": ("index.html", "text/html; charset=utf-8"),
          "/page.js": ("page.js", "text/javascript; charset=utf-8"),
          "/page.css": ("page.css", "text/css; charset=utf-8")}
TAIL_BINS, MAX_CANDIDATES = 32, 64


def static(handler, path: str) -> None:
    """Send one of the page's files (read per request: editing them needs no restart)."""
    name, kind = STATIC[path]
    data = (PAGE / name).read_bytes()
    handler.send_response(200)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(data)))
    handler.send_header("Content-Security-Policy", "default-src 'self'")   # nothing from outside
    handler.end_headers()
    handler.wfile.write(data)


def steps_job(served, body: dict):
    """A completion job with K candidates per step and the logits kept."""
    K = fields.integer(body, "candidates", 20, low=1, high=MAX_CANDIDATES)
    K = min(K, served.model.config.vocab_size)
    job = jobs.completion_job(served, {**body, "logprobs": None, "stream": False})
    job.settings = dataclasses.replace(job.settings, logprobs=True, top_n=K)
    return job, K


def step_view(served, step, logits: np.ndarray) -> dict:
    """One step for the page: the token, its candidates (raw and sampled), the tail histogram."""
    tok = served.tokenizer
    logp = log_softmax(logits)                                     # [V] raw
    top = [i for i, _ in step.top]
    rest = np.delete(logp, top)                                    # [V - K]
    rest = rest[np.isfinite(rest)]
    counts, edges = np.histogram(rest, bins=TAIL_BINS) if rest.size else ([], [0.0])
    tail = [[float((edges[b] + edges[b + 1]) / 2), int(n)] for b, n in enumerate(counts) if n]
    candidates = [{"id": i, "piece": tok.decode([i]), "logprob": lp, "sampled": sp}
                  for (i, lp), sp in zip(step.top, step.top_sampled)]
    return {"id": step.id, "piece": tok.decode([step.id]), "text": step.text,
            "candidates": candidates, "tail": tail}


def steps(handler) -> None:
    """``POST /inspect/steps``: the generation, one event per token (see the module docstring)."""
    served = handler.server.served
    job, K = steps_job(served, handler.body)
    if handler.server.closing:
        raise APIError(503, "the server is shutting down")
    shared = queue.Queue()
    live = handler.server.engine.submit(job, out=Tagged(shared, 0), keep_logits=True)
    handler.close_connection = handler.streaming = True
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    logits, ids, finish = None, list(job.prompt), None
    try:
        for _, (kind, *rest) in handler._events(shared):
            if kind == "logits":
                logits = rest[0]
            elif kind == "step" and rest[0].id is not None:
                ids.append(rest[0].id)
                send(handler, step_view(served, rest[0], logits))
            elif kind == "step":                                   # held text released
                send(handler, {"id": None, "text": rest[0].text})
            else:
                finish = rest[0] if kind == "end" else "error"
                break
        send(handler, {"finish_reason": finish, "ids": ids, "prompt_tokens": len(job.prompt)})
        handler.wfile.write(b"data: [DONE]\n\n")
    finally:
        handler.server.engine.cancel(live)


def send(handler, obj) -> None:
    handler.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
    handler.wfile.flush()


def context(served, body: dict) -> tuple[list[int], int]:
    """The ``tokens`` and ``position`` of an attention or lens request, checked."""
    ids = jobs.prompt_ids(served, body.get("tokens"), "tokens")
    if len(ids) > served.capacity:
        raise bad("tokens", f"at most {served.capacity} tokens (the server's context), got {len(ids)}")
    return ids, fields.integer(body, "position", len(ids) - 1, low=0, high=len(ids) - 1)


def attention(handler) -> dict:
    """``POST /inspect/attention``: every layer's and head's weights of one query position."""
    served = handler.server.served
    ids, i = context(served, handler.body)
    _, weights = served.model(np.asarray(ids[:i + 1])[None], return_weights=True)   # L x [1, H, T, T]
    rows = [w[0, :, i, :i + 1] for w in weights]                  # L x [H, i + 1]
    return {"position": i, "pieces": [served.tokenizer.decode([t]) for t in ids[:i + 1]],
            "weights": [np.round(r.astype(np.float64), 6).tolist() for r in rows]}


def lens(handler) -> dict:
    """``POST /inspect/lens``: the logit lens column of one position (see the module docstring)."""
    served = handler.server.served
    model, decode = served.model, lambda t: served.tokenizer.decode([int(t)])
    ids, i = context(served, handler.body)
    names = residual_names(model.config.n_layers)
    _, acts = model.run_with_cache(np.asarray(ids[:i + 1])[None], names=names)   # each [1, T, C]
    stream = np.stack([acts[n][0, i] for n in names])              # [L + 1, C]: position i only
    probs = softmax(final_readout(model, stream))                  # [L + 1, V]
    top = probs.argmax(-1)                                         # [L + 1]
    after = ids[i + 1] if i + 1 < len(ids) else None               # the token that followed
    layers = [{"layer": l, "id": int(t), "piece": decode(t), "prob": float(probs[l, t]),
               **({"next_prob": float(probs[l, after])} if after is not None else {})}
              for l, t in enumerate(top)]
    return {"position": i, "next": after, "next_piece": None if after is None else decode(after),
            "layers": layers}
