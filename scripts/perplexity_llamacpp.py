"""Cross-check `minillm perplexity` against llama.cpp on a GGUF model (dev-only: needs cyllama).

    pip install cyllama==0.2.18
    python scripts/perplexity_llamacpp.py MODEL.gguf TEXT.txt [--ctx 512]

Both sides tokenize the text once (no BOS: the check refuses a vocabulary that asks for one,
``tokenizer.ggml.add_bos_token``), then each chunk of --ctx tokens is run through llama.cpp
(scripts/llama_cpp_ref.py: F32 attention and KV cache) and through minillm, and scored by
llama-perplexity's rule (positions ctx/2 … ctx−2 predicting the next token). Prints both PPLs,
their ± and the largest per-chunk difference of the running estimates. Not a test: the suite
never imports cyllama.

Measured (SmolLM2-135M-Instruct Q4_1, the first 24,000 characters of Hamlet from the shared
corpus shakespeare_7plays.txt, --ctx 512: 7,224 tokens, the same on both sides, 14 chunks):
llama.cpp 41.5477 +/- 2.19730, minillm 41.5373 +/- 2.19628 (2.5e-4 apart; likely because
llama.cpp multiplies Q4_1 weights by activations rounded to Q8_1, minillm dequantises to float32).
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from minillm import load_model, log_softmax, perplexity, read_gguf  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("text")
    ap.add_argument("--ctx", type=int, default=512)
    args = ap.parse_args()
    from llama_cpp_ref import LlamaCpp
    if read_gguf(args.model).metadata.get("tokenizer.ggml.add_bos_token", False):
        sys.exit("this vocabulary asks for BOS, which minillm's perplexity does not put in")
    text = Path(args.text).read_text(encoding="utf-8")
    model, tok = load_model(args.model)
    ids = tok.encode_ordinary(text)
    ctx, first = args.ctx, args.ctx // 2
    with LlamaCpp(args.model, n_ctx=ctx, threads=1) as ref:
        theirs_ids = ref.tokenize(text)
        print(f"tokens: minillm {len(ids):,}, llama.cpp {len(theirs_ids):,}, "
              f"{'identical' if theirs_ids == ids else 'DIFFERENT'}")
        nll = []
        running = []
        for k in range(len(ids) // ctx):
            chunk = ids[k * ctx:(k + 1) * ctx]
            logp = log_softmax(ref.logits(chunk)[first:ctx - 1])           # [ctx/2 - 1, V]
            nll += (-logp[np.arange(len(logp)), chunk[first + 1:]]).astype(np.float64).tolist()
            running.append(math.exp(np.mean(nll)))
    nll = np.array(nll)
    ppl = math.exp(nll.mean())
    err = math.sqrt(((nll ** 2).mean() - nll.mean() ** 2) / (len(nll) - 1)) * ppl
    ours = perplexity(model, ids, ctx)
    print(f"llama.cpp logits, llama-perplexity's rule: PPL = {ppl:.4f} +/- {err:.5f}")
    print(f"minillm perplexity:                        PPL = {ours.ppl:.4f} +/- {ours.error:.5f}")
    print(f"chunks {len(running)}; largest running-estimate difference "
          f"{max(abs(a - b) for a, b in zip(running, ours.running)):.4f}; "
          f"relative PPL difference {abs(ours.ppl - ppl) / ppl:.2e}")


if __name__ == "__main__":
    main()
