"""One bad-input sweep over every command: each case runs ``main([...])`` in-process (a few as
subprocesses, as a user types them) and must end with exit status 1 or 2, no traceback, and a
message naming the offending flag or argument and what is allowed (the case's needles, all of
them, in stderr; case-insensitive). Missing, folder, FIFO, non-UTF-8 and empty files; out-of-range,
non-numeric, NaN and infinite values; negative counts; unknown names; conflicting flags; bad
JSON; ids out of range; too-long prompts; null bytes. (tests/cli/test_cli_conventions.py,
test_rough_edges.py and test_cli_inputs.py hold the cases met first; these extend them to every
command.)"""
import io
import os
import re
import sys

import pytest

from minillm import GPT, ModelConfig
from minillm.cli import main
from minillm.tokenizer import Tokenizer
from tests.cli.subprocess_run import minillm

CHAT = '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}\n'


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The inputs the cases name: {model} a tiny Llama folder with a ChatML tokenizer, {tok} its
    tokenizer.json, and a file of every bad kind."""
    root = tmp_path_factory.mktemp("sweep")
    text = "user assistant system hello there, how are you? fine, thanks. " * 30
    tok = Tokenizer.train(text, vocab_size=300,
                          special_tokens=("<|endoftext|>", "<|im_start|>", "<|im_end|>"))
    config = ModelConfig(arch="llama", vocab_size=tok.vocab_size, n_ctx=128, d_model=16,
                         n_heads=2, n_kv_heads=1, n_layers=1, d_ff=32)
    GPT(config, seed=0).save_pretrained(root / "model")
    tok.save(root / "model" / "tokenizer.json")
    paths = {"root": root, "model": root / "model", "tok": root / "model" / "tokenizer.json",
             "missing": root / "missing.txt", "dir": root / "folder", "fifo": root / "fifo",
             "empty": root / "empty.txt", "latin1": root / "latin1.txt",
             "badjson": root / "bad.jsonl", "chat": root / "chat.jsonl",
             "text": root / "text.txt", "long": root / "long.txt", "notjson": root / "schema.json",
             "prompts": root / "prompts.jsonl", "corpus": root / "corpus.txt"}
    paths["dir"].mkdir()
    os.mkfifo(paths["fifo"])
    paths["empty"].write_bytes(b"")
    paths["latin1"].write_bytes(b"caf\xe9 au lait\n")
    paths["badjson"].write_text('{"messages": [\n')
    paths["notjson"].write_text("{not json")
    paths["chat"].write_text(CHAT)
    paths["text"].write_text("hello there\n")
    paths["long"].write_text("hello there " * 200)        # far over the context of 128 tokens
    paths["prompts"].write_text('{"prompt": "hi"}\n{"nope": 1}\n')
    paths["corpus"].write_text(text)
    return paths


# (argv, the words stderr must hold). {name} is a path of ``files``; "@stdin:TEXT" first feeds
# TEXT as standard input.
CASES = [
    # tokenize
    (["tokenize", "--tokenizer", "{missing}", "hi"], ["--tokenizer", "missing.txt", "takes"]),
    (["tokenize", "--tokenizer", "{dir}", "hi"], ["folder", "expected one of tokenizer.json"]),
    (["tokenize", "--tokenizer", "{notjson}", "hi"], ["schema.json", "not valid json"]),
    (["tokenize", "--tokenizer", "nosuchname", "hi"], ["--tokenizer", "nosuchname"]),
    (["tokenize", "--tokenizer", "{empty}", "hi"], ["empty.txt", "not valid json"]),
    (["tokenize", "--model", "{missing}", "hi"], ["--model", "missing.txt"]),
    (["tokenize", "--ids", "--json", "hi"], ["--json", "--ids", "not allowed"]),
    (["tokenize", "--tokenizer", "{tok}", "a\0b"], ["text", "holds a null byte"]),
    (["tokenize", "--bogus", "hi"], ["--bogus", "minillm tokenize"]),
    # detokenize
    (["detokenize", "--tokenizer", "{tok}", "abc"], ["abc", "integer"]),
    (["detokenize", "--tokenizer", "{tok}", "99999"], ["IDS", "99999", "ids are in [0, 299]"]),
    (["detokenize", "--tokenizer", "{tok}", "--", "-5"], ["-5"]),
    (["detokenize", "--tokenizer", "{tok}", "1.5"], ["1.5", "integer"]),
    (["detokenize", "--tokenizer", "{tok}", "nan"], ["nan", "integer"]),
    (["detokenize", "--tokenizer", "{missing}", "1"], ["--tokenizer", "missing.txt", "takes"]),
    (["detokenize", "--model", "{dir}", "1"], ["folder", "expected one of tokenizer.json"]),
    (["@stdin:[1, 2", "detokenize", "--tokenizer", "{tok}"], ["IDS", "not a JSON list of ids"]),
    (["@stdin:{\"ids\": [1]}", "detokenize", "--tokenizer", "{tok}"], ["IDS", "not an integer"]),
    (["@stdin:[1, 99999]", "detokenize", "--tokenizer", "{tok}"], ["99999", "ids are in"]),
    # count
    (["count", "--tokenizer", "{tok}", "{missing}"], ["missing.txt", "no such"]),
    (["count", "--tokenizer", "{tok}", "{dir}"], ["folder", "not a regular file"]),
    (["count", "--tokenizer", "{tok}", "{fifo}"], ["fifo", "not a regular file"]),
    (["count", "--tokenizer", "{tok}", "--context", "0", "{text}"], ["--context", "positive"]),
    (["count", "--tokenizer", "{tok}", "--context", "-3", "{text}"], ["--context"]),
    (["count", "--tokenizer", "{tok}", "--context", "ten", "{text}"], ["--context", "int"]),
    (["count", "--tokenizer", "{tok}", "/dev/zero"], ["/dev/zero", "not a regular file"]),
    (["count", "--tokenizer", "{tok}", "a\0b"], ["FILES", "holds a null byte"]),
    (["count", "--tokenizer", "nosuch", "{text}"], ["--tokenizer", "nosuch"]),
    # generate
    (["generate", "--model", "{missing}", "hi"], ["--model", "missing.txt"]),
    (["generate", "--model", "{dir}", "hi"], ["folder", "not a checkpoint", "config.json"]),
    (["generate", "--model", "{empty}", "hi"], ["empty.txt", "expected a checkpoint directory"]),
    (["generate", "--model", "nosuchmodel", "hi"], ["--model", "nosuchmodel"]),
    (["generate", "--model", "{model}", "-t", "-1", "hi"], ["--temperature", ">= 0"]),
    (["generate", "--model", "{model}", "-t", "nan", "hi"], ["--temperature"]),
    (["generate", "--model", "{model}", "-t", "inf", "hi"], ["--temperature"]),
    (["generate", "--model", "{model}", "-t", "warm", "hi"], ["--temperature", "float"]),
    (["generate", "--model", "{model}", "--top-p", "1.5", "hi"], ["--top-p"]),
    (["generate", "--model", "{model}", "--top-p", "nan", "hi"], ["--top-p"]),
    (["generate", "--model", "{model}", "--top-k", "-2", "hi"], ["--top-k"]),
    (["generate", "--model", "{model}", "--top-k", "2.5", "hi"], ["--top-k", "int"]),
    (["generate", "--model", "{model}", "--min-p", "-0.1", "hi"], ["--min-p"]),
    (["generate", "--model", "{model}", "--min-p", "2", "hi"], ["--min-p"]),
    (["generate", "--model", "{model}", "-n", "-1", "hi"], ["--max-new-tokens"]),
    (["generate", "--model", "{model}", "-n", "10000000", "hi"], ["--max-new-tokens", "at most"]),
    (["generate", "--model", "{model}", "--seed", "-1", "hi"], ["--seed", ">= 0"]),
    (["generate", "--model", "{model}", "--seed", "x", "hi"], ["--seed"]),
    (["generate", "--model", "{model}", "--repeat-penalty", "0", "hi"], ["--repeat-penalty", "> 0"]),
    (["generate", "--model", "{model}", "--repeat-penalty", "nan", "hi"], ["--repeat-penalty"]),
    (["generate", "--model", "{model}", "--frequency-penalty", "inf", "hi"], ["--frequency-penalty"]),
    (["generate", "--model", "{model}", "--presence-penalty=-inf", "hi"], ["--presence-penalty", "finite"]),
    (["generate", "--model", "{model}", "--beams", "0", "hi"], ["--beams", ">= 1"]),
    (["generate", "--model", "{model}", "--beams", "5000", "hi"], ["--beams", "at most"]),
    (["generate", "--model", "{model}", "--beams", "2", "-t", "0.8", "hi"], ["--beams"]),
    (["generate", "--model", "{model}", "--length-penalty", "nan", "--beams", "2", "hi"],
     ["--length-penalty"]),
    (["generate", "--model", "{model}", "--preset", "wild", "hi"], ["--preset", "choose from"]),
    (["generate", "--model", "{model}", "--show-candidates", "-1", "hi"], ["--show-candidates", "from 1 to 50"]),
    (["generate", "--model", "{model}", "--logprobs", "-1", "hi"], ["--logprobs", "--json"]),
    (["generate", "--model", "{model}", "--json", "--logprobs", "-1", "hi"], ["--logprobs"]),
    (["generate", "--model", "{model}", "--json", "--json-final", "hi"], ["--json-final", "not allowed"]),
    (["generate", "--model", "{model}", ""], ["prompt", "empty"]),
    (["generate", "--model", "{model}", "--prompt-file", "{missing}"], ["--prompt-file", "no such"]),
    (["generate", "--model", "{model}", "--prompt-file", "{dir}"], ["--prompt-file", "not a regular file"]),
    (["generate", "--model", "{model}", "--prompt-file", "{fifo}"], ["--prompt-file", "not a regular file"]),
    (["generate", "--model", "{model}", "--prompt-file", "{latin1}"], ["--prompt-file", "utf-8"]),
    (["generate", "--model", "{model}", "--prompt-file", "{empty}"], ["--prompt-file", "empty"]),
    (["generate", "--model", "{model}", "--prompt-file", "{long}"], ["prompt", "context"]),
    (["generate", "--model", "{model}", "--prompts", "{badjson}"], ["--prompts", "json"]),
    (["generate", "--model", "{model}", "--prompts", "{prompts}"], ["--prompts", "prompt"]),
    (["generate", "--model", "{model}", "--prompts", "{empty}"], ["--prompts"]),
    (["generate", "--model", "{model}", "--tokenizer", "{notjson}", "hi"], ["schema.json", "not valid json"]),
    (["generate", "--model", "{model}", "--temprature", "1", "hi"], ["did you mean --temperature"]),
    (["generate", "--model", "{model}", "--stop", "", "hi"], ["--stop", "non-empty strings"]),
    (["generate", "--model", "{model}", "a\0b"], ["holds a null byte"]),
    (["generate", "--model", "{model}\0x", "hi"], ["--model", "holds a null byte"]),
    # chat
    (["@stdin:hi\n", "chat", "--model", "{missing}"], ["--model", "missing.txt"]),
    (["@stdin:hi\n", "chat", "--model", "{model}", "--chat-format", "nosuch"], ["chat format", "nosuch"]),
    (["@stdin:hi\n", "chat", "--model", "{model}", "--json-schema", "{notjson}"], ["--json-schema", "json"]),
    (["@stdin:hi\n", "chat", "--model", "{model}", "--json-schema", "{missing}"], ["--json-schema", "no such"]),
    (["@stdin:hi\n", "chat", "--model", "{model}", "--regex", "(", "--choice", "a,b"], ["not allowed"]),
    (["@stdin:hi\n", "chat", "--model", "{model}", "--regex", "("], ["--regex"]),
    (["@stdin:hi\n", "chat", "--model", "{model}", "--choice", ""], ["--choice"]),
    (["@stdin:hi\n", "chat", "--model", "{model}", "-t", "-2"], ["--temperature"]),
    (["@stdin:hi\n", "chat", "--model", "{model}", "-n", "0"], ["--max-new-tokens"]),
    (["@stdin:hi\n", "chat", "--model", "{model}", "--top-p", "0"], ["--top-p"]),
    (["chat"], ["--model", "required"]),
    # train
    (["train", "--data", "{missing}", "--out", "{root}/t1"], ["--data", "no such"]),
    (["train", "--data", "{dir}", "--out", "{root}/t2"], ["--data", "not a regular file"]),
    (["train", "--data", "{fifo}", "--out", "{root}/t3"], ["--data", "not a regular file"]),
    (["train", "--data", "{latin1}", "--out", "{root}/t4"], ["--data", "utf-8"]),
    (["train", "--data", "{empty}", "--out", "{root}/t5"], ["--data", "empty", "utf-8 text"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t6", "--steps", "0"], ["--steps must be a positive"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t7", "--steps", "-5"], ["--steps must be a positive"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t8", "--lr", "nan"], ["--lr", "finite number > 0"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t9", "--lr", "inf"], ["--lr"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t10", "--lr", "-1"], ["--lr"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t11", "--batch", "0"], ["--batch"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t12", "--heads", "3"], ["--heads"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t13", "--vocab-size", "100"], ["--vocab-size", "256"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t14", "--val-fraction", "1.5"], ["--val-fraction"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t15", "--kv-heads", "2"], ["--kv-heads", "--arch llama"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t16", "--arch", "bert"], ["--arch", "choose from"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t17", "--max-shard-size", "lots"], ["--max-shard-size"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t18", "--pattern", "("], ["--pattern"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t19", "--context", "-1"], ["--context"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t20", "--warmup", "-1"], ["--warmup"]),
    (["train", "--data", "{corpus}", "--out", "{text}"], ["--out"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t21", "--resume"], ["--resume"]),
    (["train", "--data", "{corpus}", "--out", "{root}/t22", "--weight-decay", "nan"], ["--weight-decay"]),
    (["train", "--data", "{corpus}"], ["--out", "required"]),
    # finetune
    (["finetune", "--model", "{model}", "--data", "{missing}", "--out", "{root}/f1"], ["--data", "no such"]),
    (["finetune", "--model", "{model}", "--data", "{badjson}", "--out", "{root}/f2"], ["--data", "json"]),
    (["finetune", "--model", "{model}", "--data", "{empty}", "--out", "{root}/f3"], ["--data"]),
    (["finetune", "--model", "{model}", "--data", "{latin1}", "--out", "{root}/f4"], ["--data"]),
    (["finetune", "--model", "{model}", "--data", "{fifo}", "--out", "{root}/f5"], ["--data"]),
    (["finetune", "--model", "{model}", "--data", "{chat}", "--out", "{root}/f6", "--lora", "0"], ["--lora"]),
    (["finetune", "--model", "{model}", "--data", "{chat}", "--out", "{root}/f7", "--lr", "nan"], ["--lr"]),
    (["finetune", "--model", "{model}", "--data", "{chat}", "--out", "{root}/f8", "--epochs", "0"], ["--epochs"]),
    (["finetune", "--model", "{model}", "--data", "{chat}", "--out", "{root}/f9", "--steps", "-1"], ["--steps must be a positive integer, got -1"]),
    (["finetune", "--model", "{model}", "--data", "{chat}", "--out", "{root}/f18", "--max-tokens", "0"], ["--max-tokens must be a positive"]),
    (["finetune", "--model", "{model}", "--data", "{chat}", "--out", "{root}/f10", "--steps", "2",
      "--epochs", "2"], ["--epochs", "not allowed"]),
    (["finetune", "--model", "{model}", "--data", "{chat}", "--out", "{root}/f11", "--full",
      "--lora", "4"], ["--lora", "not allowed"]),
    (["finetune", "--model", "{model}", "--data", "{chat}", "--out", "{root}/f12", "--targets",
      "q,bogus"], ["--targets", "bogus"]),
    (["finetune", "--model", "{model}", "--data", "{chat}", "--out", "{root}/f13", "--alpha", "inf"], ["--alpha"]),
    (["finetune", "--model", "{model}", "--data", "{chat}", "--out", "{root}/f14", "--batch", "0"], ["--batch"]),
    (["finetune", "--model", "{model}", "--data", "{chat}", "--out", "{root}/f15", "--eval", "{badjson}"], ["--eval"]),
    (["finetune", "--model", "{model}", "--data", "{chat}", "--out", "{root}/f16", "--chat-format",
      "nosuch"], ["chat format", "nosuch"]),
    (["finetune", "--model", "{missing}", "--data", "{chat}", "--out", "{root}/f17"], ["--model"]),
    # export
    (["export", "{missing}", "--gguf", "{root}/e1.gguf"], ["missing.txt"]),
    (["export", "{model}", "--gguf", "{root}/e2.gguf", "--dtype", "q2"], ["--dtype", "choose from"]),
    (["export", "{model}", "--gguf", "{dir}"], ["--gguf"]),
    (["export", "{model}", "--gguf", "{text}"], ["--gguf"]),
    (["export", "{model}", "--gguf", "{root}/nodir/e3.gguf"], ["nodir", "does not exist"]),
    (["export", "{model}", "--gguf", "{root}/e4.gguf", "--tokenizer", "{notjson}"], ["schema.json", "not valid json"]),
    (["export", "{model}"], ["--gguf", "required"]),
    # download
    (["download", "gpt5"], ["gpt5", "choose from"]),
    (["download"], ["required"]),
    (["download", "smollm2", "--cache-dir", "{text}"], ["--cache-dir", "not a folder"]),
    # perplexity
    (["perplexity", "--model", "{model}", "{missing}"], ["missing.txt", "no such"]),
    (["perplexity", "--model", "{model}", "{dir}"], ["folder", "not a regular file"]),
    (["perplexity", "--model", "{model}", "{fifo}"], ["fifo", "not a regular file"]),
    (["perplexity", "--model", "{model}", "{latin1}"], ["latin1.txt", "utf-8"]),
    (["perplexity", "--model", "{model}", "{empty}"], ["empty"]),
    (["perplexity", "--model", "{model}", "--ctx", "0", "{long}"], ["--ctx"]),
    (["perplexity", "--model", "{model}", "--ctx", "1000", "{long}"], ["--ctx"]),
    (["perplexity", "--model", "{model}", "--stride", "-1", "{long}"], ["--stride"]),
    (["perplexity", "--model", "{model}", "--batch", "0", "{long}"], ["--batch"]),
    (["perplexity", "--model", "{model}", "--ctx", "x", "{long}"], ["--ctx", "int"]),
    (["perplexity", "--model", "{missing}", "{long}"], ["--model"]),
    # score
    (["score", "--model", "{model}"], ["TEXT", "--file"]),
    (["score", "--model", "{model}", "--file", "{text}", "hello"], ["--file", "TEXT"]),
    (["score", "--model", "{model}", "--file", "{missing}"], ["--file", "no such"]),
    (["score", "--model", "{model}", "--file", "{latin1}"], ["--file", "utf-8"]),
    (["score", "--model", "{model}", "--file", "{fifo}"], ["--file", "not a regular file"]),
    (["score", "--model", "{model}", "--top", "-1", "hello"], ["--top"]),
    (["score", "--model", "{model}", "--top", "100000", "hello"], ["--top"]),
    (["score", "--model", "{model}", ""], ["empty"]),
    (["score", "--model", "{model}", "--file", "{long}"], ["context"]),
    # info
    (["info", "{missing}"], ["missing.txt"]),
    (["info", "{dir}"], ["folder"]),
    (["info", "{empty}"], ["empty.txt"]),
    (["info", "nosuchmodel"], ["nosuchmodel"]),
    (["info", "{notjson}"], ["schema.json"]),
    (["info", "--tensrs", "{model}"], ["did you mean --tensors"]),
    # serve (refused before it listens)
    (["serve", "--model", "{missing}"], ["--model", "missing.txt"]),
    (["serve", "--model", "{model}", "--port", "70000"], ["--port", "65535"]),
    (["serve", "--model", "{model}", "--slots", "0"], ["--slots", "[1, 256]"]),
    (["serve", "--model", "{model}", "--context", "100000"], ["--context", "n_ctx=128"]),
    (["serve", "--model", "{model}", "--context", "1"], ["--context", "at least 2"]),
    (["serve", "--model", "{model}", "--grace", "nan"], ["--grace"]),
    (["serve", "--model", "{model}", "--api-key", ""], ["--api-key", "empty"]),
    (["serve", "--model", "{model}", "--chat-format", "nope"], ["nope", "chatml"]),
    # lens
    (["lens", "--model", "{missing}", "hi"], ["--model", "missing.txt"]),
    (["lens", "--model", "{model}"], ["PROMPT is required"]),
    (["lens", "--model", "{model}", "--heads", "hi"], ["--heads", "no PROMPT"]),
    (["lens", "--model", "{model}", "--heads", "--score", "mean"], ["--score", "invalid choice"]),
    (["lens", "--model", "{model}", "--heads", "--top", "0"], ["--top", "from 1"]),
    # bench
    (["bench", "{model}"], ["give --plan"]),
    (["bench", "--plan", "{missing}"], ["missing.txt"]),
    (["bench", "--plan", "{dir}"], ["folder"]),
    # no command, or an unknown one
    (["frobnicate"], ["frobnicate", "choose from"]),
]


def fill(argv, files):
    """The ``{name}`` placeholders replaced by the paths of ``files``."""
    return [re.sub(r"\{(\w+)\}", lambda m: str(files[m.group(1)]), a) for a in argv]


def run_case(argv, capsys, monkeypatch, files):
    stdin = ""
    if argv[0].startswith("@stdin:"):
        stdin, argv = argv[0][len("@stdin:"):], argv[1:]
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    monkeypatch.chdir(files["root"])
    try:
        code = main(fill(argv, files))
    except SystemExit as exc:                # argparse's errors
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("argv, needles", CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_bad_input_is_refused_with_a_message_naming_it(argv, needles, capsys, monkeypatch, files):
    code, err = run_case(argv, capsys, monkeypatch, files)
    assert code in (1, 2), err
    assert "Traceback" not in err
    assert all(n.lower() in err.lower() for n in needles), err


def test_the_sweep_covers_every_command_with_at_least_90_cases():
    from minillm.cli import COMMANDS
    named = {next(a for a in argv if not a.startswith("@")) for argv, _ in CASES}
    assert set(COMMANDS) <= named and len(CASES) >= 90


SUBPROCESS_CASES = [      # as typed at a shell: the real argv, stdin and exit path
    (["generate", "--model", "{model}", "--top-p", "2", "hi"], "", ["--top-p"]),
    (["count", "--tokenizer", "{tok}", "{fifo}"], "", ["not a regular file"]),
    (["detokenize", "--tokenizer", "{tok}"], "[1, 99999]", ["99999"]),
    (["train", "--data", "{fifo}", "--out", "{root}/sp"], "", ["--data"]),
    (["info", "{dir}"], "", ["folder"]),
]


@pytest.mark.parametrize("argv, stdin, needles", SUBPROCESS_CASES,
                         ids=[a[0] for a, _, _ in SUBPROCESS_CASES])
def test_bad_input_as_a_subprocess(argv, stdin, needles, files):
    code, _, err = minillm(*fill(argv, files), stdin=stdin, timeout=60)
    assert code in (1, 2) and "Traceback" not in err
    assert all(n.lower() in err.lower() for n in needles), err
