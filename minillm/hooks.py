"""Looking inside a running model: the per-layer context ``Layer`` that ``attention`` and ``block``
receive, the hook points it carries, and ``GPT.run_with_cache`` / ``GPT.run_with_hooks``.

Every intermediate of the forward pass passes through a named hook point, written inline in the
formula files: ``w = ctx.look("attn.hook_pattern", softmax(s))``. With nothing recorded or edited
``look`` returns its argument (one attribute test), so the forward is the same forward. The names
follow TransformerLens (``blocks.3.attn.hook_pattern``, ``blocks.3.hook_resid_post``) so that its
tutorials read across; the table of every name, its shape and where it comes from is
docs/hooks.md (tests/model/test_hooks.py keeps it equal to what a run records).

    logits, acts = model.run_with_cache(ids)                # every activation, by name
    acts["blocks.0.attn.hook_pattern"]                       # [B, H, T, S]
    ablate = lambda z, name: z * (np.arange(z.shape[2]) != 3)[:, None]   # z [B, T, H, D]: head 3 off
    logits = model.run_with_hooks(ids, {"blocks.0.attn.hook_z": ablate})

A hook ``fn(x, name)`` returns a replacement for x (the same shape; cast to x's dtype) or None
(keep x). subtle: return a new array rather than editing x in place — x may be a view of what
the forward goes on to use, and ``blocks.{l}.hook_resid_post`` is the very array that
``blocks.{l+1}.hook_resid_pre`` records. ``run_with_cache`` and ``run_with_hooks`` run model/'s code (``GPT.forward``) on an
``EngineGPT`` too: the same weights, the readable math.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Callable

import numpy as np

from minillm.model.checks import check_ids, check_positions_and_mask


def keep(name: str, x: np.ndarray) -> np.ndarray:
    """The hook point when nothing looks: x itself."""
    return x


@dataclass
class Layer:
    """What one layer's ``attention(x, p, ctx)`` and ``block(x, p, ctx)`` need beyond x and their
    weights: the config, the mask [B or 1, T, S] bool, the RoPE angles (cos, sin) [B, 1, T, D/2]
    (None: learned positions, or a layer without RoPE), the KV cache (or None), the layer's index
    and the model's hook ``hook(full_name, x) -> x`` (None: nothing recorded or edited)."""
    config: object
    mask: np.ndarray
    rope: tuple | None = None
    cache: object = None
    index: int = 0
    hook: Callable | None = None

    def look(self, name: str, x: np.ndarray) -> np.ndarray:
        """The hook point ``blocks.{index}.{name}``: x, or what the hook replaces it with."""
        return x if self.hook is None else self.hook(f"blocks.{self.index}.{name}", x)

    def heads(self, name: str, x: np.ndarray) -> np.ndarray:
        """``look`` for x [B, n, T, D]: the hook sees (and returns) [B, T, n, D], the layout
        TransformerLens gives q, k, v and z."""
        if self.hook is None:
            return x
        return self.look(name, x.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)


def hook_names(config) -> list[str]:
    """Every hook point of a model of ``config``, in the order the forward reaches them."""
    c = config
    names = ["hook_embed"] + (["hook_pos_embed"] if c.position == "learned" else [])
    for layer in range(c.n_layers):
        rope = c.position == "rope" and layer not in c.nope_layers
        attn = (["attn.hook_v", "attn.hook_q", "attn.hook_k"]
                + (["attn.hook_rot_q", "attn.hook_rot_k"] if rope else [])
                + ["attn.hook_attn_scores", "attn.hook_pattern", "attn.hook_z"])
        mlp = ["mlp.hook_expert_indices", "mlp.hook_expert_weights"] if c.n_experts else ["mlp.hook_post"]
        if c.post_norms:                                    # OLMo 2: no norm before a sub-layer
            inner = attn + ["hook_attn_out", "hook_resid_mid"] + mlp + ["hook_mlp_out"]
        else:
            sandwich = c.sandwich_norms
            inner = (["ln1.hook_normalized"] + attn + (["ln1_post.hook_normalized"] if sandwich else [])
                     + ["hook_attn_out", "hook_resid_mid", "ln2.hook_normalized"] + mlp
                     + (["ln2_post.hook_normalized"] if sandwich else []) + ["hook_mlp_out"])
        names += [f"blocks.{layer}.{n}" for n in ["hook_resid_pre"] + inner + ["hook_resid_post"]]
    return names + ["ln_final.hook_normalized", "hook_logits"]


def check_names(config, asked) -> set[str]:
    """``asked`` (hook names) as a set; a ValueError naming the near names of an unknown one."""
    known = hook_names(config)
    for name in asked:
        if not isinstance(name, str):
            raise TypeError(f"hook names are strings, got {name!r} ({type(name).__name__})")
        if name not in known:
            near = difflib.get_close_matches(name, known, n=5, cutoff=0.6)
            raise ValueError(f"no hook point {name!r} in this model ({len(known)} names: "
                             f"model.hook_names()); near: {near or 'none'}")
    return set(asked)


def replaced(x: np.ndarray, new, name: str) -> np.ndarray:
    """What a hook returned for x: x itself for None, else the replacement, checked."""
    if new is None:
        return x
    new = np.asarray(new)
    if new.shape != x.shape:
        raise ValueError(f"the hook of {name!r} returned shape {new.shape}; it must keep "
                         f"{x.shape} (or return None to keep x)")
    return new.astype(x.dtype, copy=False)


def patterns(hook):
    """(weights, a hook): the hook appends each layer's attention weights [B, H, T, S] to the
    list ``weights``, then calls ``hook`` (None: nothing else). ``GPT.forward(return_weights=True)``."""
    weights = []

    def record(name, x):
        x = x if hook is None else hook(name, x)
        if name.endswith(".attn.hook_pattern"):
            weights.append(x)
        return x
    return weights, record


class Hooked:
    """``run_with_cache``, ``run_with_hooks`` and ``hook_names`` for ``GPT`` (a mixin: the class
    has ``config`` and ``hooked_forward``, model/gpt.py's ``GPT.forward``)."""

    def hook_names(self) -> list[str]:
        """Every hook point of this model, in the order the forward reaches them."""
        return hook_names(self.config)

    def run_with_hooks(self, ids, hooks: dict, cache=None, *, positions=None, mask=None):
        """ids [T] or [B, T] -> logits [T, V] or [B, T, V], each ``hooks[name](x, name)`` called at
        its hook point; a returned array replaces x there (None keeps it). Arguments as
        ``GPT.__call__``."""
        return self.run_with_cache(ids, names=(), cache=cache, positions=positions, mask=mask,
                                   hooks=hooks)[0]

    def run_with_cache(self, ids, names=None, cache=None, *, positions=None, mask=None,
                       hooks: dict | None = None):
        """ids [T] or [B, T] -> (logits as ``GPT.__call__`` gives them, acts): ``acts[name]`` is the
        activation at each hook point (all of them: ``names=None``; a list of names; or a
        predicate ``names(name) -> bool``), always with the batch axis B first. With a KV
        cache, a decode step's activations (S = the cache's length). ``hooks`` as in
        ``run_with_hooks``: what is recorded is what the hook returned."""
        hooks = dict(hooks or {})
        check_names(self.config, hooks)
        if names is None or callable(names):
            wanted = names or (lambda name: True)
        else:
            if isinstance(names, str):
                raise TypeError(f"names must be a list of hook names or a predicate, not the "
                                f"string {names!r} (write [{names!r}])")
            asked = check_names(self.config, names)
            wanted = asked.__contains__
        acts = {}

        def hook(name, x):
            if name in hooks:
                x = replaced(x, hooks[name](x, name), name)
            if wanted(name):
                acts[name] = x
            return x
        ids, squeeze = check_ids(ids, self.config, cache)               # [B, T] int64
        B, T = ids.shape
        positions, mask = check_positions_and_mask(positions, mask, cache, self.config, B, T)
        logits, _ = self.hooked_forward(ids, positions, mask, cache, hook=hook)
        if cache is not None:
            cache.advance(T)
        return (logits[0] if squeeze else logits), acts
