"""minillm: a GPT-style language model in pure NumPy, written to be read.

The public API, in the order of the reading path:
text → Tokenizer → ids → GPT (embedding → blocks of attention + FFN → logits) → sampling →
next id → append (with a KVCache) → repeat: generate / beam_search / score_options.
Training lives in ``minillm.train`` (``minillm.train.train(...)``: the subpackage keeps its name).
"""
from minillm.config import ModelConfig
from minillm.functional import cross_entropy, log_softmax, softmax
from minillm.kv_cache import KVCache
from minillm.model import GPTParams, init_params
from minillm.sampling import PRESETS, Sampler
from minillm.tokenizer import StreamDecoder, Tokenizer, load_tokenizer
from minillm.decoding.budget import Budget, context_budget, count_tokens, estimate_cost
from minillm.decoding.chunks import chunk_ids, chunk_spans
from minillm.decoding.perplexity import Perplexity, perplexity, token_logprobs
from minillm.io import load_safetensors, save_safetensors, read_gguf
from minillm.decoding.generate import Step, generate, generate_simple
from minillm.decoding.stop_strings import Stops
from minillm.decoding.batch import generate_batch
from minillm.decoding.speculative_drafts import DraftModel, DraftSource, PromptLookup, first_layers
from minillm.decoding.serving import ContinuousBatcher, serve
from minillm.decoding.beam import Hypothesis, beam_search
from minillm.decoding.options import OptionScores, score_options
from minillm.decoding.constraints import Choice, JsonSchema, Regex
from minillm.chat.conversation import Chat
from minillm.chat.chatml import DEFAULT_SYSTEM, chatml_ids, render_chatml
from minillm.chat.formats import ChatFormat, get_format
from minillm.model import GPT
from minillm.loading import load_model
from minillm.lens import (ablate_heads, direct_logit_attribution, logit_lens, patch_activations,
                          patch_residual)

# Training names load on first use (PEP 562): ``import minillm`` to generate text reads no
# training module; ``minillm.finetune`` imports minillm.train.sft the first time it is asked for.
_LAZY = {name: "minillm.train" for name in (
    "AdamW", "LoRA", "TrainSettings", "evaluate_text", "init_lora", "load_adapter",
    "lora_loss_and_grads", "loss_and_grads", "merged_params", "save_adapter")}
_LAZY.update({name: "minillm.train.sft" for name in (
    "ChatMLFormat", "FinetuneResult", "evaluate_conversations", "finetune", "read_conversations")})
_LAZY["make_server"] = "minillm.server"    # `minillm serve`'s server: http.server only when asked


def __getattr__(name: str):
    """A training name, the server's ``make_server`` (or ``minillm.train`` itself) -> its
    object, imported now and kept."""
    import importlib
    if name == "train":
        return importlib.import_module("minillm.train")
    if name not in _LAZY:
        raise AttributeError(f"module 'minillm' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__():
    """The names as if training were loaded; not the helpers that load it lazily."""
    return sorted((set(globals()) | set(_LAZY) | {"train"}) - {"_LAZY", "__getattr__", "__dir__"})

__version__ = "0.1.0"

__all__ = [
    "Tokenizer", "StreamDecoder", "load_tokenizer",
    "ModelConfig", "GPT", "GPTParams", "init_params", "KVCache",
    "generate", "generate_simple", "Step", "Stops", "generate_batch", "beam_search", "Hypothesis",
    "PromptLookup", "DraftModel", "DraftSource", "first_layers", "ContinuousBatcher", "serve",
    "Regex", "JsonSchema", "Choice",
    "score_options", "OptionScores", "Chat", "render_chatml", "chatml_ids", "DEFAULT_SYSTEM",
    "ChatFormat", "get_format",
    "load_model", "make_server", "TrainSettings", "loss_and_grads", "AdamW", "evaluate_text",
    "LoRA", "init_lora", "lora_loss_and_grads", "merged_params", "save_adapter", "load_adapter",
    "finetune", "FinetuneResult", "read_conversations", "evaluate_conversations", "ChatMLFormat",
    "Sampler", "PRESETS",
    "Budget", "context_budget", "count_tokens", "estimate_cost", "chunk_ids", "chunk_spans",
    "perplexity", "Perplexity", "token_logprobs",
    "load_safetensors", "save_safetensors", "read_gguf",
    "softmax", "log_softmax", "cross_entropy",
    "logit_lens", "direct_logit_attribution", "ablate_heads", "patch_activations", "patch_residual",
]
