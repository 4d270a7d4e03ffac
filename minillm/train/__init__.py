"""Training, in reading order: the backward of each layer (grad_norm: LayerNorm and RMSNorm;
grad_rope: RoPE; grad_attention: multi-head and grouped-query attention; grad_ffn: the GELU MLP
and SwiGLU), the whole model's loss and gradients (grad_model: GPT-2 and the Llama family, Qwen2's
Q, K, V biases, tied or untied head; grads/: one block's forward and backward, the checks), the optimiser (optim), the data (data), the score on
held-out text (evaluate) and the loop that ties them together (loop). Then LoRA: low-rank
adapters trained on a frozen base (lora/: adapters.py, the math and merging; files.py, PEFT's file layout;
frozen: the step computed without rebuilding the base, x W + s·(x A) B). Then supervised
fine-tuning on conversations (sft/: data, mask, batches, evaluate, loop, resume). Last, the same
step in less memory (memory/: chunked_head, the head and its loss a chunk of rows at a time;
recompute, each block's forward recomputed in the backward instead of kept; lean_ffn)."""
from minillm.train.evaluate import evaluate_text
from minillm.train.grad_model import loss_and_grads
from minillm.train.loop import TrainSettings, train
from minillm.train.lora.adapters import LoRA, init_lora, lora_loss_and_grads, merged_params
from minillm.train.lora.files import load_adapter, save_adapter
from minillm.train.optim import AdamW, clip_grad_norm, lr_at
from minillm.train.sft import (ChatMLFormat, FinetuneResult, FinetuneSettings,
                               evaluate_conversations, finetune, read_conversations)

__all__ = ["AdamW", "ChatMLFormat", "FinetuneResult", "FinetuneSettings", "evaluate_conversations",
           "finetune", "read_conversations", "LoRA", "TrainSettings", "clip_grad_norm", "evaluate_text", "init_lora",
           "load_adapter", "lora_loss_and_grads", "loss_and_grads", "lr_at", "merged_params",
           "save_adapter", "train"]
