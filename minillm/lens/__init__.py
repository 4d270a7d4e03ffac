"""Looking inside a running model: the tools learners meet in the interpretability literature,
each a small function over ``model.run_with_cache`` / ``model.run_with_hooks`` (minillm/hooks.py):

    logit_lens       a layer's residual stream read out through the final norm and the head
    attribution      direct logit attribution: each layer's and head's share of one logit
    ablation         a head's output zeroed or replaced by its mean
    patching         activations of a clean run written into a corrupted run
    induction        the prefix-matching and copying scores of induction heads (Olsson et al. 2022)

The names are TransformerLens's (``blocks.3.hook_resid_post``, ``blocks.3.attn.hook_z`` …), so
its tutorials read across. ``python -m minillm lens`` prints the logit lens and the top heads.
"""
from minillm.lens.logit_lens import logit_lens, lens_table, final_readout
from minillm.lens.attribution import Attribution, direct_logit_attribution
from minillm.lens.ablation import ablate_heads, head_ablation_hooks
from minillm.lens.patching import patch_activations, patch_residual
from minillm.lens.induction import (copying_scores, prefix_matching_score, prefix_matching_scores,
                                    repeated_random_tokens)

__all__ = ["logit_lens", "lens_table", "final_readout", "Attribution",
           "direct_logit_attribution", "ablate_heads", "head_ablation_hooks",
           "patch_activations", "patch_residual", "copying_scores", "prefix_matching_score",
           "prefix_matching_scores", "repeated_random_tokens"]
