"""Make the GPT-2 reference fixtures (tests/fixtures/gpt2_*) with Hugging Face transformers.

Dev-only script: needs torch, transformers and safetensors (see scripts/README.md); minillm itself
never imports them. No downloads: every model is built from a config and randomly initialised with
a fixed torch seed. Run from the repository root:

    .venv-dev/bin/python scripts/make_gpt2_fixtures.py        # or /work/venv/bin/python

Each fixture directory gets
    config.json, model.safetensors  exactly as ``save_pretrained(..., safe_serialization=True)``
                                    writes them (HF's generation_config.json is removed: the
                                    generation settings live in generation.json)
    expected.safetensors            ids, logits, loss, greedy and beam-search references
    generation.json                 every kwarg passed to ``generate`` per run, plus versions

The generic helpers here (init, expected outputs, beam cross-check, verification) are reused by
scripts/make_llama_fixtures.py.
"""
import json
import math
import shutil
import sys
from pathlib import Path

import torch
import transformers
from safetensors.torch import load_file, save_file

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SEED = 1234
GREEDY_NEW = 20
BEAM_NEW = 8


# ----------------------------------------------------------------------------- initialisation
def randomize_(model, embed_std, head_std=None, bias_std=0.1, gain_std=0.1):
    """Re-initialise every parameter so biases and norm gains are exercised too.

    Matrices: normal(0, 1/sqrt(fan_in)) so activations stay O(1) through every layer (attention
    scores are then O(1): softmax is neither uniform nor one-hot). Embeddings: normal(0, embed_std);
    an untied lm_head: normal(0, head_std). Norm gains: 1 + normal(0, gain_std); every bias (norm
    or linear): normal(0, bias_std). With the final norm giving O(1) features, logits have std
    ~ embed_std * sqrt(C) (tied) -- pick embed_std so logits are O(1..10).
    """
    with torch.no_grad():
        for module_name, module in model.named_modules():
            is_norm = isinstance(module, torch.nn.LayerNorm) or "RMSNorm" in type(module).__name__
            for name, p in module.named_parameters(recurse=False):
                full = f"{module_name}.{name}"
                if is_norm and name == "weight":
                    p.copy_(1.0 + gain_std * torch.randn_like(p))
                elif name == "bias":
                    p.normal_(0.0, bias_std)
                elif isinstance(module, torch.nn.Embedding) or full.endswith(("wte.weight", "wpe.weight")):
                    p.normal_(0.0, embed_std)
                elif full == "lm_head.weight":
                    p.normal_(0.0, head_std if head_std is not None else embed_std)
                elif isinstance(module, torch.nn.Linear):       # [out, in]
                    p.normal_(0.0, 1.0 / math.sqrt(p.shape[1]))
                elif type(module).__name__ == "Conv1D":          # GPT-2 [in, out]
                    p.normal_(0.0, 1.0 / math.sqrt(p.shape[0]))
                else:
                    raise RuntimeError(f"no init rule for parameter {full} in {type(module).__name__}")


def disable_eos_(model):
    """Remove bos/eos/pad from the model's (unsaved) generation config: nothing can stop early."""
    gc = model.generation_config
    gc.eos_token_id = None
    gc.pad_token_id = None
    gc.bos_token_id = None


# ----------------------------------------------------------------------------- references
@torch.no_grad()
def greedy_reference(model, prompt, n_new):
    """Manual argmax loop (full recompute, no cache) and the smallest top-1/top-2 logit margin."""
    seq = prompt.clone()
    margin = float("inf")
    for _ in range(n_new):
        last = model(seq).logits[0, -1].float()                          # [V]
        top2 = torch.topk(last, 2).values
        margin = min(margin, float(top2[0] - top2[1]))
        seq = torch.cat([seq, last.argmax().view(1, 1)], dim=1)
    return seq[:, prompt.shape[1]:], margin


@torch.no_grad()
def beam_reference(model, prompt, num_beams, max_new, eos, length_penalty, early_stopping):
    """Independent, loop-level re-statement of HF 5.x beam search (batch 1, no cache).

    Used only to cross-check ``generate`` and the rules written down for the minillm lead:
    candidates = top 2*num_beams of (beam score + log p) over all beams x vocab; a candidate of
    rank < num_beams that ends in EOS (or reaches max length) is offered to the finished pool
    with score sum_logp / gen_len**length_penalty (gen_len = generated tokens incl. EOS, prompt
    excluded); the best num_beams non-finished candidates keep running; stop when the pool is
    full and (early_stopping True) or (best running sum_logp / L**lp <= worst finished) with
    L = current generated length (or max_new when early_stopping == "never" and lp > 0).
    Returns (sequences sorted by score, scores, smallest margin seen at any ranking/stop decision).
    """
    running = [(0.0, prompt[0].tolist())]     # (sum log p, tokens)
    finished = []                                        # (score, tokens)
    margin = float("inf")
    for step in range(max_new):
        gen_len = step + 1
        cands = []
        for score, toks in running:
            logits = model(torch.tensor([toks])).logits[0, -1].float()        # [V]
            logp = torch.log_softmax(logits, dim=-1)
            cands += [(score + float(lp), toks + [t]) for t, lp in enumerate(logp.tolist())]
        cands.sort(key=lambda c: -c[0])
        keep = 2 * num_beams
        margin = min(margin, cands[num_beams - 1][0] - cands[num_beams][0],
                     cands[keep - 1][0] - cands[keep][0])
        cands = cands[:keep]
        pool_full = len(finished) == num_beams
        for rank, (score, toks) in enumerate(cands):
            done = toks[-1] == eos or gen_len == max_new
            if done and rank < num_beams and not (pool_full and early_stopping is True):
                finished.append((score / gen_len ** length_penalty, toks))
        finished = sorted(finished, key=lambda f: -f[0])
        gaps = [a[0] - b[0] for a, b in zip(finished[:num_beams], finished[1:num_beams + 1])]
        margin = min([margin] + gaps)
        finished = finished[:num_beams]
        running = [c for c in cands if not (c[1][-1] == eos or gen_len == max_new)][:num_beams]
        if len(finished) == num_beams:
            if early_stopping is True:
                break
            horizon = max_new if (early_stopping == "never" and length_penalty > 0) else gen_len
            best_possible = running[0][0] / horizon ** length_penalty if running else -math.inf
            margin = min(margin, abs(best_possible - finished[-1][0]))
            if best_possible <= finished[-1][0]:
                break
    return [f[1] for f in finished], [f[0] for f in finished], margin


def _pad(rows, fill):
    width = max(len(r) for r in rows)
    return torch.tensor([r + [fill] * (width - len(r)) for r in rows], dtype=torch.int64)


@torch.no_grad()
def run_beam(model, prompt, settings):
    """HF generate for one beam run; cross-checked against beam_reference."""
    out = model.generate(prompt, **settings)
    seqs, scores = out.sequences, out.sequences_scores.float()
    eos = settings.get("eos_token_id")
    ref_seqs, ref_scores, margin = beam_reference(
        model, prompt, settings["num_beams"], settings["max_new_tokens"], eos,
        settings["length_penalty"], settings["early_stopping"])
    fill = settings.get("pad_token_id", eos) if eos is not None else -1
    ref = _pad(ref_seqs, fill)[: settings["num_return_sequences"]]
    if not torch.equal(ref, seqs) or not torch.allclose(torch.tensor(ref_scores), scores, atol=1e-4):
        raise RuntimeError(f"beam cross-check failed for {settings}:\nHF {seqs}\n{scores}\nref {ref}\n{ref_scores}")
    return seqs, scores, margin


def beam_runs(eos_id):
    """Name -> generate kwargs for every beam reference (all greedy beam search, batch 1)."""
    base = dict(do_sample=False, max_new_tokens=BEAM_NEW, length_penalty=1.0, early_stopping=False,
                output_scores=True, return_dict_in_generate=True)
    runs = {f"beam{n}": dict(base, num_beams=n, num_return_sequences=n) for n in (2, 4)}
    eos = dict(eos_token_id=eos_id, pad_token_id=eos_id)
    runs["beam4_eos"] = dict(base, num_beams=4, num_return_sequences=4, **eos)
    runs["beam4_eos_lp0p5"] = dict(runs["beam4_eos"], length_penalty=0.5)
    runs["beam4_eos_lp2"] = dict(runs["beam4_eos"], length_penalty=2.0)
    runs["beam4_eos_es_true"] = dict(runs["beam4_eos"], early_stopping=True)
    runs["beam4_eos_es_never"] = dict(runs["beam4_eos"], early_stopping="never")
    runs["beam2_eos"] = dict(base, num_beams=2, num_return_sequences=2, **eos)
    runs["beam2_eos_es_never"] = dict(runs["beam2_eos"], early_stopping="never")
    return runs


@torch.no_grad()
def choose_eos(model, prompt, greedy_ids):
    """An EOS id that some returned beam of the num_beams=4 run actually generates before max length.

    Tries the greedy continuation's tokens, the no-EOS beam tokens and the 10 likeliest first tokens,
    in that order; None when no candidate works (the caller then draws another prompt).
    """
    base = beam_runs(0)["beam4"]
    plain = model.generate(prompt, **base).sequences[:, prompt.shape[1]:]
    first = torch.topk(model(prompt).logits[0, -1], 10).indices.tolist()
    order = list(dict.fromkeys(greedy_ids[0].tolist() + plain.flatten().tolist() + first))
    for cand in order:
        out = model.generate(prompt, **dict(base, eos_token_id=cand, pad_token_id=cand))
        gen = out.sequences[:, prompt.shape[1]:]
        # generated length of each returned beam: up to and including its first EOS
        lengths = [int((row == cand).nonzero()[0]) + 1 if (row == cand).any() else len(row) for row in gen]
        if min(lengths) < BEAM_NEW and len(set(lengths)) > 1:    # some (not all) beams end early
            return cand
    return None


MIN_MARGIN = 1e-3   # smallest allowed gap at any greedy / beam ranking boundary (float32 noise ~1e-6)


@torch.no_grad()
def generation_refs(model, prompt):
    """Greedy + every beam run for one prompt: (tensors, settings, margins, eos_id), or None."""
    greedy_kw = dict(do_sample=False, max_new_tokens=GREEDY_NEW, min_new_tokens=GREEDY_NEW)
    greedy = model.generate(prompt, **greedy_kw)[:, prompt.shape[1]:]
    manual, greedy_margin = greedy_reference(model, prompt, GREEDY_NEW)
    if not torch.equal(manual, greedy) or greedy.shape != (1, GREEDY_NEW):
        raise RuntimeError(f"greedy mismatch: generate {greedy} vs argmax loop {manual}")
    out = {"greedy_prompt": prompt, "greedy_ids": greedy}
    eos_id = choose_eos(model, prompt, greedy)
    if eos_id is None:
        return None
    settings = {"greedy": dict(greedy_kw, eos_token_id=None, pad_token_id=None, bos_token_id=None,
                               prompt="greedy_prompt", output="greedy_ids (new tokens only)")}
    margins = {"greedy_top1_top2_logit": greedy_margin}
    for name, kw in beam_runs(eos_id).items():
        seqs, scores, margin = run_beam(model, prompt, kw)
        out[f"{name}_sequences"], out[f"{name}_scores"] = seqs, scores
        settings[name] = dict(kw, prompt="greedy_prompt",
                              outputs=[f"{name}_sequences (prompt + new)", f"{name}_scores"])
        margins[name] = margin
    return out, settings, margins, eos_id


@torch.no_grad()
def make_expected(model, batch, seq_len, prompt_len, store_logits_rows=None):
    """All references for one model; returns (tensors, generation settings, report dict).

    The prompt is redrawn until every greedy/beam ranking decision has a margin >= MIN_MARGIN,
    so a float32 re-implementation cannot flip a choice by rounding.
    """
    cfg = model.config
    ids = torch.randint(0, cfg.vocab_size, (batch, seq_len), dtype=torch.int64)
    logits = model(ids).logits.float()                                   # [B, T, V]
    loss = model(ids, labels=ids).loss.float()
    disable_eos_(model)
    for attempt in range(50):
        prompt = torch.randint(0, cfg.vocab_size, (1, prompt_len), dtype=torch.int64)
        refs = generation_refs(model, prompt)
        if refs is None:
            continue
        gen, settings, margins, eos_id = refs
        if min(margins.values()) >= MIN_MARGIN:
            break
    else:
        raise RuntimeError("no prompt with clear greedy/beam margins; change the seed")
    rows = slice(None) if store_logits_rows is None else slice(0, store_logits_rows)
    out = {"ids": ids, "logits": logits[rows].contiguous(), "loss": loss, **gen}
    eos_runs = {n: out[f"{n}_sequences"][:, prompt_len:] for n in settings if "_eos" in n}
    report = {"max_abs_logit": float(logits.abs().max()), "logit_std": float(logits.std()),
              "loss": float(loss), "eos_id": eos_id, "min_margins": margins, "prompt_draws": attempt + 1,
              "eos_in_returned": {n: int((s == eos_id).any(dim=1).sum()) for n, s in eos_runs.items()}}
    return out, settings, report


# ----------------------------------------------------------------------------- writing + checking
def write_fixture(name, description, model, batch, seq_len, prompt_len, store_logits_rows=None):
    """Save the model HF's way, then expected.safetensors, generation.json and README.md; verify."""
    out_dir = FIXTURES / name
    if out_dir.exists():
        shutil.rmtree(out_dir)
    model.save_pretrained(out_dir, safe_serialization=True)
    (out_dir / "generation_config.json").unlink(missing_ok=True)
    tensors, settings, report = make_expected(model, batch, seq_len, prompt_len, store_logits_rows)
    for key, t in tensors.items():
        if t.dtype not in (torch.float32, torch.int64):
            raise RuntimeError(f"{key} has dtype {t.dtype}")
    save_file({k: t.contiguous() for k, t in tensors.items()}, out_dir / "expected.safetensors")
    meta = {"fixture": name, "script": f"scripts/{Path(sys.argv[0]).name}", "seed": torch.initial_seed(),
            "transformers": transformers.__version__, "torch": torch.__version__,
            "model_class": type(model).__name__, "logits_rows_stored": store_logits_rows or batch,
            "eos_token_id_for_eos_runs": report["eos_id"],
            "notes": "greedy: EOS disabled (model generation_config eos/pad/bos set to None before "
                     "generate). Beam fill value after EOS = pad_token_id (= eos). "
                     "sequences_scores = sum log p / generated_len**length_penalty.",
            "runs": settings}
    (out_dir / "generation.json").write_text(json.dumps(meta, indent=2) + "\n")
    verify(out_dir, type(model))
    write_readme(out_dir, description, meta, report)
    for f in out_dir.glob("*.safetensors"):
        f.chmod(0o644)       # the safetensors writer creates files readable by the owner only
    size = sum(f.stat().st_size for f in out_dir.iterdir())
    print(f"{name}: {size / 1024:.0f} KiB, max|logit| {report['max_abs_logit']:.2f}, "
          f"logit std {report['logit_std']:.2f}, loss {report['loss']:.4f}, eos {report['eos_id']}")
    print(f"  min margins {json.dumps({k: round(v, 5) for k, v in report['min_margins'].items()})}")
    print(f"  returned beams containing EOS {report['eos_in_returned']}, prompt draws {report['prompt_draws']}")
    return report


def write_readme(out_dir, description, meta, report):
    margins = min(report["min_margins"].values())
    (out_dir / "README.md").write_text(f"""# {out_dir.name}

{description}

Made by `{meta['script']}` (torch seed {meta['seed']}) with torch {meta['torch']}, transformers
{meta['transformers']}, safetensors {safetensors_version()}; regenerate with
`python {meta['script']}` (see scripts/README.md). Random weights, no download.

- `config.json`, `model.safetensors`: as written by `{meta['model_class']}.save_pretrained(...,
  safe_serialization=True)` (HF names and layouts; a tied lm_head is not stored).
- `expected.safetensors`: `ids`, `logits` (`model(ids).logits`, float32 eval), `loss`
  (`model(ids, labels=ids).loss`), `greedy_prompt`, `greedy_ids` (20 new tokens, EOS disabled),
  `<run>_sequences` / `<run>_scores` (`generate(...).sequences` / `.sequences_scores`) per beam run.
- `generation.json`: the exact `generate` keywords of every run; EOS id of the `*_eos*` runs:
  {report['eos_id']}.

max |logit| {report['max_abs_logit']:.2f}, loss {report['loss']:.4f}; smallest greedy/beam
ranking margin {margins:.4f} (a float32 re-implementation cannot flip a choice).
""")


def safetensors_version():
    from importlib.metadata import version
    return version("safetensors")


@torch.no_grad()
def verify(out_dir, model_class):
    """Reload the fixture with HF and check it reproduces the stored logits and loss."""
    model = model_class.from_pretrained(out_dir).eval()
    exp = load_file(out_dir / "expected.safetensors")
    rows = exp["logits"].shape[0]
    logits = model(exp["ids"][:rows]).logits.float()
    err = float((logits - exp["logits"]).abs().max())
    loss_err = abs(float(model(exp["ids"], labels=exp["ids"]).loss) - float(exp["loss"]))
    if err > 1e-5 or loss_err > 1e-6:
        raise RuntimeError(f"{out_dir.name}: reloaded model differs (logits {err}, loss {loss_err})")
    print(f"  verified reload: max |logits - stored| = {err:.2e}, |loss - stored| = {loss_err:.2e}")


def build_gpt2(vocab, n_positions, n_embd, n_head, n_layer, tied=True):
    cfg = transformers.GPT2Config(
        vocab_size=vocab, n_positions=n_positions, n_embd=n_embd, n_head=n_head, n_layer=n_layer,
        bos_token_id=vocab - 1, eos_token_id=vocab - 1, tie_word_embeddings=tied)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    randomize_(model, embed_std=2.5 / math.sqrt(n_embd), head_std=2.5 / math.sqrt(n_embd))
    if not tied and torch.equal(model.lm_head.weight, model.transformer.wte.weight):
        raise RuntimeError("untied lm_head equals wte")
    return model


def main():
    torch.manual_seed(SEED)
    write_fixture("gpt2_tiny", "Random GPT-2 (vocab 97, n_positions 32, n_embd 16, 2 heads, 2 layers, "
                  "tied), biases and LayerNorms randomised. ids/logits: 2 x 32 (full context).",
                  build_gpt2(97, 32, 16, 2, 2), batch=2, seq_len=32, prompt_len=5)
    torch.manual_seed(SEED + 1)
    write_fixture("gpt2_small", "Random GPT-2 (vocab 503, n_positions 128, n_embd 64, 4 heads, 3 "
                  "layers, tied). ids/logits: 2 x 128 (full context).",
                  build_gpt2(503, 128, 64, 4, 3), batch=2, seq_len=128, prompt_len=8)
    torch.manual_seed(SEED + 2)
    write_fixture("gpt2_untied", "Random GPT-2 like gpt2_tiny but tie_word_embeddings=False: "
                  "`lm_head.weight` [97, 16] is stored and differs from wte.",
                  build_gpt2(97, 32, 16, 2, 2, tied=False), batch=2, seq_len=32, prompt_len=5)


if __name__ == "__main__":
    main()
