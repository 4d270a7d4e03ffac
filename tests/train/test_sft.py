"""Supervised fine-tuning: the JSONL reader's errors, the loss mask (assistant tokens and their
end-of-turn token only), batches, a LoRA and a full fine-tune learning held-out-scored replies,
and a resumed run equal bit for bit to an uninterrupted one."""
import json
from functools import lru_cache

import numpy as np
import pytest

from minillm import GPT, Tokenizer
from minillm.chat.chatml import chatml_ids
from minillm.config import ModelConfig
from minillm.train.lora.adapters import lora_loss_and_grads
from minillm.train.sft.batches import batch_indices, check_lengths, pack_rows, pad_rows
from minillm.train.sft.data import parse_conversations, read_conversations
from minillm.train.sft.loop import evaluate_conversations, finetune
from minillm.train.sft.mask import ChatMLFormat, render, training_pair

FACTS = [("What colour is the sky on Zorb?", "Green, always."),
         ("Who rules Zorb?", "The council of nine owls."),
         ("What do Zorbians eat?", "Blue soup and toast."),
         ("How far is Zorb?", "Three jumps past the moon.")]
CONVERSATIONS = [[{"role": "user", "content": q}, {"role": "assistant", "content": a}]
                 for q, a in FACTS]
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


@lru_cache(maxsize=None)
def chat_tokenizer() -> Tokenizer:
    """A small BPE tokenizer with ChatML's special tokens, trained on the facts."""
    text = " ".join(q + " " + a for q, a in FACTS) * 4 + " system user assistant You are helpful"
    return Tokenizer.train(text, 320, special_tokens=SPECIALS)


def chat_model(seed=0) -> GPT:
    """A random tiny Llama over chat_tokenizer()'s vocabulary (weights of a trained model's size)."""
    from tests.model.strategies import random_model
    config = ModelConfig(vocab_size=chat_tokenizer().vocab_size, n_ctx=160, d_model=32, n_heads=4,
                         n_kv_heads=2, n_layers=2, d_ff=64, arch="llama")
    return random_model(config, seed)


def write_jsonl(path, conversations):
    path.write_text("".join(json.dumps({"messages": c}) + "\n" for c in conversations))
    return path


def test_conversations_are_read_and_bad_lines_are_named(tmp_path):
    assert read_conversations(write_jsonl(tmp_path / "c.jsonl", CONVERSATIONS)) == CONVERSATIONS
    good = json.dumps({"messages": CONVERSATIONS[0]})
    bad = {"{oops": "not valid JSON",
           json.dumps({"messages": []}): "non-empty list",
           json.dumps({"msgs": CONVERSATIONS[0]}): "one key 'messages'",
           json.dumps({"messages": [{"role": "bot", "content": "x"}]}): "role 'bot'",
           json.dumps({"messages": [{"role": "user", "content": 3}]}): "must be a string",
           json.dumps({"messages": [{"role": "user", "content": "x"}]}): "no assistant reply",
           json.dumps({"messages": CONVERSATIONS[0] + [{"role": "system", "content": "x"}]}):
               "only the first"}
    for line, message in bad.items():
        with pytest.raises(ValueError, match=f"f.jsonl, line 3: .*{message}"):
            parse_conversations(f"{good}\n\n{line}\n{good}\n", "f.jsonl")
    with pytest.raises(ValueError, match="no conversations"):
        parse_conversations("\n  \n", "f.jsonl")
    with pytest.raises(FileNotFoundError):
        read_conversations(tmp_path / "missing.jsonl")


def test_the_mask_counts_the_replies_and_their_end_token_only():
    tok = chat_tokenizer()
    messages = [{"role": "system", "content": "You are helpful"}, *CONVERSATIONS[0],
                {"role": "user", "content": FACTS[1][0]}, {"role": "assistant", "content": FACTS[1][1]}]
    ids, counted = render(tok, messages)
    assert ids.tolist() == chatml_ids(tok, messages, add_generation_prompt=False)
    end = tok.special_tokens["<|im_end|>"]
    # the counted tokens: each reply followed by <|im_end|>; the headers and prompts are not
    runs, run = [], []
    for i, c in zip(ids.tolist(), counted.tolist()):
        if c:
            run.append(i)
        elif run:
            runs.append(run)
            run = []
    assert [tok.decode(r[:-1]) for r in runs] == [FACTS[0][1], FACTS[1][1]]
    assert all(r[-1] == end for r in runs)
    assert counted.sum() == sum(len(tok.encode_ordinary(a)) + 1 for _, a in FACTS[:2])
    x, y, m = training_pair(ids, counted)
    assert (y[m] == ids[1:][counted[1:]]).all() and len(x) == len(ids) - 1


class Bracketed:
    """A made-up format: <|im_start|>role: content<|endoftext|> per message; the stop is
    <|endoftext|> and nothing follows it; ``count`` puts the number of messages first (a format
    that rewrites earlier turns, which cannot be trained turn by turn)."""

    def __init__(self, count=False):
        self.count = count

    def ids(self, tok, messages, add_generation_prompt=True):
        start, stop = tok.special_tokens["<|im_start|>"], tok.special_tokens["<|endoftext|>"]
        out = [len(messages)] if self.count else []
        for m in messages:
            out += [start, *tok.encode_ordinary(f"{m['role']}: {m['content']}"), stop]
        return out + ([start, *tok.encode_ordinary("assistant:")] if add_generation_prompt else [])

    def stop_ids(self, tok):
        return (tok.special_tokens["<|endoftext|>"],)


def test_any_format_object_gives_the_replies_and_their_stop():
    """The reply is what follows the generation prompt, up to the first stop: here the reply's
    leading space merges with nothing ("assistant:" then " Green"), and a reply written with
    leading blank lines still counts all of its text."""
    tok = chat_tokenizer()
    stop = tok.special_tokens["<|endoftext|>"]
    for reply in (FACTS[0][1], "\n\n" + FACTS[0][1]):
        messages = [CONVERSATIONS[0][0], {"role": "assistant", "content": reply}]
        ids, counted = render(tok, messages, Bracketed())
        run = ids[counted].tolist()
        assert run[-1] == stop and tok.decode(run[:-1]).strip() == FACTS[0][1]
        assert ids.tolist()[-1] == stop and counted[-1]
    with pytest.raises(ValueError, match="message 1: .* not a prefix"):
        render(tok, CONVERSATIONS[0], Bracketed(count=True))


def test_the_default_system_message_is_inserted_as_chat_inserts_it():
    tok = chat_tokenizer()
    with_default, _ = render(tok, CONVERSATIONS[0])
    without, _ = render(tok, CONVERSATIONS[0], ChatMLFormat(default_system=None))
    assert with_default.tolist() == chatml_ids(tok, CONVERSATIONS[0], add_generation_prompt=False)
    assert len(with_default) > len(without)


def test_too_long_conversations_are_refused_not_truncated():
    tok = chat_tokenizer()
    examples = [render(tok, c) for c in CONVERSATIONS]
    limit = max(len(ids) for ids, _ in examples) - 1
    with pytest.raises(ValueError, match=r"conversation \d has \d+ tokens, more than the limit"):
        check_lengths(examples, limit)
    with pytest.raises(ValueError, match="never truncated"):
        finetune(chat_model(), tok, CONVERSATIONS, steps=1, max_tokens=limit)


def test_batches_cover_every_conversation_once_per_epoch():
    for step0 in (0, 3):
        seen = np.concatenate([batch_indices(7, 3, 5, step0 + k) for k in range(3)])
        assert sorted(seen.tolist()) == list(range(7))
    assert not np.array_equal(batch_indices(7, 7, 5, 0), batch_indices(7, 7, 5, 1))
    tok = chat_tokenizer()
    examples = [render(tok, c, ChatMLFormat(None)) for c in CONVERSATIONS]
    x, y, m, seg = pack_rows(examples, 60)
    assert m.sum() == sum(c[1:].sum() for _, c in examples)
    assert (np.diff(seg, axis=1) >= 0).all() and x.shape[1] == 60
    px, py, pm = pad_rows(examples)
    assert pm.sum() == m.sum() and px.shape[0] == len(examples)


def test_lora_fine_tuning_learns_the_replies_and_the_held_out_score_agrees():
    """30 steps of rank-4 LoRA on four conversations: the loss on their assistant tokens falls
    below a third and the accuracy rises (measured: loss 6.7 -> 1.7, accuracy 0.0 -> 0.78); the
    base is untouched."""
    tok, model = chat_tokenizer(), chat_model()
    before_w = model.params.blocks[0].attn.wq.copy()
    before = evaluate_conversations(model, tok, CONVERSATIONS)
    result = finetune(model, tok, CONVERSATIONS, rank=4, steps=30, lr=1e-2, batch_size=2,
                      eval_conversations=CONVERSATIONS)
    after = result.eval
    assert after["tokens"] == before["tokens"] > 0
    assert after["loss"] < before["loss"] / 3 and after["accuracy"] > before["accuracy"]
    np.testing.assert_array_equal(model.params.blocks[0].attn.wq, before_w)
    # the held-out loss is the mean of the training loss over the same tokens
    x, y, m = pad_rows([render(tok, c) for c in CONVERSATIONS])
    loss, _ = lora_loss_and_grads(model.params, model.config, result.lora, x, y, m)
    assert abs(loss - after["loss"]) <= 1e-5 * max(1.0, loss)
    again = evaluate_conversations(model, tok, CONVERSATIONS, result.lora)   # other batches
    assert again["tokens"] == after["tokens"] and abs(again["loss"] - after["loss"]) <= 1e-5


def test_full_fine_tuning_changes_the_model_and_lowers_the_loss():
    """20 steps on packed rows (measured: loss 6.7 -> 0.88)."""
    tok, model = chat_tokenizer(), chat_model()
    before = evaluate_conversations(model, tok, CONVERSATIONS)
    result = finetune(model, tok, CONVERSATIONS, full=True, steps=20, lr=3e-3, batch_size=4,
                      pack=True, eval_conversations=CONVERSATIONS)
    assert result.lora is None and result.eval["loss"] < before["loss"] / 2


@pytest.mark.parametrize("full", [False, True])
def test_a_resumed_run_equals_an_uninterrupted_one(tmp_path, full):
    tok = chat_tokenizer()
    kwargs = dict(rank=2, full=full, steps=6, lr=1e-2, batch_size=3, checkpoint_every=3)
    straight = finetune(chat_model(), tok, CONVERSATIONS, out=tmp_path / "a", **kwargs)
    first = chat_model()
    with pytest.raises(_Stop):
        finetune(first, tok, CONVERSATIONS, out=tmp_path / "b", on_step=lambda r: _stop_at(r, 4),
                 **kwargs)
    resumed = finetune(chat_model(), tok, CONVERSATIONS, out=tmp_path / "b", resume=True, **kwargs)
    assert resumed.losses == straight.losses[3:]
    if full:
        for k, v in straight.model.params.named().items():
            np.testing.assert_array_equal(resumed.model.params.named()[k], v, err_msg=k)
    else:
        for k, v in straight.lora.named().items():
            np.testing.assert_array_equal(resumed.lora.named()[k], v, err_msg=k)
    log = [json.loads(line) for line in (tmp_path / "b" / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == list(range(1, 7))
    with pytest.raises(ValueError, match="other settings"):
        finetune(chat_model(), tok, CONVERSATIONS, out=tmp_path / "b", resume=True,
                 **{**kwargs, "lr": 2e-2})
    with pytest.raises(ValueError, match="other conversations"):
        finetune(chat_model(), tok, CONVERSATIONS[:3], out=tmp_path / "b", resume=True, **kwargs)


def test_a_gpt2_adapter_run_with_checkpoints_is_refused_before_training(tmp_path):
    """PEFT's layout has no name for GPT-2's fused Q, K, V: refused before the first step."""
    tok = chat_tokenizer()
    gpt2 = GPT(ModelConfig(vocab_size=tok.vocab_size, n_ctx=160, d_model=16, n_heads=2, n_layers=1))
    with pytest.raises(ValueError, match="Llama family only"):
        finetune(gpt2, tok, CONVERSATIONS, steps=1, out=tmp_path / "run")
    assert not (tmp_path / "run" / "train_log.jsonl").exists()
    assert finetune(gpt2, tok, CONVERSATIONS, steps=1).lora is not None     # without files: fine


class _Stop(Exception):
    pass


def _stop_at(record, step):
    if record["step"] == step:
        raise _Stop
