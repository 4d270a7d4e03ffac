"""Training, in reading order: the backward of each layer (grad_norm, grad_attention, grad_ffn),
the whole model's loss and gradients (grad_model), the optimiser (optim), the data (data), the
score on held-out text (evaluate) and the loop that ties them together (loop)."""
from minillm.train.evaluate import evaluate_text
from minillm.train.grad_model import loss_and_grads
from minillm.train.loop import TrainSettings, train
from minillm.train.optim import AdamW, clip_grad_norm, lr_at

__all__ = ["AdamW", "TrainSettings", "clip_grad_norm", "evaluate_text", "loss_and_grads", "lr_at",
           "train"]
