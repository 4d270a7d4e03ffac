"""LoRA: low-rank adapters trained on a frozen base, W' = W + (α/r)·A B.

``adapters.py``: the math (PEFT's initialisation, the adapters' gradients, merging into the
weights); ``files.py``: PEFT's file layout (``adapter_config.json`` + ``adapter_model.safetensors``).
"""
from minillm.train.lora.adapters import LoRA, init_lora, lora_loss_and_grads, merged_params
from minillm.train.lora.files import load_adapter, save_adapter

__all__ = ["LoRA", "init_lora", "load_adapter", "lora_loss_and_grads", "merged_params",
           "save_adapter"]
