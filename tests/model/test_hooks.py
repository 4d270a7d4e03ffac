"""Every activation by name (``GPT.run_with_cache``) and hooks that edit them (``run_with_hooks``):
the names recorded are ``hook_names()`` and the table of docs/hooks.md, in every family; looking
changes nothing; an edit changes exactly what follows it, as an equal forward from there would;
a decode step records its own activations; bad names and bad replacements are clear errors.
(That the recorded streams and weights are transformers' is tests/model/test_hooks_vs_transformers.py.)
"""
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from minillm import GPT, KVCache, load_model
from minillm.config import ModelConfig
from minillm.hooks import Layer
from minillm.model.attention import causal_mask
from minillm.model.block import block
from minillm.model.norm import norm
from minillm.model.rope import rope_angles

from tests.model.strategies import random_model
from tests.model.test_hooks_vs_transformers import FAMILIES

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
GPT2 = ModelConfig(vocab_size=40, n_ctx=16, d_model=16, n_heads=4, n_layers=3, d_ff=32)
LLAMA = ModelConfig(vocab_size=40, n_ctx=16, d_model=16, n_heads=4, n_kv_heads=2, n_layers=3,
                    d_ff=32, arch="llama")
CONFIGS = {"gpt2": GPT2, "llama": LLAMA}


def family(name: str) -> GPT:
    return GPT.from_pretrained(FIXTURES / name)


def ids_for(config, T: int = 8, B: int = 2, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, config.vocab_size, (B, T))


def table() -> dict[str, str]:
    """docs/hooks.md's table: name (with ``{l}``) -> its 'where' column."""
    text = (REPO / "docs" / "hooks.md").read_text(encoding="utf-8")
    return dict(re.findall(r"^\| `([\w.{}]+)` \| [^|]+ \| ([^|]+) \|", text, re.M))


def template(name: str) -> str:
    return re.sub(r"^blocks\.\d+\.", "blocks.{l}.", name)


# ---- the names ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", FAMILIES)
def test_a_run_records_every_hook_name_in_order_and_the_same_logits(name):
    model = family(name)
    ids = ids_for(model.config)
    logits, acts = model.run_with_cache(ids)
    assert list(acts) == model.hook_names()
    np.testing.assert_array_equal(logits, model(ids))
    T = ids.shape[1]
    assert all(a.shape[:2] in ((2, T), (2, model.config.n_heads)) for a in acts.values())


def test_the_table_lists_exactly_the_names_recorded():
    recorded = {template(n) for name in FAMILIES for n in family(name).run_with_cache(np.arange(4))[1]}
    assert set(table()) == recorded


@pytest.mark.parametrize("name, where", sorted(table().items()))
def test_each_name_of_the_table_is_written_where_the_table_says(name, where):
    """The 'where' column names the file and function whose source holds the hook point."""
    relative = name.removeprefix("blocks.{l}.")
    path, functions = re.match(r"`([\w/.]+)` (.+)", where.strip()).groups()
    source = (REPO / "minillm" / path).read_text(encoding="utf-8")
    for function in re.findall(r"`([\w.]+)`", functions):
        body = re.search(rf"def {function.rpartition('.')[2]}\(.*?(?=\ndef |\n    def |\nclass |\Z)",
                         source, re.S)
        assert body and f'"{relative}"' in body[0], f"{relative} not in {path}::{function}"


@pytest.mark.parametrize("arch", sorted(CONFIGS))
def test_the_recorded_activations_are_what_their_names_say(arch):
    """Each name holds what docs/hooks.md says, rebuilt from the others in float64: the scores
    are rot_q · rot_k / √D (query head h with KV head h // G; the future −∞), the pattern their
    softmax, z the pattern times v, attn_out z W_o (+ b_o), the stream adds attn_out then
    mlp_out, and the logits are the final norm's output times the head."""
    config = CONFIGS[arch]
    model = random_model(config, 3)
    p = model.params
    _, a = model.run_with_cache(ids_for(config, T=6))
    f64 = {name: x.astype(np.float64) for name, x in a.items()}
    q, k = ("attn.hook_rot_q", "attn.hook_rot_k") if arch == "llama" else ("attn.hook_q", "attn.hook_k")
    G = config.n_heads // config.n_kv_heads
    for layer in range(config.n_layers):
        b = lambda name: f64[f"blocks.{layer}.{name}"]                      # noqa: E731
        keys = np.repeat(b(k), G, axis=2)                                   # [B, S, H, D]
        scores = np.einsum("bthd,bshd->bhts", b(q), keys) / np.sqrt(config.d_head)
        scores = np.where(causal_mask(6, 6), scores, -np.inf)               # [B, H, T, S]
        np.testing.assert_allclose(b("attn.hook_attn_scores"), scores, rtol=1e-5, atol=1e-5)
        e = np.exp(scores - scores.max(-1, keepdims=True))
        np.testing.assert_allclose(b("attn.hook_pattern"), e / e.sum(-1, keepdims=True), atol=1e-6)
        z = np.einsum("bhts,bshd->bthd", b("attn.hook_pattern"), np.repeat(b("attn.hook_v"), G, axis=2))
        np.testing.assert_allclose(b("attn.hook_z"), z, rtol=1e-5, atol=1e-5)
        bp = p.blocks[layer].attn
        out = b("attn.hook_z").reshape(2, 6, -1) @ bp.wo + (0 if bp.bo is None else bp.bo)
        np.testing.assert_allclose(b("hook_attn_out"), out, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(b("hook_resid_mid"), b("hook_resid_pre") + b("hook_attn_out"), atol=1e-6)
        np.testing.assert_allclose(b("hook_resid_post"), b("hook_resid_mid") + b("hook_mlp_out"), atol=1e-6)
    head = p.wte.T if p.lm_head is None else p.lm_head
    np.testing.assert_allclose(f64["hook_logits"], f64["ln_final.hook_normalized"] @ head, rtol=1e-5, atol=1e-5)


def test_a_batch_of_one_keeps_its_batch_axis_in_the_activations():
    model = GPT(LLAMA, seed=0)
    logits, acts = model.run_with_cache(np.arange(5))
    assert logits.shape == (5, LLAMA.vocab_size)
    assert acts["blocks.0.hook_resid_post"].shape == (1, 5, 16)
    assert acts["blocks.0.attn.hook_pattern"].shape == (1, 4, 5, 5)
    assert acts["blocks.0.attn.hook_k"].shape == (1, 5, 2, 4)          # [B, T, KV, D]


def test_names_records_only_what_is_asked():
    model = GPT(GPT2, seed=0)
    ids = ids_for(GPT2)
    _, acts = model.run_with_cache(ids, names=["blocks.1.hook_resid_post", "hook_embed"])
    assert set(acts) == {"blocks.1.hook_resid_post", "hook_embed"}
    _, acts = model.run_with_cache(ids, names=lambda n: n.endswith("hook_pattern"))
    assert list(acts) == [f"blocks.{l}.attn.hook_pattern" for l in range(3)]
    full = model.run_with_cache(ids)[1]
    np.testing.assert_array_equal(acts["blocks.2.attn.hook_pattern"], full["blocks.2.attn.hook_pattern"])


# ---- looking changes nothing; editing changes what follows --------------------------------------
@pytest.mark.parametrize("name", FAMILIES)
def test_a_hook_returning_x_unchanged_gives_bit_identical_logits(name):
    model = family(name)
    ids = ids_for(model.config)
    same = {n: (lambda x, n: x) for n in model.hook_names()}
    kept = {n: (lambda x, n: None) for n in model.hook_names()}
    np.testing.assert_array_equal(model.run_with_hooks(ids, same), model(ids))
    np.testing.assert_array_equal(model.run_with_hooks(ids, kept), model(ids))


def rest_of_the_forward(model, y: np.ndarray, start: int) -> np.ndarray:
    """Blocks start … L − 1, the final norm and the head on y [B, T, C], written out."""
    c, p = model.config, model.params
    B, T, _ = y.shape
    rope = None
    if c.position == "rope":
        cos, sin = rope_angles(np.broadcast_to(np.arange(T), (B, T)), c.d_head, c.rope_theta)
        rope = (cos[:, None], sin[:, None])
    for layer in range(start, c.n_layers):
        y = block(y, p.blocks[layer], Layer(c, causal_mask(T, T)[None], rope, None, layer))
    head = p.wte.T if p.lm_head is None else p.lm_head
    return norm(y, p.norm_f, c.norm, c.norm_eps) @ head


@given(arch=st.sampled_from(sorted(CONFIGS)), layer=st.integers(0, 2), seed=st.integers(0, 2**16))
def test_a_replaced_resid_post_changes_the_logits_as_a_forward_from_there_would(arch, layer, seed):
    config = CONFIGS[arch]
    model = random_model(config, 0)
    ids = ids_for(config, seed=seed)
    y = np.random.default_rng(seed).standard_normal((2, 8, 16), dtype=np.float32)   # [B, T, C]
    got = model.run_with_hooks(ids, {f"blocks.{layer}.hook_resid_post": lambda x, n: y})
    np.testing.assert_array_equal(got, rest_of_the_forward(model, y, layer + 1))


def query_axis(name: str) -> int:
    """The axis of the T (query) positions: 2 in [B, H, T, S], else 1."""
    return 2 if name.endswith(("hook_pattern", "hook_attn_scores")) else 1


@given(arch=st.sampled_from(sorted(CONFIGS)), layer=st.integers(0, 2), head=st.integers(0, 3),
       t=st.integers(0, 7), seed=st.integers(0, 2**16))
def test_zero_ablating_a_head_changes_only_what_follows_it(arch, layer, head, t, seed):
    """hook_z of (layer, head) zeroed at position t: every activation the forward reached before
    it is unchanged, and so is every position before t anywhere (the model is causal); head h at
    t is 0 and what attention adds at t changes."""
    config = CONFIGS[arch]
    model = random_model(config, seed % 7)
    ids = ids_for(config, seed=seed)

    def ablate(z, name):                                        # z [B, T, H, D]
        z = z.copy()
        z[:, t, head] = 0
        return z
    names = model.hook_names()
    point = f"blocks.{layer}.attn.hook_z"
    _, clean = model.run_with_cache(ids)
    _, ablated = model.run_with_cache(ids, hooks={point: ablate})
    for name in names[:names.index(point)]:
        np.testing.assert_array_equal(ablated[name], clean[name], err_msg=name)
    for name in names[names.index(point):]:
        before_t = [slice(None)] * query_axis(name) + [slice(0, t)]
        np.testing.assert_array_equal(ablated[name][tuple(before_t)], clean[name][tuple(before_t)],
                                      err_msg=name)
    assert not ablated[point][:, t, head].any()
    others = [h for h in range(4) if h != head]
    np.testing.assert_array_equal(ablated[point][:, :, others], clean[point][:, :, others])
    assume(np.abs(clean[point][:, t, head]).max() > 1e-3)      # (a head that wrote something)
    assert not np.array_equal(ablated[f"blocks.{layer}.hook_attn_out"][:, t],
                              clean[f"blocks.{layer}.hook_attn_out"][:, t])


def test_what_is_recorded_is_what_the_hook_returned():
    model = GPT(GPT2, seed=0)
    ids = ids_for(GPT2)
    double = {"blocks.0.mlp.hook_post": lambda h, n: 2 * h}
    _, clean = model.run_with_cache(ids)
    _, edited = model.run_with_cache(ids, hooks=double)
    np.testing.assert_array_equal(edited["blocks.0.mlp.hook_post"], 2 * clean["blocks.0.mlp.hook_post"])


# ---- the cache ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["gpt2_tiny", "llama_tiny", "gemma2_tiny", "mixtral_tiny"])
def test_a_decode_step_records_its_own_activations(name):
    """With a KV cache holding 9 positions, one new token's activations equal the full run's
    last position (T = 1), its scores and pattern span S = 10 keys."""
    model = family(name)
    ids = ids_for(model.config, T=10, B=1)
    _, full = model.run_with_cache(ids)
    cache = KVCache(model.config, batch_size=1, capacity=16)
    model(ids[:, :9], cache)
    _, step = model.run_with_cache(ids[:, 9:], cache=cache)
    assert cache.length == 10 and list(step) == model.hook_names()
    for act, a in step.items():
        want = full[act][:, :, 9:] if query_axis(act) == 2 else full[act][:, 9:]
        assert a.shape == want.shape, act
        np.testing.assert_allclose(a, want, atol=2e-5, rtol=1e-4, err_msg=act)


def test_the_engine_runs_the_readable_forward_when_asked_for_activations():
    engine = load_model(FIXTURES / "llama_tiny")[0]
    plain = family("llama_tiny")
    ids = ids_for(plain.config)
    got, acts = engine.run_with_cache(ids)
    want, plain_acts = plain.run_with_cache(ids)
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert list(acts) == list(plain_acts)


# ---- refusals -----------------------------------------------------------------------------------
def test_unknown_hook_names_are_a_value_error_listing_near_names():
    model = GPT(LLAMA, seed=0)
    ids = ids_for(LLAMA)
    with pytest.raises(ValueError, match=r"blocks\.0\.attn\.hook_pattern"):
        model.run_with_hooks(ids, {"blocks.0.attn.hook_patern": lambda x, n: x})
    with pytest.raises(ValueError, match=r"hook_resid_post"):
        model.run_with_cache(ids, names=["blocks.9.hook_resid_post"])
    with pytest.raises(ValueError, match="hook_pos_embed"):            # (GPT-2's, not Llama's)
        model.run_with_cache(ids, names=["hook_pos_embed"])
    with pytest.raises(TypeError, match="list of hook names"):
        model.run_with_cache(ids, names="hook_embed")


def test_a_replacement_of_another_shape_is_a_value_error():
    model = GPT(GPT2, seed=0)
    with pytest.raises(ValueError, match=r"must keep \(2, 8, 16\)"):
        model.run_with_hooks(ids_for(GPT2), {"blocks.0.hook_resid_pre": lambda x, n: x[:, :1]})
