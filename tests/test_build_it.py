"""Notebook 13's grader (notebooks/build_it.py): every wrong part in the variants table
(tests/build_it_variants.py) is rejected with the words of its mistake, every correct one written
another way is accepted, on the shipped Shakespeare model (GPT-2 branches), the shipped tiny
Llama-style model (RMSNorm, SwiGLU, RoPE, 2 query heads per KV head) and SmolLM2 when present. A
part is judged at every call, so a difference is caught even when the greedy tokens agree."""
import sys

import numpy as np
import pytest

import minillm
from tests.build_it_variants import RIGHT, TRAINER_RIGHT, TRAINER_WRONG, WRONG, S, Variant
from tests.conftest import REPO, shared_file

sys.path.insert(0, str(REPO / "notebooks"))
from build_it import (LIBRARY, RTOL, ATOL, YourGPT, check_model, check_part, generate_with,  # noqa: E402
                      grade_runs, library_tokens)
from build_it_bpe import WRONG_ORDERS, encode_with, merges_of, probe_texts  # noqa: E402

PROMPT = "ROMEO.\nBut soft, what light"
MODELS = ["shakespeare", "tiny-llama", "smollm2"]


@pytest.fixture(scope="module", params=MODELS)
def model(request):
    if request.param == "smollm2":
        path = shared_file("models/SmolLM2-135M-Instruct.Q4_1.gguf")     # or skip, saying where
        return request.param, *minillm.load_model(path, fast=False)
    return request.param, *minillm.load_model(REPO / "weights" / request.param, fast=False)


def grade(parts, model, capsys, n_new=3):
    name, m, tok = model
    ok = check_model(parts, m, tok, PROMPT, n_new)
    return ok, capsys.readouterr().out.strip()


def test_the_table_has_four_wrong_variants_per_part_and_forty_in_all():
    per_part = {p: sum(v.part == p for v in WRONG) for p in LIBRARY}
    assert min(per_part.values()) >= 4 and len(WRONG) >= 40, per_part
    assert {v.part for v in RIGHT} == set(LIBRARY)


@pytest.mark.parametrize("variant", WRONG, ids=lambda v: v.why)
def test_a_wrong_part_is_rejected_with_its_symptom(model, capsys, variant, request):
    if model[0] == "smollm2" and variant.fn.__name__ == "bpe_missing_pair_ranked_as_len":
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "a known gap: SmolLM2's probe texts never set a missing pair against a merge whose id "
            "is past len(merges), so this rule is caught on the shipped vocabularies only")))
    ok, message = grade({**S.PARTS, variant.part: variant.fn}, model, capsys)
    assert not ok and message.startswith(f"✗ your {variant.part} "), message
    assert variant.says in message, message


@pytest.mark.parametrize("variant", RIGHT, ids=lambda v: v.why)
def test_a_part_written_another_way_is_accepted(model, capsys, variant):
    if model[0] == "smollm2":
        pytest.skip("SmolLM2 grades the right variants together (test_the_right_variants_together)")
    ok, message = grade({**S.PARTS, variant.part: variant.fn}, model, capsys)
    assert ok and message.startswith("✓ every part you wrote"), message


@pytest.mark.parametrize("which", [0, 1])
def test_the_right_variants_together(model, capsys, which):
    parts = {}
    for v in RIGHT:
        parts.setdefault(v.part, []).append(v.fn)
    ok, message = grade({p: fns[min(which, len(fns) - 1)] for p, fns in parts.items()}, model, capsys, 2)
    assert ok, message


@pytest.mark.parametrize("variant", TRAINER_WRONG, ids=lambda v: v.why)
def test_a_wrong_merge_or_trainer_is_rejected_on_its_own(capsys, variant):
    """merge and train_bpe are graded on their own: an encoder's loop hides a merge that replaces
    only the first occurrence, and few words repeat a pair."""
    assert not check_part(variant.part, variant.fn)
    message = capsys.readouterr().out.strip()
    assert message.startswith(f"✗ your {variant.part} ") and variant.says in message, message


@pytest.mark.parametrize("variant", TRAINER_RIGHT + [Variant("merge", S.merge), Variant("train_bpe", S.train_bpe)],
                         ids=lambda v: v.why)
def test_a_merge_or_trainer_written_another_way_is_accepted(capsys, variant):
    assert check_part(variant.part, variant.fn)
    assert capsys.readouterr().out.startswith(f"✓ your {variant.part} equals the library's on")


def test_the_solutions_agree_with_the_library_far_inside_the_tolerance(model):
    """The tolerance's justification: a correct formula differs from the library's by float32
    rounding only; measured here, it stays 5x below RTOL and ATOL at every call."""
    name, m, tok = model
    worst = []

    def record(fn, lib):
        def part(*args):
            mine, want = fn(*args), lib(*args)
            for a, b in zip(*((mine, want) if isinstance(want, tuple) else ([mine], [want]))):
                worst.append(float(np.max(np.abs(np.asarray(a, np.float64) - b) / (1 + np.abs(b)))))
            return want
        return part

    parts = {p: record(f, LIBRARY[p]) for p, f in S.PARTS.items() if p not in ("bpe", "sample")}
    ids = tok.encode(PROMPT)
    assert grade_runs(m, parts, ids, library_tokens(m, ids, 2))[0] is None
    print(f"{name}: largest |yours − library|/(1 + |library|) = {max(worst):.2g}")
    assert max(worst) < min(RTOL, ATOL) / 5, max(worst)


def test_a_part_that_differs_only_on_the_model_is_caught_though_the_tokens_agree(model, capsys):
    def ffn_off_for_wide_models(x, p, kind):
        out = S.ffn(x, p, kind)
        return out + 1e-3 * (x.shape[-1] > 8)                      # right on the toys (C = 4)

    ok, message = grade({**S.PARTS, "ffn": ffn_off_for_wide_models}, model, capsys)
    assert not ok and "your ffn at layer 0 differs from the library's by up to 0.001" in message, message
    assert "the prompt's first" in message, message
    assert "greedy tokens agree with the library's, but this part does not" in message, message


def test_a_mask_skipped_for_one_token_is_caught_on_a_padded_batch_decoded_token_by_token(model, capsys):
    def attention_unmasked_decode_steps(q, k, v, mask):
        if q.shape[2] == 1 and k.shape[2] > 5:                     # right on the toys (S <= 5)
            mask = np.ones_like(mask)
        return S.attention(q, k, v, mask)

    ok, message = grade({**S.PARTS, "attention": attention_unmasked_decode_steps}, model, capsys)
    assert not ok and message.startswith("✗ your attention at layer 0 differs"), message
    assert "in a padded batch decoded one token at a time (T = 1 onto S = 12" in message, message
    assert "the mask is skipped when there is one new query (T = 1" in message, message


def test_nothing_written_is_never_a_tick(capsys):
    _, m, tok = "shakespeare", *minillm.load_model(REPO / "weights" / "shakespeare", fast=False)

    def stub(*args):
        raise NotImplementedError

    assert not check_model({}, m, tok, PROMPT, 2)
    assert not check_model({name: stub for name in LIBRARY}, m, tok, PROMPT, 2)
    out = capsys.readouterr().out
    assert "✗ nothing to grade yet: no parts given" in out
    assert "✗ nothing to grade yet: every part given is a stub (bpe, embed" in out
    assert "✓" not in out
    assert not check_model({**S.PARTS, "ffn": stub}, m, tok, PROMPT, 2)
    out = capsys.readouterr().out
    assert out.startswith("✗ not written yet: ffn (it raises NotImplementedError); the parts you wrote "
                          "(bpe, embed, norm, rope, kv_append, attention, block, sample) equal"), out


def test_parts_given_wrongly_are_told_in_the_learners_terms():
    m, _ = minillm.load_model(REPO / "weights" / "shakespeare", fast=False)
    with pytest.raises(ValueError, match="unknown parts \\['mlp'\\]"):
        YourGPT(m, {"mlp": S.ffn})
    with pytest.raises(TypeError, match=r"parts\['ffn'\] is ndarray .* not a function: give the function itself"):
        YourGPT(m, {"ffn": S.ffn(np.zeros((1, 1, 128), np.float32), m.params.blocks[0].ffn, "gelu_mlp")})


def test_check_part_judges_one_part_on_toys(capsys):
    assert check_part("norm", S.norm)
    assert not check_part("norm", WRONG[[v.part for v in WRONG].index("norm")].fn)
    out = capsys.readouterr().out
    assert out.startswith("✓ your norm equals the library's on 2 toy inputs\n✗ your norm differs"), out
    with pytest.raises(ValueError, match="give tok="):
        check_part("bpe", S.bpe)

    def stub(*args):
        raise NotImplementedError

    assert not check_part("attention", stub)
    assert capsys.readouterr().out.startswith("✗ your attention is not written yet")

    def layer_norm_only(x, p, kind, eps):
        if kind == "rmsnorm":
            raise NotImplementedError
        return S.norm(x, p, kind, eps)

    assert not check_part("norm", layer_norm_only)
    assert "✗ your norm raised NotImplementedError on toy input 1 (x [2, 5, 8] float32, p NormParams, " \
           "kind 'rmsnorm', eps 1e-05): a branch not written yet" in capsys.readouterr().out


def test_the_solutions_generate_the_library_tokens_and_the_engine_agrees(model):
    name, m, tok = model
    ids = tok.encode(PROMPT)
    assert generate_with(YourGPT(m, S.PARTS), ids, 5) == library_tokens(m, ids, 5)
    if name != "smollm2":
        fast, _ = minillm.load_model(REPO / "weights" / name)
        assert library_tokens(fast, ids, 5) == library_tokens(m, ids, 5)


def test_each_wrong_bpe_order_differs_on_a_probe_text(model):
    """The texts the bpe is graded on expose each wrong order on each tokenizer, and (for the
    shipped tokenizers) apply every merge of the vocabulary at least once."""
    name, _, tok = model
    merges = merges_of(tok)
    texts = probe_texts(tok, PROMPT)
    used = set()

    def tracing(ids, merges):
        while len(ids) > 1:
            pair = min(zip(ids, ids[1:]), key=lambda p: merges.get(p, float("inf")))
            if pair not in merges:
                break
            used.add(pair)
            ids = S.merge(ids, pair, merges[pair])
        return ids

    for text in texts:
        assert encode_with(tracing, tok, text, merges) == tok.encode(text), text
    if name != "smollm2":
        assert used == set(merges), f"{len(set(merges) - used)} merges never applied"
    for why, wrong in WRONG_ORDERS:
        if name == "smollm2" and "len(merges)" in why:      # the known gap (see the strict xfail)
            assert all(encode_with(wrong, tok, t, merges) == tok.encode(t) for t in texts), why
            continue
        assert any(encode_with(wrong, tok, t, merges) != tok.encode(t) for t in texts), why
