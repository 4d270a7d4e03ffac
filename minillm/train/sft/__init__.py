"""Supervised fine-tuning on conversations, in reading order: the JSONL reader (data), the loss
mask — the assistant's tokens only (mask), padded or packed batches in a fixed order (batches),
the held-out score (evaluate), the run's settings (settings), the loop (loop), checkpoints
and exact resume (resume)."""
from minillm.train.sft.data import read_conversations
from minillm.train.sft.loop import (FinetuneResult, FinetuneSettings, evaluate_conversations,
                                    finetune)
from minillm.train.sft.mask import ChatMLFormat, render

__all__ = ["ChatMLFormat", "FinetuneResult", "FinetuneSettings", "evaluate_conversations",
           "finetune", "read_conversations", "render"]
