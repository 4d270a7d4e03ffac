"""Gemma 3 GGUF files in llama.cpp (issue 46, defect 17): llama.cpp (b9190) makes layers 5, 11, …
of a gemma3 file full attention whatever the file says, so a Gemma 3 of fewer than 6 layers has
no full-attention layer and aborts at the first decode (GGML_ASSERT(buffer) failed): llama.cpp's
limit, not the file's (io/gguf/gemma.py). ``minillm export`` names it; the shapes that work run
with minillm's logits. llama.cpp runs in a subprocess (it aborts the process), through
scripts/llama_cpp_ref.py; those tests are skipped without the cyllama wheel."""
import dataclasses
import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from minillm import GPT
from minillm.cli import main
from minillm.io.gguf.gemma import llama_cpp_notes
from minillm.tokenizer import Tokenizer
from tests.conftest import FIXTURES

ROOT = FIXTURES.parent.parent
NO_CYLLAMA = importlib.util.find_spec("cyllama") is None
needs_llama_cpp = pytest.mark.skipif(NO_CYLLAMA, reason="needs the cyllama wheel (llama.cpp "
                                     "b9190: pip install cyllama==0.2.18), a dev-only package")
PROMPT = list(range(1, 40, 3))                                    # 13 tokens, past window 8
RUN = """import sys, numpy as np
sys.path.insert(0, sys.argv[3])
from llama_cpp_ref import LlamaCpp
with LlamaCpp(sys.argv[1], n_ctx=32) as ref:
    np.save(sys.argv[2], ref.logits([int(t) for t in sys.argv[4].split(",")]))
"""


def gemma3(n_layers, d_model=64, head_dim=16, vocab=320, window=8, full=None):
    """The issue's Gemma 3 (hidden 64, head_dim 16, 4 / 2 heads, window 8, vocabulary 320, tied),
    with llama.cpp's fixed numbers (local RoPE base 10,000, query scale 1/√head_dim) and its
    layer pattern unless ``full`` names the full-attention layers."""
    base = GPT.from_pretrained(FIXTURES / "gemma3_tiny").config
    full = [i for i in range(n_layers) if (i + 1) % 6 == 0] if full is None else full
    types = tuple("full" if i in full else "sliding" for i in range(n_layers))
    config = dataclasses.replace(base, vocab_size=vocab, d_model=d_model, head_dim=head_dim,
                                 n_heads=4, n_kv_heads=2, n_layers=n_layers, d_ff=2 * d_model,
                                 sliding_window=window, layer_types=types,
                                 rope_local_theta=10000.0, query_pre_attn_scalar=None)
    return GPT(config, seed=0)


def byte_tokenizer(vocab):
    pieces = {bytes([i]): i for i in range(min(vocab, 256))}
    return Tokenizer(pieces | {f"<extra_{i}>".encode(): i for i in range(256, vocab)}, {})


def llama_cpp_logits(model, tmp_path):
    """(exit code, llama.cpp's logits [T, V] or None) for ``model`` exported as F32 GGUF."""
    path = model.save_gguf(tmp_path / "m.gguf", byte_tokenizer(model.config.vocab_size))
    out = tmp_path / "logits.npy"
    done = subprocess.run([sys.executable, "-c", RUN, str(path), str(out), str(ROOT / "scripts"),
                           ",".join(map(str, PROMPT))], capture_output=True, text=True, timeout=120)
    return done.returncode, (np.load(out, allow_pickle=False) if done.returncode == 0 else None), \
        done.stderr


def test_the_export_names_llama_cpps_gemma_layer_limit(tmp_path, capsys):
    assert "fewer than 6" in llama_cpp_notes(gemma3(4).config)[0]
    assert "differ" in llama_cpp_notes(gemma3(6, full=[2]).config)[0]
    assert llama_cpp_notes(gemma3(6).config) == [] == llama_cpp_notes(gemma3(12).config)
    folder = tmp_path / "model"
    gemma3(4).save_pretrained(folder)
    byte_tokenizer(320).save(folder / "tokenizer.json")
    assert main(["export", str(folder), "--gguf", str(tmp_path / "m.gguf")]) == 0
    assert "note: llama.cpp's gemma3" in capsys.readouterr().err


@needs_llama_cpp
@pytest.mark.parametrize("shape", [dict(n_layers=6), dict(n_layers=12),
                                   dict(n_layers=6, d_model=32, head_dim=8, vocab=64)],
                         ids=["issue-shape-6-layers", "issue-shape-12-layers", "fixture-shape-6"])
def test_llama_cpp_runs_the_gemma3_shapes_that_work_with_minillms_logits(tmp_path, shape):
    """max |Δlogits| ≤ 1e-3 · max |logit| (check_gguf_export.py's F32 bound)."""
    model = gemma3(**shape)
    code, theirs, err = llama_cpp_logits(model, tmp_path)
    assert code == 0, err[-400:]
    ours = model(np.array(PROMPT))                                 # [T, V]
    assert np.abs(theirs - ours).max() <= 1e-3 * float(np.abs(ours).max())


@needs_llama_cpp
@pytest.mark.parametrize("shape", [dict(n_layers=4, full=[3]), dict(n_layers=4, full=[2], d_model=32,
                                                                     head_dim=8, vocab=64)],
                         ids=["issue-shape", "fixture-shape"])
def test_a_gemma3_of_fewer_than_6_layers_aborts_in_llama_cpp_whatever_its_other_sizes(tmp_path, shape):
    """The limit as measured (b9190): if a later llama.cpp runs it, this test says so."""
    code, _, err = llama_cpp_logits(gemma3(**shape), tmp_path)
    assert code != 0 and "GGML_ASSERT(buffer) failed" in err


@needs_llama_cpp
def test_llama_cpp_ignores_a_gemma3_files_own_layer_pattern(tmp_path):
    """Full attention on layer 2 of 6 (the file's sliding_window_pattern says so): llama.cpp runs
    layer 5 full instead, and its logits leave minillm's (measured: by 0.13, max |logit| 0.64)."""
    model = gemma3(6, full=[2])
    code, theirs, err = llama_cpp_logits(model, tmp_path)
    assert code == 0, err[-400:]
    ours = model(np.array(PROMPT))
    assert np.abs(theirs - ours).max() > 3e-2 * float(np.abs(ours).max())
