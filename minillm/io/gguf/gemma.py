"""Gemma 2 / 3 (and a Mistral's window) in GGUF: the metadata llama.cpp's converter writes, and the
numbers llama.cpp fixes for itself.

llama.cpp's ``gemma2`` and ``gemma3`` architectures (``convert_hf_to_gguf.py``; ``llama-model.cpp``
reads them) store, beyond a Llama's keys:

    {arch}.attention.key_length / value_length   head_dim (always written)
    {arch}.attention.sliding_window              W
    gemma2.attn_logit_softcapping                the attention soft-cap (llama.cpp default 50)
    {arch}.final_logit_softcapping               the logits' soft-cap (gemma2 default 30; gemma3:
                                                 none unless given)
    tensors  blk.{i}.post_attention_norm / post_ffw_norm (the norms after each sub-layer),
             ffn_norm (Gemma's pre_feedforward_layernorm), attn_q_norm / attn_k_norm (Gemma 3)

and every RMSNorm gain as 1 + w, which is what minillm keeps too (``io/hf_names.py``). Q and K
are not permuted (llama.cpp rotates Gemma's heads in halves, as HF does). llama.cpp fixes the
rest itself, and minillm reads a file without the keys below as llama.cpp runs it:

    which layers slide      gemma2: layers 0, 2, 4, … ; gemma3: all but 5, 11, 17, …
    the sliding RoPE base   gemma3: 10,000
    the query scale         1/√head_dim (1/√(C/H) for the 27B models: 46 / 62 layers)

minillm writes its numbers for these into keys llama.cpp's loader names for other architectures
(``{arch}.attention.sliding_window_pattern``: one bool per layer, true = sliding;
``{arch}.rope.freq_base_swa``) and one of its own (``{arch}.attention.query_pre_attn_scalar``), so
its files read back exactly; llama.cpp runs them with its fixed numbers (the same for every
released Gemma 2 / 3 text model). A Mistral's window goes into ``llama.attention.sliding_window``:
llama.cpp's llama architecture has no window and ignores it (its converter does not write it).

The limit that follows (``llama_cpp_notes``, which ``minillm export`` prints): llama.cpp (b9190,
cyllama 0.2.18) runs a gemma3 file with full attention on layers 5, 11, 17, … only, whatever
its sliding_window_pattern, and keeps those layers' keys in a cache of their own. A Gemma 3 of
fewer than 6 layers has none, that cache gets no buffer, and the first decode aborts the process
with ``GGML_ASSERT(buffer) failed`` (ggml-backend.cpp:194): the file is sound (minillm reads it
back exactly; hidden size, heads, window and vocabulary change nothing; 6 and 12 layers run,
tests/io/test_gguf_gemma3_llama_cpp.py). gemma2 is the same with every 2nd layer: a 1-layer
Gemma 2 aborts. A model whose full layers sit elsewhere runs in llama.cpp with its layers'
attention changed, so with other logits.
"""
from __future__ import annotations

from minillm.families import families, family, family_of_gguf
from minillm.io.gguf.values import metadata_number
from minillm.io.gguf.write import ARRAY, BOOL, FLOAT32, UINT32

# ("gemma2", "gemma3"): the architectures whose numbers llama.cpp fixes (families/: gguf_fixed)
GEMMA = tuple(a for f in families().values() if f.gguf_fixed for a in f.gguf_architectures)


def fixed(arch) -> dict | None:
    """What llama.cpp fixes for a file of ``arch`` (its family's ``gguf_fixed``; None: nothing)."""
    own = family_of_gguf(arch) if isinstance(arch, str) else None
    return own.gguf_fixed if own is not None else None
POST_NORMS = family("gemma2").gguf_tensors   # the norms after each sub-layer (for old imports)


def gemma_arch(config) -> str:
    """"gemma2" or "gemma3" (q/k norms) for a Gemma config llama.cpp runs, else a ValueError."""
    c = config
    if (c.norm, c.ffn, c.position, c.embed_scale) != ("rmsnorm", "geglu", "rope", True) \
            or c.attn_bias or c.mlp_bias or not c.tie_embeddings or c.rope_scaling is not None \
            or c.sliding_window is None:
        raise ValueError("llama.cpp's gemma2 / gemma3 take sandwich norms with RMSNorm, GeGLU, "
                         "RoPE without scaling, embeddings × √C, tied embeddings, no biases and a "
                         "sliding window: this config cannot be exported")
    own = next(f for f in families().values()         # gemma3 with q/k norms, else gemma2
               if f.gguf_fixed and f.switches.get("qk_norm", False) == c.qk_norm)
    if own.gguf_fixed["caps"][0] is not None and (c.attn_softcap is None or c.final_softcap is None):
        raise ValueError("llama.cpp's gemma2 soft-caps the scores and logits (50 and 30 when the "
                         "file names none): a config without them cannot be exported as gemma2")
    return own.gguf_architectures[0]


def window_metadata(config, arch: str) -> dict:
    """The sliding window's and Gemma's keys (module docstring) for ``save_gguf``."""
    c, a = config, arch
    meta = {}
    if c.sliding_window is not None:
        meta[f"{a}.attention.sliding_window"] = (UINT32, c.sliding_window)
    if fixed(arch) is None:
        if "full" in (c.layer_types or ()):
            raise ValueError("llama.cpp's llama has no sliding-window layers; a window on some "
                             "layers only cannot be exported")
        return meta
    meta |= {f"{a}.attention.key_length": (UINT32, c.d_head),
             f"{a}.attention.value_length": (UINT32, c.d_head),
             f"{a}.attention.sliding_window_pattern": (ARRAY, (BOOL, [t == "sliding"
                                                                     for t in c.layer_types]))}
    for key, value in ((f"{a}.attn_logit_softcapping", c.attn_softcap),
                       (f"{a}.final_logit_softcapping", c.final_softcap),
                       (f"{a}.rope.freq_base_swa", c.rope_local_theta),
                       (f"{a}.attention.query_pre_attn_scalar", c.query_pre_attn_scalar)):
        if value is not None:
            meta[key] = (FLOAT32, value)
    return meta


def window_config(meta: dict, arch: str, n_layers: int, d_model: int, n_heads: int) -> dict:
    """The ModelConfig fields a file's window and Gemma keys give (``gguf_config``)."""
    window, own = meta.get(f"{arch}.attention.sliding_window"), family_of_gguf(arch)
    if fixed(arch) is None:            # (minillm's own llama files: every layer slides)
        return {"sliding_window": window} if own is not None and own.gguf_window and window else {}
    numbers = fixed(arch)              # (families/gemma2.py, gemma3.py)
    if window is None and numbers["needs_window"]:
        raise ValueError(f"GGUF metadata lacks {arch}.attention.sliding_window")
    pattern = meta.get(f"{arch}.attention.sliding_window_pattern")
    if pattern is None:                # llama.cpp's fixed pattern
        every = numbers["full_every"]
        pattern = [(i + 1) % every != 0 for i in range(n_layers)]
    if not isinstance(pattern, list) or len(pattern) != n_layers:
        raise ValueError(f"{arch}.attention.sliding_window_pattern must hold one bool per layer "
                         f"({n_layers})")
    def number(key, default=None):                    # (None when absent and no default)
        absent = f"{arch}.{key}" not in meta and default is None
        return None if absent else metadata_number(meta, f"{arch}.{key}", default)
    big = n_layers == numbers["big_layers"]                # llama.cpp's 27B rule: C / H
    caps = numbers["caps"]
    return {"ffn": "geglu", "sandwich_norms": True, "embed_scale": True,
            "qk_norm": own.switches.get("qk_norm", False),
            "sliding_window": window,
            "layer_types": tuple("sliding" if p else "full" for p in pattern) if window else None,
            "attn_softcap": number("attn_logit_softcapping", caps[0]),
            "final_softcap": number("final_logit_softcapping", caps[1]),
            "rope_local_theta": number("rope.freq_base_swa", numbers["local_theta"]),
            "query_pre_attn_scalar": number("attention.query_pre_attn_scalar",
                                            d_model / n_heads if big else None)}


def llama_cpp_notes(config) -> list[str]:
    """What llama.cpp does differently with this config's gemma2 / gemma3 file (the module
    docstring's limit): [] when it runs the model minillm wrote. Example: a 4-layer Gemma 3 ->
    ["llama.cpp's gemma3 ... fewer than 6 layers ... aborts ..."]."""
    arch = gguf_arch_of(config)
    if arch is None:
        return []
    every = fixed(arch)["full_every"]                  # llama.cpp's set_swa_pattern
    if config.n_layers < every:
        return [f"llama.cpp's {arch} makes every {every}th layer full attention whatever the "
                f"file says: a model of {config.n_layers} layers (fewer than {every}) has none, "
                f"and llama.cpp aborts at the first decode (GGML_ASSERT(buffer) failed); "
                f"minillm and transformers read the file"]
    theirs = tuple("full" if (i + 1) % every == 0 else "sliding" for i in range(config.n_layers))
    if tuple(config.layer_types or ()) != theirs:
        return [f"llama.cpp's {arch} makes layers {every - 1}, {2 * every - 1}, … full attention "
                f"and the others sliding, whatever the file says: this model's layer types "
                f"differ, so llama.cpp's logits will differ from minillm's"]
    return []


def gguf_arch_of(config) -> str | None:
    """"gemma2" / "gemma3" for a Gemma config that exports, None for any other."""
    if not config.sandwich_norms:
        return None
    try:
        return gemma_arch(config)
    except ValueError:
        return None
