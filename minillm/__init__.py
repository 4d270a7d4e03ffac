"""minillm: a GPT-style language model in pure NumPy, written to be read.

The public API, in the order of the reading path:
text → Tokenizer → ids → GPT (embedding → blocks of attention + FFN → logits) → sampling →
next id → append (with a KVCache) → repeat: generate / beam_search / score_options.
"""
from minillm.config import ModelConfig
from minillm.functional import cross_entropy, log_softmax, softmax
from minillm.kv_cache import KVCache
from minillm.model import GPT, GPTParams, init_params

__version__ = "0.1.0"

__all__ = [
    "ModelConfig", "GPT", "GPTParams", "init_params", "KVCache",
    "softmax", "log_softmax", "cross_entropy",
]
