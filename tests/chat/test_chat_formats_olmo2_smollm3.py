"""OLMo 2 Instruct's and SmolLM3's chat formats: the rules their fixtures do not reach alone.

The renderings themselves are checked against the real templates with every other format
(tests/chat/test_chat_formats.py, fixtures olmo2.json, smollm3.json, smollm3-unsloth.json); this
file keeps SmolLM3's date explicit, the empty conversation (transformers refuses to render one,
a chat renders it before the first turn), detection, and the prefix property.
"""
import pytest
from hypothesis import assume, given

from minillm.chat.formats import get_format
from minillm.chat.formats.detect import choose_format, detect_format
from minillm.io.gguf.write import STRING
from tests.chat.test_chat_formats import DATA, TOKENIZERS, conversations, tiny_chat_model

U, A = {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}


def test_smollm3_never_reads_the_clock_its_date_is_an_argument():
    with pytest.raises(ValueError, match="dates its system block with today's date: pass it"):
        get_format("smollm3").render([U])
    text = get_format("smollm3").with_options(date_string="07 March 2031").render([U])
    assert "Knowledge Cutoff Date: June 2025\nToday Date: 07 March 2031\nReasoning Mode: /think" \
        in text
    assert "Today Date" not in get_format("smollm3-unsloth").render([U])


def test_a_chat_dates_smollm3_today_and_says_so(monkeypatch):
    import minillm.chat.formats.detect as detect
    monkeypatch.setattr(detect.time, "strftime", lambda fmt: "07 March 2031")
    tok = TOKENIZERS["smollm3"]
    tok.gguf_metadata = {"tokenizer.chat_template": (STRING, DATA["smollm3"]["template"])}
    fmt, note = choose_format(tok)
    assert fmt.name == "smollm3" and fmt.options["date_string"] == "07 March 2031"
    assert note.endswith("recognised from the model's chat template; dated 07 March 2031 "
                         "(today), as SmolLM3's template does")
    fixed = get_format("smollm3").with_options(date_string="01 May 2030")
    assert choose_format(tok, fixed)[0].options["date_string"] == "01 May 2030"   # kept as given
    assert choose_format(tok, "smollm3-unsloth")[1] == ("chat format smollm3-unsloth (SmolLM3 "
                                                        "(GGUF copy)), as asked")


def test_empty_conversations_render_what_a_chat_holds_before_its_first_turn():
    assert get_format("olmo2").render([]) == "<|endoftext|>"     # the prompt is in the loop
    assert get_format("olmo2").render([], add_generation_prompt=False) == "<|endoftext|>"
    smol = get_format("smollm3").with_options(date_string="03 December 2026", enable_thinking=False)
    assert smol.render([], False).endswith("named SmolLM, trained by Hugging Face.\n\n")  # open
    assert get_format("smollm3-unsloth").render([], False).endswith("<|im_end|>\n")   # closed
    assert smol.render([], True) == smol.render([], False) + \
        "<|im_start|>assistant\n<think>\n\n</think>\n"


def test_smollm3_reasoning_mode_follows_the_system_message():
    smol = get_format("smollm3").with_options(date_string="03 December 2026")
    no_think = smol.render([{"role": "system", "content": "Be brief /no_think"}, U, A, U])
    assert "Reasoning Mode: /no_think" in no_think and "Be brief\n\n" in no_think
    assert no_think.count("<think>\n\n</think>\n") == 2               # the reply and the prompt
    thinking = get_format("smollm3-unsloth").with_options(enable_thinking=False).render(
        [{"role": "system", "content": "/think"}, U])
    assert "Reasoning Mode: /think" in thinking and "Thought section" in thinking
    with pytest.raises(TypeError, match="enable_thinking must be a bool"):
        get_format("smollm3-unsloth").with_options(enable_thinking="no").render([U])


@pytest.mark.parametrize("name", ["olmo2", "smollm3", "smollm3-unsloth"])
def test_detection_names_each_template(name):
    assert detect_format(DATA[name]["template"]) == name


def test_olmo2_is_not_taken_for_zephyr_or_phi3():
    zephyr = ("{% for message in messages %}{% if message['role'] == 'user' %}{{ '<|user|>\\n' + "
              "message['content'] + eos_token }}{% endif %}{% endfor %}")
    assert detect_format(zephyr) is None
    assert detect_format(DATA["phi3"]["template"]) == "phi3"


@pytest.mark.parametrize("name", ["olmo2", "smollm3", "smollm3-unsloth"])
@given(messages=conversations())
def test_rendering_a_prefix_is_a_prefix_of_the_rendering(name, messages):
    """OLMo 2's last reply has no newline after EOS, the next turn adds it: still a prefix."""
    assume(len(messages) >= 2)
    fmt = get_format(name).with_options(date_string="03 December 2026") if name == "smollm3" \
        else get_format(name)
    for k in range(1, len(messages)):
        assert fmt.render(messages, False).startswith(fmt.render(messages[:k], False))
    assert fmt.render(messages, True).startswith(fmt.render(messages, False))


# ---- a chat with a model whose file carries one of these templates ------------------------------
TEXT = ("system user assistant\nWhat is the capital of France? Paris is the capital.\n") * 20
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]


@pytest.fixture(scope="module")
def model_and_tokenizer():
    return tiny_chat_model(TEXT, SPECIALS, n_ctx=1024)


@pytest.mark.parametrize("name, stop", [("olmo2", ["<|endoftext|>"]),
                                        ("smollm3-unsloth", ["<|im_end|>"])])
def test_a_chat_talks_in_the_format_its_template_names(model_and_tokenizer, name, stop):
    from minillm.chat.conversation import Chat
    model, tok = model_and_tokenizer
    tok.gguf_metadata = {"tokenizer.chat_template": (STRING, DATA[name]["template"])}
    chat = Chat(model, tok, system="Be brief.", max_new_tokens=3, temperature=0)
    assert chat.format.name == name and "recognised from the model's chat template" in \
        chat.format_note
    assert chat.stop_ids == tuple(sorted(tok.special_tokens[s] for s in stop))
    reply = chat.ask("What is the capital of France?")
    assert chat.prompt_ids() == get_format(name).ids(tok, chat.conversation())
    assert chat.conversation()[-1] == {"role": "assistant", "content": reply}
