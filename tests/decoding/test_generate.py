"""The generation loop: cache == recompute, seeds, batching, stops, streaming text, window, errors.

The reading loop ``generate_simple`` against ``generate``, and stopping at the model's EOS ids, are
in tests/decoding/test_generate_simple.py and tests/decoding/test_eos.py."""
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from minillm.decoding.batch import generate_batch
from minillm.config import ModelConfig
from minillm.functional import log_softmax
from minillm.decoding.generate import Step, generate
from minillm.kv_cache import KVCache
from minillm.decoding.stop_strings import StopText
from tests.model.strategies import random_model, tiny_configs


def greedy_by_recompute(model, prompt, n_new, keep=None):
    """Reference: re-run the whole context every step (no cache); with ``keep``, the sliding
    window policy: once the context would exceed n_ctx, restart it from the last ``keep`` tokens."""
    ids, start = list(prompt), 0
    for _ in range(n_new):
        if keep is not None and len(ids) - start > model.config.n_ctx:
            start = len(ids) - keep
        ids.append(int(np.argmax(model(np.array(ids[start:]))[-1])))
    return ids[len(prompt):]


def ids_of(steps):
    return [s.id for s in steps]


@given(tiny_configs(), st.data())
def test_greedy_with_cache_equals_recompute(config, data):
    model = random_model(config, data.draw(st.integers(0, 99)))
    P = data.draw(st.integers(1, config.n_ctx - 1))
    prompt = data.draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=P, max_size=P))
    n_new = config.n_ctx - P
    assert ids_of(generate(model, prompt, n_new, temperature=0)) == greedy_by_recompute(model, prompt, n_new)


@given(tiny_configs(), st.data())
def test_continuing_a_cache_equals_starting_fresh(config, data):
    """A cache already holding the first k prompt tokens is reused: same tokens, and afterwards
    it holds a prefix of prompt + generated ids."""
    model = random_model(config, data.draw(st.integers(0, 99)))
    P = data.draw(st.integers(2, config.n_ctx - 1))
    prompt = data.draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=P, max_size=P))
    k = data.draw(st.integers(0, P - 1))
    cache = KVCache(config, capacity=config.n_ctx)
    if k:
        model(np.array(prompt[:k]), cache=cache)
    n_new = config.n_ctx - P
    got = ids_of(generate(model, prompt, n_new, temperature=0, cache=cache))
    assert got == ids_of(generate(model, prompt, n_new, temperature=0))
    assert cache.length == P + n_new - 1 if n_new else k


def test_a_cache_that_cannot_continue_the_prompt_is_refused():
    model = random_model(ModelConfig(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=1), 0)
    cache = KVCache(model.config, capacity=8)
    model(np.arange(3), cache=cache)
    with pytest.raises(ValueError, match="fewer than the prompt"):
        list(generate(model, [1, 2, 3], 2, cache=cache))        # holds the whole prompt already
    with pytest.raises(ValueError, match="room"):
        list(generate(model, [1, 2, 3, 4], 5, cache=cache))


@given(tiny_configs(), st.data())
def test_sliding_window_equals_recompute_of_the_kept_tail(config, data):
    model = random_model(config, data.draw(st.integers(0, 99)))
    keep = data.draw(st.integers(1, config.n_ctx - 1))
    prompt = data.draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=1, max_size=config.n_ctx))
    n_new = 2 * config.n_ctx + 3                     # slides at least twice
    got = ids_of(generate(model, prompt, n_new, temperature=0, sliding_window=keep))
    assert got == greedy_by_recompute(model, prompt, n_new, keep=keep)


def test_same_seed_same_tokens_and_other_seed_differs():
    model = random_model(ModelConfig(vocab_size=40, n_ctx=64, d_model=8, n_heads=2, n_layers=1), 0)
    run = lambda seed: ids_of(generate(model, [1, 2, 3], 40, preset="creative", seed=seed))
    assert run(7) == run(7)
    assert run(7) != run(8)
    rng_run = ids_of(generate(model, [1, 2, 3], 40, preset="creative", rng=np.random.default_rng(7)))
    assert rng_run == run(7)                          # seed=s is rng=default_rng(s)


@given(tiny_configs(), st.data())
def test_batched_greedy_equals_each_prompt_alone(config, data):
    model = random_model(config, data.draw(st.integers(0, 99)),
                         data.draw(st.sampled_from(["plain", "rows"])))
    n_new = data.draw(st.integers(1, 4))
    prompts = data.draw(st.lists(st.lists(st.integers(0, config.vocab_size - 1), min_size=1,
                                          max_size=config.n_ctx - n_new), min_size=1, max_size=4))
    batched = generate_batch(model, prompts, n_new, temperature=0)
    assert batched == [ids_of(generate(model, p, n_new, temperature=0)) for p in prompts]


def test_batched_rows_stop_at_their_own_stop_id():
    model = random_model(ModelConfig(vocab_size=20, n_ctx=32, d_model=8, n_heads=2, n_layers=1), 3)
    prompts = [[1, 2, 3], [4], [5, 6]]
    alone = [ids_of(generate(model, p, 10, temperature=0)) for p in prompts]
    stop = alone[0][2]                                # row 0 stops at its 3rd token
    got = generate_batch(model, prompts, 10, temperature=0, stop_ids=[stop])
    for row, full in zip(got, alone):
        expected = full[:full.index(stop)] if stop in full else full
        assert row == expected


def test_stop_id_ends_generation_and_is_not_yielded():
    model = random_model(ModelConfig(vocab_size=20, n_ctx=32, d_model=8, n_heads=2, n_layers=1), 1)
    full = ids_of(generate(model, [1, 2], 12, temperature=0))
    stop = full[4]
    assert ids_of(generate(model, [1, 2], 12, temperature=0, stop_ids=[stop])) == full[:full.index(stop)]


def test_logprobs_and_top_n_are_of_the_raw_model_distribution():
    model = random_model(ModelConfig(vocab_size=30, n_ctx=32, d_model=8, n_heads=2, n_layers=2), 2)
    steps = list(generate(model, [3, 4], 5, preset="code", seed=0, logprobs=True, top_n=3))
    ids = [3, 4]
    for s in steps:
        logp = log_softmax(model(np.array(ids))[-1])                # [V] T = 1, no filter
        assert s.logprob == pytest.approx(float(logp[s.id]), abs=1e-5)
        assert [i for i, _ in s.top] == list(np.argsort(-logp, kind="stable")[:3])
        assert [lp for _, lp in s.top] == sorted((lp for _, lp in s.top), reverse=True)
        ids.append(s.id)


def test_penalties_see_the_history_and_the_prompt_length():
    from minillm.sampling import Sampler
    model = random_model(ModelConfig(vocab_size=20, n_ctx=32, d_model=8, n_heads=2, n_layers=1), 0)
    sampler = Sampler(temperature=0, repetition_penalty=3.0, presence_penalty=2.0)
    ids = [1, 2, 3]
    for _ in range(12):                               # reference: the sampler on recomputed logits
        ids.append(int(sampler.sample(model(np.array(ids))[-1], np.random.default_rng(0), history=ids,
                                    prompt_len=3)))
    assert ids_of(generate(model, [1, 2, 3], 12, sampler=sampler)) == ids[3:]


def test_zero_new_tokens_yields_nothing():
    model = random_model(ModelConfig(vocab_size=20, n_ctx=8, d_model=4, n_heads=1, n_layers=1), 0)
    assert list(generate(model, [1], 0)) == []


# ---- text: a scripted model that "generates" a chosen text, token by token ---------------
class Scripted:
    """Looks like a GPT to ``generate``: its logits put all mass on the next token of ``script``."""

    def __init__(self, script, vocab_size):
        self.script = list(script)
        self.config = ModelConfig(vocab_size=vocab_size, n_ctx=len(script) + 8, d_model=2,
                                  n_heads=1, n_layers=1)

    def __call__(self, ids, cache=None, last_only=False, **_):
        cache.advance(ids.shape[1])
        logits = np.zeros((ids.shape[0], 1, self.config.vocab_size), dtype=np.float32)
        logits[:, 0, self.script[cache.length]] = 10.0                  # [B, 1, V]
        return logits


@pytest.fixture(scope="module")
def gpt2_tok():
    from minillm.tokenizer.tokenizer import Tokenizer
    return Tokenizer.load("gpt2")


def run_text(tok, text, **kwargs):
    prompt = tok.encode("Q:")
    target = tok.encode(text)
    model = Scripted(prompt + target, tok.vocab_size)
    steps = list(generate(model, prompt, len(target), temperature=0, tokenizer=tok, **kwargs))
    return steps, target


CHARS = list("蓝色的大海海水ab \n😀🌊👍🏽é")          # 2-, 3- and 4-byte UTF-8 (🏽: a skin-tone modifier)
TEXTS = st.text(alphabet=st.sampled_from(CHARS), min_size=1, max_size=12)


@given(TEXTS)
def test_streaming_never_yields_broken_utf8(gpt2_tok, text):
    steps, target = run_text(gpt2_tok, text)
    assert ids_of(steps) == target
    assert all("\ufffd" not in s.text for s in steps)
    assert "".join(s.text for s in steps) == text


@given(TEXTS, st.data())
def test_a_generation_cut_mid_character_ends_with_its_decoded_text(gpt2_tok, text, data):
    """max_new_tokens may end the text inside a character: the last step releases what was held
    back, as decode does (U+FFFD for the unfinished character), so the steps' texts always join
    to decode(ids)."""
    prompt, target = gpt2_tok.encode("Q:"), gpt2_tok.encode(text)
    n = data.draw(st.integers(1, len(target)))
    model = Scripted(prompt + target, gpt2_tok.vocab_size)
    steps = list(generate(model, prompt, n, temperature=0, tokenizer=gpt2_tok))
    assert ids_of(steps) == target[:n]
    assert "".join(s.text for s in steps) == gpt2_tok.decode(target[:n])


@given(TEXTS, st.data())
def test_a_stop_id_mid_character_ends_with_its_decoded_text(gpt2_tok, text, data):
    """A stop id may end the text inside a character too: the text-only last step releases the
    held bytes as decode does (U+FFFD), so the steps' texts join to decode(the ids before it)."""
    prompt, target, eos = gpt2_tok.encode("Q:"), gpt2_tok.encode(text), gpt2_tok.eos_id
    cut_inside = [n for n in range(1, len(target)) if gpt2_tok.decode(target[:n]).endswith("\ufffd")]
    assume(cut_inside)                                   # texts of 2-4 byte characters: most
    n = data.draw(st.sampled_from(cut_inside))
    model = Scripted(prompt + target[:n] + [eos], gpt2_tok.vocab_size)
    steps = list(generate(model, prompt, n + 3, temperature=0, tokenizer=gpt2_tok, stop_ids=[eos]))
    assert ids_of(steps) == [*target[:n], None]
    assert "".join(s.text for s in steps) == gpt2_tok.decode(target[:n])


@given(TEXTS, st.data())
def test_stop_string_is_trimmed_across_token_boundaries(gpt2_tok, text, data):
    i = data.draw(st.integers(0, len(text) - 1))
    stop = text[i:data.draw(st.integers(i + 1, len(text)))]
    steps, _ = run_text(gpt2_tok, text, stop_strings=[stop])
    assert "".join(s.text for s in steps) == text[:text.find(stop)]


def test_stop_string_split_over_tokens_holds_back_the_partial_match(gpt2_tok):
    steps, target = run_text(gpt2_tok, "Hello User: bye", stop_strings=["User:"])
    assert "".join(s.text for s in steps) == "Hello "
    released = [s.text for s in steps]
    assert released[-1] == ""                         # the token completing "User:" shows nothing
    partial, _ = run_text(gpt2_tok, "Hello Us", stop_strings=["User:"])
    assert "".join(s.text for s in partial) == "Hello Us"    # held, then released at the end


def test_stop_id_releases_held_text_in_a_text_only_step(gpt2_tok):
    text = "Hi Us"
    prompt, target = gpt2_tok.encode("Q:"), gpt2_tok.encode(text)
    eos = gpt2_tok.eos_id
    model = Scripted(prompt + target + [eos], gpt2_tok.vocab_size)
    steps = list(generate(model, prompt, 10, temperature=0, tokenizer=gpt2_tok,
                          stop_ids=[eos], stop_strings=["User"]))
    assert steps[-1] == Step(None, "Us")
    assert ids_of(steps)[:-1] == target and "".join(s.text for s in steps) == text


@given(st.text(alphabet="abxyz", max_size=12),
       st.lists(st.text(alphabet="abxyz", min_size=1, max_size=3), min_size=1, max_size=3), st.data())
def test_stop_text_releases_exactly_the_text_before_the_first_stop(text, stops, data):
    """The first stop is the one complete first (earliest end, then earliest start), however
    the text is cut into pieces."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=5)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    s = StopText(stops)
    out = "".join(s.push(p) for p in pieces)
    hits = [(text.find(x) + len(x), text.find(x)) for x in stops if x in text]   # (end, start)
    if hits:
        assert s.stopped and out == text[:min(hits)[1]]
    else:
        assert not s.stopped and out + s.flush() == text


# ---- errors --------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, match", [
    (dict(max_new_tokens=-1), "max_new_tokens"),
    (dict(max_new_tokens=1.5), "max_new_tokens"),
    (dict(temperature=-0.5), "temperature"),
    (dict(top_p=0.0), "top_p"),
    (dict(top_k=-2), "top_k"),
    (dict(preset="nope"), "preset"),
    (dict(max_new_tokens=8), "context window"),
    (dict(stop_strings=["x"]), "tokenizer"),
    (dict(sliding_window=8), "sliding_window"),
    (dict(sliding_window=True), "sliding_window"),            # one type: a token count or None
    (dict(stop_ids=[20]), "stop_ids"),
    (dict(top_n=-1), "top_n"),
])
def test_bad_parameters_raise_clear_errors(kwargs, match):
    model = random_model(ModelConfig(vocab_size=20, n_ctx=8, d_model=4, n_heads=1, n_layers=1), 0)
    kwargs = {"max_new_tokens": 2, **kwargs}
    with pytest.raises(ValueError, match=match):
        generate(model, [1, 2, 3], **kwargs)


def test_bad_prompts_raise_clear_errors():
    model = random_model(ModelConfig(vocab_size=20, n_ctx=8, d_model=4, n_heads=1, n_layers=1), 0)
    with pytest.raises(ValueError, match="non-empty"):
        generate(model, [], 2)
    with pytest.raises(ValueError, match=r"\[0, 20\)"):
        generate(model, [25], 2)
    with pytest.raises(TypeError, match="integers"):
        generate(model, [1.5], 2)
    with pytest.raises(ValueError, match="context window"):
        generate(model, list(range(9)), 0, sliding_window=4)      # the prompt alone is too long
    with pytest.raises(ValueError, match="at least one prompt"):
        generate_batch(model, [], 2)


def test_a_prompt_longer_than_n_ctx_is_told_to_shorten_it():
    """The error suggested sliding_window= (CLI: --sliding-window) even when it was given, and a
    window never holds a prompt longer than n_ctx: now it says to shorten the prompt."""
    model = random_model(ModelConfig(vocab_size=20, n_ctx=8, d_model=4, n_heads=1, n_layers=1), 0)
    for window in (None, 4):
        with pytest.raises(ValueError, match="prompt \\(9 tokens\\) is longer than the context "
                                             "window n_ctx=8; shorten it$"):
            generate(model, list(range(9)), 1, sliding_window=window)
    with pytest.raises(ValueError, match="pass sliding_window=4"):   # prompt fits, the rest not
        generate(model, list(range(7)), 2)


# ---- the command line ----------------------------------------------------------------------
def test_cli_streams_only_the_prompt_and_the_generated_text_to_stdout(tmp_path, capsys, gpt2_tok):
    from minillm.cli import main
    config = ModelConfig(vocab_size=gpt2_tok.vocab_size, n_ctx=32, d_model=8, n_heads=2, n_layers=1)
    random_model(config, 0).save_pretrained(tmp_path)
    base = ["generate", "--model", str(tmp_path), "--tokenizer", "gpt2", "--max-new-tokens", "6",
            "--no-echo"]
    assert main(base + ["-t", "0", "Hello"]) == 0
    out = capsys.readouterr().out
    ids = [s.id for s in generate(random_model(config, 0), gpt2_tok.encode("Hello"), 6,
                                  temperature=0, stop_ids=[gpt2_tok.eos_id])]
    assert out == gpt2_tok.decode(ids) + "\n"
    window = ["generate", "--model", str(tmp_path), "--tokenizer", "gpt2", "--max-new-tokens", "40",
              "--no-echo"]
    assert main(window + ["-t", "0", "--sliding-window", "Hello"]) == 0   # 1 + 40 tokens > n_ctx 32
    ids = [s.id for s in generate(random_model(config, 0), gpt2_tok.encode("Hello"), 40, temperature=0,
                                  stop_ids=[gpt2_tok.eos_id], sliding_window=16)]
    assert capsys.readouterr().out == gpt2_tok.decode(ids) + "\n"     # --sliding-window keeps n_ctx // 2
    assert main(base + ["--beams", "2", "Hello"]) == 0
    assert main(base + ["--beams", "2", "--seed", "0", "Hello"]) == 2     # sampling option with beams
    assert main(["generate", "--model", str(tmp_path / "missing"), "Hi"]) == 2
    assert "not a folder, a file or a known download" in capsys.readouterr().err


def test_stop_string_complete_first_wins_however_the_text_is_cut():
    """Regression (found by hypothesis): with stops ("a", "baa"), "baa" in one piece
    released "" (the earliest *start*) but "ba" + "a" released "b"; now both release "b"."""
    one, two = StopText(["a", "baa"]), StopText(["a", "baa"])
    assert one.push("baa") == "b"
    assert two.push("ba") + two.push("a") == "b"


def test_huge_max_new_tokens_with_a_sliding_window_is_refused_before_allocating():
    """Regression: max_new_tokens=10**12 with a sliding window allocated a 8 TB history
    (MemoryError) instead of saying what is allowed."""
    config = ModelConfig(vocab_size=16, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    with pytest.raises(ValueError, match="limited to 16,777,216"):
        generate(random_model(config, 0), [1, 2], 10**12, sliding_window=4)


def test_generate_passes_every_sampling_setting_to_the_sampler():
    """min_p = 1 keeps only the most likely token, top_k = 1 and top_p -> 0 too: each alone makes
    sampling greedy, so each setting is seen to reach the sampler."""
    model = random_model(ModelConfig(vocab_size=30, n_ctx=32, d_model=8, n_heads=2, n_layers=1), 6)
    greedy = ids_of(generate(model, [1, 2], 8, temperature=0))
    for kw in (dict(min_p=1.0), dict(top_k=1), dict(top_p=1e-9)):
        assert ids_of(generate(model, [1, 2], 8, temperature=1.5, seed=0, **kw)) == greedy, kw
    assert ids_of(generate(model, [1, 2], 8, temperature=1.5, seed=0)) != greedy


def test_generate_makes_100_tokens_by_default():
    model = random_model(ModelConfig(vocab_size=30, n_ctx=128, d_model=8, n_heads=2, n_layers=1), 6)
    assert len(ids_of(generate(model, [1, 2], temperature=0))) == 100
