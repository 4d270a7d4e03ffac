"""The engine: the model's math laid out for speed, beside ``minillm/model/`` (which it imports;
model/ never imports it).

What lives here, and nowhere in model/: the parameter arena (every weight a view into one
contiguous block, ``arena.py``), weights stored by output row and the product that suits the
number of rows (``rows.py``), the joined Q|K|V and gate|up products (``arena.py``,
``layers.py``), attention a block of queries at a time for long prompts (``layers.py``), the
norms and activations in place (``ops.py``), the forward pass over all of it (``gpt.py``), the
decode step of one token a row with its Python cut down (``step.py``), and the machine's plan:
which layout each product shape is stored in and which form multiplies it by 1-32 rows, timed
once on the machine (``plan.py``, over the forms of ``forms.py`` timed by ``measure.py`` for the
facts of ``machine.py``; the attention's query block by ``measure_attention.py``) and stored
in the user's cache folder (``plan_file.py``);
``MINILLM_PLAN=off`` runs the fixed rules instead (``arena.py``'s "by_width", ``rows.py``).

The one seam: ``EngineGPT``, a subclass of ``minillm.model.GPT`` that overrides ``forward`` (and
holds an ``Arena``). Why this seam and not the others considered:
- weight objects that NumPy's ``@`` hands over to (``__array_ufunc__ = None`` + ``__rmatmul__``)
  would let model/'s ``x @ w`` run on tiles unchanged, but the joined products and the query
  blocks change the ORDER of the computation (one product for three, attention per block), which
  no weight object can do from inside ``x @ w``; they would have stayed in model/.
- parameter classes whose projections are methods would put a method call where the reader
  expects the formula ``x @ W``.
A subclass keeps model/ the formulas over plain ndarrays, keeps the input checks and the public
call (``model(ids, cache=…, positions=…, mask=…, last_only=…, return_weights=…)``) in one place,
and puts every speed decision in one ``forward`` that reads top to bottom like the model's.

``load_model(path)`` (``minillm/loading.py``) loads into an arena and returns an engine model;
``load_model(path, fast=False)`` a ``GPT`` of plain ndarrays that runs only model/ code.
``to_engine(model)`` copies any model into the engine; ``plain_params`` copies back out.
The engine's logits equal the model's up to float32 rounding, and its greedy tokens are the same
(tests/engine/test_engine_equals_model.py).
"""
from minillm.engine.arena import Arena, Joined, empty_arena, in_arena, to_arena
from minillm.engine.gpt import EngineGPT, plain_params, to_engine
from minillm.engine.plan import Plan, plan_for
from minillm.engine.rows import product

__all__ = ["Arena", "EngineGPT", "Joined", "Plan", "empty_arena", "in_arena", "plain_params",
           "plan_for", "product", "to_arena", "to_engine"]
