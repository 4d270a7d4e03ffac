"""The whole model's backward, in pieces grad_model.py puts in order: one residual block's
forward with its caches and its backward (block), and what training refuses before it starts
(checks: configs without a hand-written backward, malformed batches)."""
from minillm.train.grads.block import block_backward, block_forward
from minillm.train.grads.checks import TRAINABLE, check_batch, check_trainable

__all__ = ["TRAINABLE", "block_backward", "block_forward", "check_batch", "check_trainable"]
