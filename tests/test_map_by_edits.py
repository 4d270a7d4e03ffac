"""The map, checked by real edits: each afternoon file's "Where it runs" line says, per definition,
whether the engine and ``--reference`` both run it (shared), only ``--reference`` does (copied: the
engine has its own form) or neither does (definition only: a faster form runs, tested equal).

A monkeypatched module attribute would not show this (``from … import`` in the engine keeps the
original), so the package is copied to a temporary folder, ONE definition's source is edited there
(a small change of behaviour), and ``python -m minillm generate`` runs on the copy in a subprocess,
with and without ``--reference``. The output must change exactly where the map says.

A definition that ``generate`` never runs is edited under the command that runs it: beam search
under ``generate --beams``; GPT-2's initialisation (``model/init.py``) under ``train`` (a tiny
run: its losses are compared), which has no ``--reference`` since training always runs model/'s
code, so its one run stands for both modes.

Cost: one subprocess per (edit, mode), each ~0.5 s of CPU on the shipped tiny models.
"""
import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import minillm

ROOT = Path(minillm.__file__).parent
GREEDY = ("-t", "0", "--max-new-tokens", "8")
SAMPLED = ("-t", "1", "--seed", "0", "--max-new-tokens", "12")
GPT2, LLAMA = "weights/shakespeare", "weights/tiny-llama"     # RoPE, RMSNorm, SwiGLU: LLAMA only
BEAMS = ("--max-new-tokens", "8", "--beams", "3")
TRAIN = "train"     # instead of a model: a 2-step training run on a small text (see ``run``)

# (file, definition, the text replaced, its replacement, model, flags): one behaviour-changing edit
EDITS = [
    ("functional.py", "softmax", "e /= e.sum(axis=axis, keepdims=True)",
     "e **= 2; e /= e.sum(axis=axis, keepdims=True)", GPT2, SAMPLED),
    ("model/embedding.py", "embed", "h = wte[ids]", "h = -wte[ids]", GPT2, GREEDY),
    ("model/norm.py", "layer_norm", "keepdims=True) + eps) * weight + bias",
     "keepdims=True) + eps) * weight - bias", GPT2, GREEDY),
    ("model/norm.py", "rms_norm", "axis=-1, keepdims=True) + eps) * weight",
     "axis=-1, keepdims=True) + eps) * -weight", LLAMA, GREEDY),
    ("model/norm.py", "norm", 'if kind == "layernorm":', 'if kind != "layernorm":', GPT2, GREEDY),
    ("model/linear.py", "linear", "else y + b", "else y - b", GPT2, GREEDY),
    ("model/rope.py", "apply_rope", "b * cos + a * sin", "b * cos - a * sin", LLAMA, GREEDY),
    ("model/rope.py", "rope_angles", "[..., None] * inv_freq", "[..., None] * inv_freq * 3",
     LLAMA, GREEDY),
    ("model/ffn.py", "gelu_tanh", "return 0.5 * x * (1.0 + np", "return x * (1.0 + np", GPT2, GREEDY),
    ("model/ffn.py", "silu", "return x * (0.5 + 0.5 * np.tanh(0.5 * x))", "return x", LLAMA, GREEDY),
    ("model/ffn.py", "gelu_mlp", "gelu_tanh(linear(x, p.w_up, p.b_up)))",
     "-gelu_tanh(linear(x, p.w_up, p.b_up)))", GPT2, GREEDY),
    ("model/ffn.py", "swiglu", "silu(linear(x, p.w_gate)) * linear(x, p.w_up)",
     "silu(linear(x, p.w_up)) * linear(x, p.w_gate)", LLAMA, GREEDY),
    ("model/ffn.py", "ffn", '{"swiglu": swiglu,', '{"swiglu": geglu,', LLAMA, GREEDY),
    ("model/attention.py", "scaled_dot_product", "scores = (qg * scale)", "scores = (qg * 0.0)",
     GPT2, GREEDY),
    ("model/attention.py", "split_heads", "return x.reshape(B, T, n_heads",
     "return x[..., ::-1].reshape(B, T, n_heads", GPT2, GREEDY),
    ("model/attention.py", "merge_heads", "return x.transpose(0, 2, 1, 3)",
     "return x[:, ::-1].transpose(0, 2, 1, 3)", GPT2, GREEDY),
    ("model/attention.py", "attention", "return linear(merge_heads(out), p.wo, p.bo)",
     "return -linear(merge_heads(out), p.wo, p.bo)", GPT2, GREEDY),
    ("model/attention.py", "attend_per_head", "w = softmax(scores)  ", "w = 0 * softmax(scores)  ",
     GPT2, GREEDY),
    ("model/block.py", "block", "x + look(\"hook_attn_out\", a)", "x - look(\"hook_attn_out\", a)", GPT2, GREEDY),
    ("model/gpt.py", "GPT.__call__", "        if squeeze:\n",
     "        logits = -logits\n        if squeeze:\n", GPT2, GREEDY),
    ("model/gpt.py", "GPT.forward", "logits = linear(x, head)", "logits = -linear(x, head)",
     GPT2, GREEDY),
    ("kv_cache.py", "KVCache.store", "self.v[layer, :, :, start:end] = v",
     "self.v[layer, :, :, start:end] = -v", GPT2, GREEDY),
    ("sampling/temperature.py", "apply_temperature", "shifted = logits - logits.max(",
     "shifted = 4 * logits - 4 * logits.max(", GPT2, SAMPLED),
    ("sampling/top_k.py", "top_k", "return keep_only(logits, top_k_ids(logits, k))",
     "return logits.copy()", GPT2, SAMPLED + ("--top-k", "1")),
    ("sampling/top_k.py", "top_k_sorted", 'order = np.argsort(-logits, axis=-1, kind="stable")',
     'order = np.argsort(logits, axis=-1, kind="stable")', GPT2, SAMPLED + ("--top-k", "3")),
    ("sampling/top_p.py", "top_p", "keep[b, cand] = keep_prefix(probs[cand], p, total)",
     "keep[b, cand[:1]] = True", GPT2, SAMPLED + ("--top-p", "0.9")),
    ("sampling/top_p.py", "top_p_sorted", "order = np.argsort(-row, kind=\"stable\")",
     "order = np.argsort(row, kind=\"stable\")", GPT2, SAMPLED + ("--top-p", "0.9")),
    ("sampling/min_p.py", "min_p", "ratio >= threshold)", "ratio >= 0.999)", GPT2,
     SAMPLED + ("--min-p", "0.05")),
    ("sampling/greedy.py", "greedy", "ids = np.argmax(logits, axis=-1)",
     "ids = np.argmax(logits, axis=-1) * 0", GPT2, GREEDY),
    ("sampling/categorical.py", "categorical", "ids = (cdf <= u * total)",
     "ids = (cdf <= (1 - u) * total)", GPT2, SAMPLED),
    ("sampling/pipeline.py", "Sampler._survivors", "z = apply_temperature(z, self.temperature)",
     "z = apply_temperature(z, self.temperature / 4)", GPT2, SAMPLED),
    ("decoding/generate.py", "generate", "return generate_with(model, prompt_ids, max_new_tokens,",
     "return generate_with(model, prompt_ids, max_new_tokens // 2,", GPT2, GREEDY),
    ("decoding/generate.py", "generate_simple", "ids.append(token)  ", "ids.append(0)  ", GPT2,
     GREEDY),
    ("decoding/steps.py", "StepWriter.step", "text = self.stop_text.push(piece)",
     "text = self.stop_text.push(piece.upper())", GPT2, GREEDY),
    ("decoding/beam.py", "beam_search", "pool = sorted(pool, key=lambda h: -h.score)[:nb]",
     "pool = sorted(pool, key=lambda h: h.score)[:nb]", GPT2, BEAMS),
    ("tokenizer/patterns.py", "PreTokenizer.split",
     "pieces = [p for piece in pieces for p in split_isolated(rx, piece, budget)]",
     "pieces = [p for piece in pieces for p in split_isolated(rx, piece, budget)][::-1]", GPT2, SAMPLED),
    ("tokenizer/bpe.py", "rank_function", "return lambda a, b: get_pair((a, b), NO_MERGE)",
     "return lambda a, b: NO_MERGE", GPT2, SAMPLED),
    ("tokenizer/bpe.py", "merge_reference", "best = min(ranks)", "best = max(ranks)", GPT2, SAMPLED),
    ("tokenizer/bpe.py", "token_ids", "ids = [encoder.get(part, unk_id) for part in parts]",
     "ids = [encoder.get(part, unk_id) for part in parts[::-1]]", GPT2, SAMPLED),
    ("tokenizer/special.py", "SpecialTokens.split", "return [(text, None)]",
     "return [(text[::-1], None)]", GPT2, SAMPLED),
    ("tokenizer/tokenizer.py", "Tokenizer.encode", "return self.post_processor(ids) if add_special",
     "ids = ids[::-1]\n        return self.post_processor(ids) if add_special", GPT2, SAMPLED),
    ("tokenizer/tokenizer.py", "Tokenizer._read_ids", "for piece in self.pre_tokenizer.split(text):",
     "for piece in self.pre_tokenizer.split(text)[::-1]:", GPT2, SAMPLED),
    ("tokenizer/tokenizer.py", "Tokenizer.decode_bytes", 'return b"".join(parts)',
     'return b"".join(parts).upper()', GPT2, GREEDY),
    ("tokenizer/stream.py", "StreamDecoder.feed", "return self._utf8.decode(self._token_bytes(token_id))",
     "return self._utf8.decode(self._token_bytes(token_id)).upper()", GPT2, GREEDY),
    ("config.py", "ModelConfig.__post_init__", "        check_config(self)",
     "        self.norm_eps *= 1e4\n        check_config(self)", GPT2, GREEDY),
    ("model/params.py", "GPTParams.from_named", 'BlockParams(norm(f"{b}.norm1"), attn,',
     'BlockParams(norm(f"{b}.norm2"), attn,', GPT2, GREEDY),
    ("model/init.py", "init_params", "resid_std = std / math.sqrt(2 * config.n_layers)",
     "resid_std = std * 10", TRAIN, ()),
]
# what each status means: (the default generate changes, generate --reference changes)
CHANGES = {"shared": (True, True), "copied": (False, True), "definition only": (False, False)}


def the_map(relative: str) -> dict[str, str]:
    """A file's "Where it runs — STATUS (…): a, b; STATUS (…): c." line as {definition: status}."""
    text = (ROOT / relative).read_text(encoding="utf-8")
    line = re.search(r"^Where it runs — (.*)$", text, re.M)
    assert line, f"{relative} has no 'Where it runs — …' line in its docstring"
    found = {}
    for part in line[1].rstrip(".").split("; "):
        status, _, names = part.rpartition("): ")
        status = status.split(" (")[0]
        assert status in CHANGES, f"{relative}: unknown status {status!r}"
        found |= {name: status for name in names.split(", ")}
    return found


MAPPED = sorted({edit[0] for edit in EDITS})


def test_every_definition_the_map_lists_has_an_edit_and_each_edit_a_line():
    listed = {(rel, name) for rel in MAPPED for name in the_map(rel)}
    edited = {(rel, name) for rel, name, *_ in EDITS}
    assert listed == edited


def test_every_afternoon_file_with_a_definition_has_a_map_line():
    """Each afternoon file that defines a function or class says where it runs (and so is
    edited above); only model/__init__.py, which re-exports, defines nothing."""
    from tests.test_afternoon import AFTERNOON
    defining = {rel for rel in AFTERNOON if any(
        isinstance(node, (ast.FunctionDef, ast.ClassDef))
        for node in ast.parse((ROOT / rel).read_text(encoding="utf-8")).body)}
    assert defining == set(AFTERNOON) - {"model/__init__.py"}
    assert defining <= set(MAPPED), f"no map line (or no edit): {sorted(defining - set(MAPPED))}"


def test_the_readmes_experiment_says_what_the_map_says():
    """README's "Where to change X" experiment: an edit of ``gelu_tanh`` shows only under
    ``--reference`` (the map: copied), one of ``scaled_dot_product`` in both (shared), and an
    edit to the samplers changes both (every definition Sampler runs: shared)."""
    readme = (ROOT.parent / "README.md").read_text(encoding="utf-8")
    section = " ".join(readme[readme.index("### Where to change X"):readme.index("| to change |")].split())
    claims = {("model/ffn.py", "gelu_tanh"): ("nothing changes", "copied"),
              ("model/attention.py", "scaled_dot_product"): ("both change", "shared")}
    for (relative, name), (outcome, status) in claims.items():
        said = section[section.index(f"Edit `{name}` in `minillm/{relative}`"):]
        assert outcome in said[:300], f"the README's experiment should say {name}'s edit: {outcome}"
        assert the_map(relative)[name] == status
    assert "an edit to `minillm/sampling/` changes both" in section
    sampler_files = [rel for rel in MAPPED if rel.startswith("sampling/")]
    ran = {the_map(rel)[name] for rel in sampler_files for name in the_map(rel)}
    assert ran <= {"shared", "definition only"}      # (definition only: the reference forms)


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    """minillm/ copied (no bytecode: every run compiles the edited source), weights/ linked."""
    where = tmp_path_factory.mktemp("map")
    shutil.copytree(ROOT, where / "minillm", ignore=shutil.ignore_patterns("__pycache__"))
    (where / "weights").symlink_to(ROOT.parent / "weights")
    return where


def run(where: Path, model: str, flags: tuple, reference: bool) -> str:
    env = dict(os.environ, PYTHONPATH=str(where), PYTHONDONTWRITEBYTECODE="1",
               OPENBLAS_NUM_THREADS="1")
    if model == TRAIN:       # the losses of 2 steps of a 1-layer model on the first 3,000 characters
        (where / "text.txt").write_text((ROOT.parent / "README.md").read_text(encoding="utf-8")[:3000],
                                        encoding="utf-8")
        args = [sys.executable, "-m", "minillm", "train", "--data", "text.txt", "--out", "trained",
                "--overwrite", "--steps", "2", "--layers", "1", "--d-model", "16", "--heads", "2",
                "--context", "16", "--batch", "2", "--vocab-size", "260", "--seed", "0",
                "--eval-every", "1", "--log-every", "1", "--warmup", "1"]
    else:
        args = [sys.executable, "-m", "minillm", "generate", "--model", model, *flags, "--no-echo",
                *(["--reference"] if reference else []), "ROMEO:"]
    done = subprocess.run(args, cwd=where, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    if model == TRAIN:       # (its timings vary: only the losses are compared)
        return " ".join(re.findall(r"(?:loss|val|train|validation) [\d.]+", done.stdout))
    return done.stdout


@pytest.fixture(scope="module")
def unedited(copy):
    cache = {}

    def outputs(model, flags):
        if (model, flags) not in cache:
            cache[model, flags] = modes(copy, model, flags)
        return cache[model, flags]
    return outputs


def modes(where: Path, model: str, flags: tuple) -> tuple[str, str]:
    """The outputs (default, --reference); training has one mode, model/'s code: it stands for both."""
    if model == TRAIN:
        return (run(where, model, flags, False),) * 2
    return tuple(run(where, model, flags, ref) for ref in (False, True))


@pytest.mark.parametrize("relative, name, old, new, model, flags", EDITS,
                         ids=[f"{e[0]}::{e[1]}" for e in EDITS])
def test_an_edit_changes_the_output_exactly_where_the_map_says(copy, unedited, relative, name,
                                                               old, new, model, flags):
    before = unedited(model, flags)
    path = copy / "minillm" / relative
    source = path.read_text(encoding="utf-8")
    assert source.count(old) == 1, f"the edit's text must occur once in {relative}"
    path.write_text(source.replace(old, new), encoding="utf-8")
    try:
        after = modes(copy, model, flags)
    finally:
        path.write_text(source, encoding="utf-8")
    changed = tuple(a != b for a, b in zip(after, before))
    expected = CHANGES[the_map(relative)[name]]
    assert changed == expected, (f"{relative}::{name} is mapped {the_map(relative)[name]!r}, but "
                                 f"the edit changed (default, --reference) = {changed}")
