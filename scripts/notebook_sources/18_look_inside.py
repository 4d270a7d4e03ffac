# %% [markdown]
# # 18 · Looking inside: the logit lens, induction heads and activation patching
#
# Everything a model computes on the way from ids to logits is an array, and minillm names every
# one of them: `logits, acts = model.run_with_cache(ids)` records them all (`acts[name]`, with the
# names TransformerLens uses, so its tutorials read across), and
# `model.run_with_hooks(ids, {name: fn})` lets `fn` replace one on the way. Four classic findings of
# the interpretability literature need nothing more: the logit lens (after how many blocks does
# the model already "know" the answer?), direct logit attribution (which layer and head writes it),
# induction heads (Olsson et al., 2022: heads that copy what followed the last time a token was
# seen) and activation patching (where, in layers and positions, a fact is carried). A toy first —
# the small model trained by minillm and shipped in `weights/shakespeare` — then SmolLM2-135M-Instruct.
#
# **Try this:** change `TOY_PROMPT` (1–80 characters), `PROMPT` and `ANSWER` (the prompt of the
# logit lens, 1–80 characters, and the answer whose first token is followed, 1–20 characters),
# `N_REPEAT` (the length of the random sequence seen twice, 5–60), `N_BATCH` (how many such
# sequences, 1–4), `K_ABLATE` (how many heads are ablated, 1–16), `CLEAN` and `CORRUPT` (two
# prompts that differ in one fact, 1–80 characters each), and re-run.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import time

import matplotlib.pyplot as plt
import numpy as np

from minillm.functional import log_softmax
from minillm.lens import (ablate_heads, direct_logit_attribution, final_readout, lens_table,
                          logit_lens, patch_residual, prefix_matching_score, repeated_random_tokens)
from nbhelpers import claim, find_smollm2, knob, load_pretrained, load_shipped

START, CPU_START = time.perf_counter(), time.process_time()

# %% [markdown]
# ## 1. Every activation, by name
#
# `run_with_cache` runs the model's own forward pass (the code of `model/`) and keeps what passes
# each named point: the residual stream entering a block (`blocks.ℓ.hook_resid_pre`), after its
# attention (`hook_resid_mid`) and after its FFN (`hook_resid_post`); each head's q, k, v, its
# scores and weights (`attn.hook_pattern`, [B, H, T, S]) and its output before the output
# projection (`attn.hook_z`, [B, T, H, D]); the norms' outputs; the final norm
# (`ln_final.hook_normalized`) and the logits. `model.hook_names()` lists every name, in order;
# docs/hooks.md gives each one's shape and the line of `model/` it comes from.

# %%
TOY_PROMPT = "ROMEO:\nWhat light through yonder window breaks"
knob("TOY_PROMPT", TOY_PROMPT, lambda p: isinstance(p, str) and 1 <= len(p) <= 80, "a text of 1 to 80 characters")
toy, toy_tok = load_shipped("shakespeare", fast=False)        # plain arrays: model/'s code runs
c = toy.config
toy_ids = np.array(toy_tok.encode(TOY_PROMPT))
logits, acts = toy.run_with_cache(toy_ids)
print(f"the toy: {c.n_layers} layers, {c.n_heads} heads, d_model {c.d_model}; {len(toy_ids)} tokens "
      f"-> {len(acts)} named activations")
for name in ["hook_embed", "blocks.0.hook_resid_pre", "blocks.0.attn.hook_pattern", "blocks.0.attn.hook_z",
             "blocks.0.hook_resid_mid", "blocks.0.mlp.hook_post", f"blocks.{c.n_layers - 1}.hook_resid_post",
             "ln_final.hook_normalized", "hook_logits"]:
    print(f"  {name:34} {acts[name].shape}")
last = acts[f"blocks.{c.n_layers - 1}.hook_resid_post"]      # [1, T, C]: the stream after the last block
np.testing.assert_array_equal(final_readout(toy, last)[0], logits,
                              err_msg="the last stream through the final norm and the head must be the logits")
print("the last block's stream, read through the final norm and the head, is the model's logits exactly")

# %% [markdown]
# ## 2. The logit lens
#
# The residual stream is a running sum: each block adds its attention's and its FFN's output to
# it. The last one goes through the final norm and the head to become the logits. The logit lens
# (nostalgebraist, 2020) applies that last step early, to the stream after every block:
#
#     logits_ℓ = Norm_f(h_ℓ) · W_U          (ℓ = 0: the embeddings; ℓ = L: the model's own logits)
#
# A row per layer, a column per position: the top next token the lens reads there and its
# probability. The toy's table first.

# %%
def shown(tok, i) -> str:
    """A token as a short label: escapes visible, a space drawn as ␣ (a token ' ' would be a blank
    cell), a $ escaped (it would start matplotlib's maths)."""
    return repr(tok.decode([int(i)]))[1:-1][:8].replace(" ", "␣").replace("$", r"\$")


def show_table(top, prob, ids, tok, title, ax):
    """The lens table as a figure: colour = the top token's probability, text = the token."""
    ax.imshow(prob, aspect="auto", cmap="Blues", vmin=0, vmax=1)
    for (l, t), p in np.ndenumerate(prob):
        ax.text(t, l, shown(tok, top[l, t]), ha="center", va="center", fontsize=7,
                color="white" if p > 0.6 else "black")
    ax.set_xticks(range(len(ids)), [shown(tok, i) for i in ids], rotation=60, fontsize=7)
    ax.set_ylabel("layer (0: the embeddings)")
    ax.set_title(title, fontsize=9)


top, prob = lens_table(toy, toy_ids)                          # [L + 1, T] each
for l in range(top.shape[0]):
    cells = " ".join(f"{shown(toy_tok, t)[:6]:>6} {p:.2f}" for t, p in zip(top[l], prob[l]))
    print(f"layer {l}: {cells}")
np.testing.assert_array_equal(top[-1], logits.argmax(-1), err_msg="the lens's last row must be the model's own top tokens")
echo = (top[0] == toy_ids).mean()
print(f"tie_embeddings: {c.tie_embeddings}; layer 0 reads back the current token itself at {echo:.0%} "
      f"of the {len(toy_ids)} positions")
fig, ax = plt.subplots(figsize=(9, 3))
show_table(top, prob, toy_ids, toy_tok, "the toy's logit lens: the top next token read after each block", ax)
plt.tight_layout()
plt.show()

# %% [markdown]
# Row 0 often names the token *at* the position, not the next one, at p near 1 (RO, M, E, O): the
# toy's head is tied to its embedding (`tie_embeddings`: the head is the embedding matrix
# transposed), so a token's embedding, read through the head, scores highest on that token — its
# dot product with itself. Where it does not, row 0 reads near-uniform noise (p = 0.01). Either
# way the layer-0 lens is an echo of the input, not a prediction; the blocks make it one.
#
# Now SmolLM2 (or, without it, the same toy again) on a fact. Where does " Paris" reach the top
# at the last position? The table, then the answer's rank and probability layer by layer.

# %%
PROMPT, ANSWER = "The capital of France is", " Paris"
knob("PROMPT", PROMPT, lambda p: isinstance(p, str) and 1 <= len(p) <= 80, "a text of 1 to 80 characters")
knob("ANSWER", ANSWER, lambda a: isinstance(a, str) and 1 <= len(a) <= 20, "a text of 1 to 20 characters")
model, tok, model_name = load_pretrained(fast=False)
ids = np.array(tok.encode(PROMPT))
answer = tok.encode(ANSWER)[0]                                 # its first token
lens = logit_lens(model, ids, probs=True)                      # [L + 1, T, V]
top, prob = lens_table(model, ids)
p_answer = lens[:, -1, answer]                                 # [L + 1] the answer's probability
rank = (lens[:, -1] > p_answer[:, None]).sum(-1)               # [L + 1] 0: the top
L = model.config.n_layers
first = next((l for l in range(L + 1) if rank[l] == 0), None)
print(f"{model_name}, last position, {tok.decode([answer])!r} layer by layer:")
for l in range(L + 1):
    print(f"  layer {l:2}: rank {rank[l]:6}, p = {p_answer[l]:.3f}; the top: {tok.decode([int(top[l, -1])])!r} "
          f"({prob[l, -1]:.2f})")
print(f"{tok.decode([answer])!r} first reaches the top at layer {first} of {L}" if first is not None
      else f"{tok.decode([answer])!r} never reaches the top")
top10 = next(l for l in range(L + 1) if (rank[l:] < 10).all()) if rank[-1] < 10 else None
worst = int(rank.argmax())
print(f"its rank is worst at layer {worst} ({rank[worst]:,}); it is in the top 10 from layer {top10} on; "
      f"tie_embeddings: {model.config.tie_embeddings}, and layer 0's top token at the last position "
      f"is the last token itself: {int(top[0, -1]) == int(ids[-1])}")
claim(first == L, f"{tok.decode([answer])!r} is on top only at the last layer, p = {p_answer[-1]:.2f}",
      f"on top from layer {first}" if first is not None else "never on top")
fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 6), gridspec_kw={"width_ratios": [2, 1]})
show_table(top, prob, ids, tok, f"{model_name}: the logit lens on {PROMPT!r}", a1)
a2.semilogy(np.arange(L + 1), rank + 1, "o-")
a2.set_xlabel("layer")
a2.set_ylabel(f"rank of {tok.decode([answer])!r} + 1 (1: the top)")
a2.set_title("the answer's rank at the last position", fontsize=9)
plt.tight_layout()
plt.show()

# %% [markdown]
# The lens reads each stream through the last layer's readout, which the middle layers were never
# trained to feed: a low rank in the middle means the stream does not yet point at the answer *in
# the head's coordinates*, not that the information is absent (the tuned lens trains a readout
# per layer for that reason). What the table shows is not a steady fall: on the default prompt the
# rank *rises* over the first layers (worst at layer 7), stays in the thousands through the middle
# (the stream's top reading there is punctuation or a bare space), and falls only over the last
# few blocks: into the top 10 at layer 28, on top at layer 30. In the head's coordinates the
# answer is written late. Row 0 again echoes the last token (' is': SmolLM2's head is tied to its
# embedding too).
#
# ## 3. Direct logit attribution: who writes the answer
#
# The final stream is the embedding plus what every attention and every FFN added. The final norm
# divides it by its own scale σ, so it is not linear; with σ frozen at this run's value it is, and
# the answer's logit splits exactly into one share per component (the shares sum to it; each
# attention's share splits over its heads through their rows of W_O). Large shares late are
# the layers that write the answer into the stream directly.

# %%
a = direct_logit_attribution(model, ids, token=answer)
print(f"logit of {tok.decode([answer])!r}: {a.logit:.3f}; embedding {a.embed:+.3f} + attention {a.attn.sum():+.3f} "
      f"+ FFN {a.ffn.sum():+.3f} + the norm's bias {a.norm_bias:+.3f} = {a.total():.3f}")
assert abs(a.total() - a.logit) < 1e-3 * (1 + abs(a.logit)), "the shares must sum to the logit (σ frozen)"
top_ffn, top_attn = int(np.argmax(a.ffn)), int(np.argmax(a.attn))
print(f"the largest shares: FFN {top_ffn} ({a.ffn[top_ffn]:+.3f}), attention {top_attn} ({a.attn[top_attn]:+.3f})")
if a.heads is not None:
    l, h = np.unravel_index(np.argmax(a.heads), a.heads.shape)
    print(f"the head that writes the answer most: layer {l}, head {h} ({a.heads[l, h]:+.3f})")
fig, ax = plt.subplots(figsize=(9, 2.8))
ax.bar(np.arange(L) - 0.2, a.attn, 0.4, label="attention")
ax.bar(np.arange(L) + 0.2, a.ffn, 0.4, label="FFN")
ax.set_xlabel("layer")
ax.set_ylabel("share of the logit")
ax.set_title(f"direct contributions to the logit of {tok.decode([answer])!r}", fontsize=9)
ax.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 4. Induction heads
#
# Olsson et al. (2022) found, in transformers of two layers or more, heads that
# complete "… A B … A" with "B": a head looks back for the earlier copy of the current token and
# attends to the token that followed it, and a head downstream copies that token out. On text it
# is how a model keeps a name it has seen. It shows plainly on random tokens seen twice: the first
# copy cannot be predicted, the second can be copied.
#
# The **prefix-matching score** of a head is its mean attention weight, over the queries of the
# second copy, on the key just after the first occurrence of the query's token (1 for a perfect
# induction head): on r ‖ r with r of n tokens, the mean of A[t, t − n + 1] over t = n … 2n − 1
# (`minillm.lens.prefix_matching_score`). The toy first.

# %%
N_REPEAT, N_BATCH = 50, 4
knob("N_REPEAT", N_REPEAT, lambda n: type(n) is int and 5 <= n <= 60, "a whole number from 5 to 60")
knob("N_BATCH", N_BATCH, lambda n: type(n) is int and 1 <= n <= 4, "a whole number from 1 to 4")


def repeat_losses(logits, ids, n):
    """-> (loss on the first copy, loss on the second): the mean next-token loss of each copy's
    tokens after its first (the first copy's first token is not predicted at all; the second's
    first token follows the first copy's last, which nothing before foretells)."""
    nll = -np.take_along_axis(log_softmax(logits[:, :-1]), ids[:, 1:, None], -1)[..., 0]   # [B, 2n − 1]
    return float(nll[:, :n - 1].mean()), float(nll[:, n:].mean())     # ids 1 … n − 1, ids n + 1 … 2n − 1


def first_copy_confidence(logits, n):
    """The mean probability the model gives its own top guess on the first copy's predictions."""
    return float(np.exp(log_softmax(logits[:, :n - 1])).max(-1).mean())


def induction(m, n, batch, seed=0):
    """ids, the two losses, the prefix-matching scores [L, H] of model ``m`` and how sure it is
    of its guesses on the first copy."""
    r = repeated_random_tokens(m.config.vocab_size, n, batch=batch, seed=seed)   # [batch, 2n]
    names = [f"blocks.{l}.attn.hook_pattern" for l in range(m.config.n_layers)]
    logits, acts = m.run_with_cache(r, names=names)          # one run: the loss and the patterns
    scores = np.stack([prefix_matching_score(acts[k], n).mean(0) for k in names])   # [L, B, H] -> [L, H]
    return r, repeat_losses(logits, r, n), scores, first_copy_confidence(logits, n)


toy_n = min(N_REPEAT, toy.config.n_ctx // 2)
_, (first_loss, second_loss), toy_scores, toy_sure = induction(toy, toy_n, N_BATCH)
print(f"the toy, {N_BATCH} × {toy_n} random tokens seen twice: loss {first_loss:.2f} on the first copy, "
      f"{second_loss:.2f} on the second (ln V = {np.log(toy.config.vocab_size):.2f}: a uniform guess)")
print(f"worse than uniform because it is sure of itself: its top guess gets p = {toy_sure:.2f} on "
      f"average (uniform: 1/V = {1 / toy.config.vocab_size:.4f}), and on random tokens it is wrong")
print(f"its best prefix-matching score: {toy_scores.max():.3f}; a head spreading its weight evenly over the "
      f"keys would score about {np.mean(1 / (np.arange(toy_n, 2 * toy_n) + 1)):.3f}")
toy_copies = not claim(second_loss > first_loss - 0.5, "the toy gains nothing on the second copy: it has no induction heads",
                       "the second copy is predicted better")

# %% [markdown]
# The first copy's loss is above ln V, worse than a uniform guess: a model trained on text predicts
# text, confidently, and random tokens make every confident guess wrong (a loss above ln V needs
# probability moved *away* from the right token, which is what sure, wrong guesses do).
#
# The toy has no induction heads: it was trained for a short while on one small book. Olsson et al.
# (2022) report that induction heads form in a sudden phase change, after some training (their
# claim, from their models; this notebook does not measure it). SmolLM2 has them.

# %%
K_ABLATE = 10
knob("K_ABLATE", K_ABLATE, lambda k: type(k) is int and 1 <= k <= 16, "a whole number from 1 to 16")
n = min(N_REPEAT, model.config.n_ctx // 2)
r, (first_loss, second_loss), scores, sure = induction(model, n, N_BATCH)
print(f"{model_name}, {N_BATCH} × {n} random tokens seen twice: loss {first_loss:.2f} on the first copy "
      f"(ln V = {np.log(model.config.vocab_size):.2f}; its top guess's mean p = {sure:.2f}), "
      f"{second_loss:.2f} on the second")
claim(second_loss < first_loss / 2, "the second copy's loss is less than half the first's: the model copies")
H = model.config.n_heads
best = [divmod(int(i), H) for i in np.argsort(-scores, axis=None, kind="stable")[:K_ABLATE]]
print("the top heads (layer, head): " + ", ".join(f"{l}.{h} ({scores[l, h]:.2f})" for l, h in best))
fig, ax = plt.subplots(figsize=(4 + 0.3 * H, 0.22 * model.config.n_layers + 1.5))
im = ax.imshow(scores, aspect="auto", cmap="viridis", vmin=0, vmax=1)
ax.set_xlabel("head")
ax.set_ylabel("layer")
ax.set_title(f"{model_name}: each head's prefix-matching score", fontsize=9)
plt.colorbar(im, ax=ax)
plt.tight_layout()
plt.show()

# %% [markdown]
# If those heads do the copying, removing them should undo the second copy's gain, and removing
# as many heads picked at random should not. Each is **mean-ablated**: its output before W_O
# (`attn.hook_z`) replaced by its average over these sequences, so it still writes what it writes
# on average, but nothing about this input.

# %%
rng = np.random.default_rng(0)
K = min(K_ABLATE, scores.size)
random_heads = [divmod(int(i), H) for i in rng.choice(scores.size, K, replace=False)]
after_top = repeat_losses(ablate_heads(model, r, best[:K], kind="mean"), r, n)[1]
after_random = repeat_losses(ablate_heads(model, r, random_heads, kind="mean"), r, n)[1]
print(f"loss on the second copy: {second_loss:.2f} intact, {after_top:.2f} with the top {K} heads ablated, "
      f"{after_random:.2f} with {K} random heads ablated (first copy: {first_loss:.2f})")
claim(after_top - second_loss > 2 * max(after_random - second_loss, 0.1),
      f"ablating the top {K} prefix-matching heads costs more than twice what {K} random heads cost")
fig, ax = plt.subplots(figsize=(6, 2.6))
ax.barh(["first copy", "second copy", f"second, top {K} ablated", f"second, {K} random ablated"][::-1],
        [first_loss, second_loss, after_top, after_random][::-1], color=["grey", "grey", "tab:red", "tab:blue"][::-1])
ax.set_xlabel("mean next-token loss")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 5. Activation patching: where a fact is carried
#
# Two prompts that differ in one fact, so the answers differ. Run the corrupted one, but write into
# it the clean run's residual stream at one (layer, position), and measure how much of the clean
# answer comes back: the logit difference between the two answers, scaled so that 0 is the
# corrupted run and 1 the clean one. Patching at the first layer restores the answer exactly at
# the position where the prompts differ (there the stream is only the embedding); a cell that
# restores it later says the fact has moved there.

# %%
CLEAN, CORRUPT = "The capital of France is", "The capital of Italy is"
for name, text in (("CLEAN", CLEAN), ("CORRUPT", CORRUPT)):
    knob(name, text, lambda p: isinstance(p, str) and 1 <= len(p) <= 80, "a text of 1 to 80 characters")
clean, corrupt = np.array(tok.encode(CLEAN)), np.array(tok.encode(CORRUPT))
if len(clean) != len(corrupt):
    print(f"skipped: under {model_name}'s tokenizer the prompts have {len(clean)} and {len(corrupt)} tokens; "
          f"patching goes position by position, so they need as many")
else:
    good, bad = int(model(clean)[-1].argmax()), int(model(corrupt)[-1].argmax())
    diff = lambda logits: float(logits[0, -1, good] - logits[0, -1, bad])   # [1, T, V] -> float
    clean_diff, corrupt_diff = diff(model(clean)[None]), diff(model(corrupt)[None])
    print(f"clean -> {tok.decode([good])!r}, corrupted -> {tok.decode([bad])!r}; "
          f"logit difference {clean_diff:.2f} clean, {corrupt_diff:.2f} corrupted")
    if good == bad:
        print("skipped: both prompts give the same answer, so there is nothing to restore")
    else:
        grid = patch_residual(model, clean, corrupt, diff)                   # [L, T]
        restored = (grid - corrupt_diff) / (clean_diff - corrupt_diff)       # 0 corrupted … 1 clean
        where = np.flatnonzero(clean != corrupt)
        print(f"the prompts differ at position(s) {where.tolist()}; layer 0 restores there "
              f"{restored[0, where].round(3).tolist()} and elsewhere at most {np.delete(restored[0], where).max(initial=0):.3f}")
        if len(where) == 1:      # one differing token: layer 0's stream there is all that differs
            assert abs(restored[0, where[0]] - 1) < 1e-3 and np.abs(np.delete(restored[0], where)).max(initial=0) < 1e-3, \
                "at layer 0 patching the differing position must restore the clean run, any other position nothing"
        carried = [int(np.argmax(restored[l])) for l in range(L)]
        switch = next((l for l in range(L) if all(t == len(clean) - 1 for t in carried[l:])), None)
        print(f"the position that restores most, layer by layer: {carried}")
        claim(switch is not None and switch > 0, f"the fact moves to the last position from layer {switch} on",
              "it stays where the prompts differ")
        fig, ax = plt.subplots(figsize=(6, 0.2 * L + 1.5))
        im = ax.imshow(restored, aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1)
        ax.set_xticks(range(len(clean)), [f"{shown(tok, i)}/{shown(tok, j)}" if i != j else shown(tok, i)
                                          for i, j in zip(clean, corrupt)], rotation=60, fontsize=7)
        ax.set_ylabel("layer whose input stream is patched")
        ax.set_title("the clean answer restored by one patched (layer, position)", fontsize=9)
        plt.colorbar(im, ax=ax)
        plt.tight_layout()
        plt.show()
print(f"the notebook so far took {time.perf_counter() - START:.0f} s ({time.process_time() - CPU_START:.0f} s of CPU)")

# %% [markdown]
# Read the heat map row by row: in the early layers only the patched subject's own position
# brings the answer back (the fact is still where the word is); at some layer the last position
# takes over, and from there on the stream at the last position alone carries it to the answer.
# The claim above names that layer, when there is one.
#
# ## Exercises
#
# Write the logit lens over the streams of a model with an RMSNorm before its head, and the
# prefix-matching score; then use yours to find the induction heads of SmolLM2 (or of the toy,
# which has none). Each check runs hand-picked cases (streams that grow with depth, a perfect
# induction head beside a head on the token itself) and random ones, and names the usual
# mistakes. Solutions: `solutions/18_look_inside.py`.

# %%
from exercises import check


def my_logit_lens(resid, w, head, eps):
    raise NotImplementedError    # your code here: RMSNorm each vector of resid [L + 1, T, C], times w, @ head


check("logit_lens", my_logit_lens)

# %%
def my_prefix_matching(pattern, n):
    raise NotImplementedError    # your code here: pattern [H, 2n, 2n] -> [H]


check("prefix_matching", my_prefix_matching)
try:                             # yours, on the model's attention to the first random sequence
    _, pats = model.run_with_cache(r[0], names=[f"blocks.{l}.attn.hook_pattern" for l in range(L)])
    yours = np.stack([my_prefix_matching(pats[f"blocks.{l}.attn.hook_pattern"][0], n) for l in range(L)])
    print("the top heads by your score (layer, head):", [divmod(int(i), H) for i in np.argsort(-yours, axis=None)[:5]])
except NotImplementedError:
    print("(once your function is written, this cell also lists the model's top heads by your score)")
