"""Training in less memory, the same gradients: the head and its loss taken a chunk of rows at a
time (chunked_head), and each block's activations recomputed in the backward instead of kept
(recompute: selectively, the top blocks keeping their FFN's pre-activations; lean_ffn: SwiGLU's
cache and backward without h). grad_model.py stays the definition; these are tested equal to it."""
from minillm.train.memory.chunked_head import chunked_head_loss
from minillm.train.memory.recompute import loss_and_grads_recompute

__all__ = ["chunked_head_loss", "loss_and_grads_recompute"]
