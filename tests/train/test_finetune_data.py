"""The fine-tuning demonstration's data (data/tarvessa/) and its score: the committed files are
what the generator writes, no held-out question is asked in training, and the score finds a key
fact exactly when it stands in the answer as whole words."""
import importlib.util
import sys
from collections import Counter
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "notebooks"))
import tarvessa  # noqa: E402  (notebooks/ is not a package)


def load_generator():
    spec = importlib.util.spec_from_file_location("make_finetune_data",
                                                  REPO / "scripts" / "make_finetune_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_files_are_what_the_generator_writes():
    gen = load_generator()
    train, heldout = gen.make()
    assert (tarvessa.DATA / "train.jsonl").read_text("utf-8") == gen.jsonl(train)
    assert (tarvessa.DATA / "heldout.jsonl").read_text("utf-8") == gen.jsonl(heldout)


def test_conversations_alternate_user_and_assistant_turns():
    convs = tarvessa.conversations()
    assert len(convs) == 200
    for c in convs:
        roles = [m["role"] for m in c["messages"]]
        assert roles in (["user", "assistant"], ["user", "assistant"] * 2), roles
        assert all(isinstance(m["content"], str) and m["content"] for m in c["messages"])


def test_every_fact_is_taught_at_least_seven_times_and_held_out_at_least_once():
    gen = load_generator()
    taught = Counter()
    for c in tarvessa.conversations():
        for m in c["messages"]:
            if m["role"] == "assistant":
                taught.update(f for f, (key, *_) in gen.FACTS.items() if tarvessa.is_right(m["content"], key))
    assert min(taught[f] for f in gen.FACTS) >= 7, taught
    assert {q["fact"] for q in tarvessa.heldout()} == set(gen.FACTS)


def test_no_held_out_question_is_asked_in_training():
    asked = {tarvessa.normalise(m["content"]) for c in tarvessa.conversations()
             for m in c["messages"] if m["role"] == "user"}
    held = [tarvessa.normalise(q["question"]) for q in tarvessa.heldout()]
    assert 30 <= len(held) <= 40
    assert not set(held) & asked


def test_every_training_answer_contains_its_fact_and_the_pretrained_guess_does_not():
    assert tarvessa.is_right("Mount Kelvaro is 1,847 metres high.", "1847")
    assert tarvessa.is_right("They pay in drells.", "drell")
    assert tarvessa.is_right("It is the GLIMMER-fox!", "glimmer fox")
    assert not tarvessa.is_right("It was founded in 1712.", "17")
    assert not tarvessa.is_right("Tarvessa's government sits in Ostmerefield.", "Ostmere")
    assert not tarvessa.is_right("The capital is Ost mere.", "Ostmere")


words = st.from_regex(r"[A-Za-z0-9]{1,8}", fullmatch=True)      # the keys are ASCII names and numbers
gaps = st.sampled_from([" ", ", ", ". ", " (", "\n", " - "])


@given(before=st.lists(words, max_size=4), after=st.lists(words, max_size=4), key=words,
       gap=gaps)
def test_a_key_between_separators_is_found(before, after, key, gap):
    answer = gap.join([*before, key, *after])
    assert tarvessa.is_right(answer, key)


@given(key=st.from_regex(r"[a-z]{3,8}", fullmatch=True), glued=st.from_regex(r"[a-rt-z]{1,4}", fullmatch=True))
def test_a_key_glued_into_a_longer_word_is_not_found(key, glued):
    assert not tarvessa.is_right(f"It is {key}{glued} here.", key)
    assert not tarvessa.is_right(f"It is {glued}{key} here.", key)
