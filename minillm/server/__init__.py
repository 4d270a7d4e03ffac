"""An OpenAI-compatible HTTP server over the library, standard library only (``python -m
minillm serve``): any OpenAI client, chat UI or agent framework can talk to a minillm model.

In reading order: ``errors`` (OpenAI's error JSON) · ``fields`` (a body's fields, typed and
ranged) · ``structured`` (response_format -> a constraint) · ``jobs`` (a body -> prompt ids and
GenerationSettings) · ``slots`` (the continuous batcher with one sampler and generator per slot,
and the batch thread) · ``replies`` (OpenAI's reply and chunk shapes) · ``streaming`` (a reply
written whole or as server-sent events, the client watched) · ``handler`` (routing, the gate) ·
``app`` (the served model, the server, its limits and shutdown) · ``inspector`` and ``page/``
(the page at ``/`` and its JSON endpoints).

Example::

    from minillm.server import make_server
    server = make_server(model, tokenizer, name="tiny-llama", port=0)   # 127.0.0.1, a free port
    server.serve_forever()
"""
from minillm.server.app import Server, make_server

__all__ = ["Server", "make_server"]
