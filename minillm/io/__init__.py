"""File formats: safetensors (HF checkpoints), GGUF (llama.cpp) and GGML dequantisation."""
from minillm.io.gguf.dequant import dequantize
from minillm.io.gguf.read import GGUF, TensorInfo, read_gguf
from minillm.io.safetensors import load_safetensors, load_safetensors_metadata, save_safetensors

__all__ = ["GGUF", "TensorInfo", "dequantize", "load_safetensors", "load_safetensors_metadata",
           "read_gguf", "save_safetensors"]
