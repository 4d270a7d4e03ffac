"""The attack classes of config values, adapters and conversations, fuzzed: random config.json
values for every family, random adapter_config.json settings and tensor values, random JSONL
lines. Each ends in a clear ValueError/TypeError naming what was wrong, or in an accepted value
whose model gives finite logits / a finite adapter: never a traceback, a hang or a blow-up."""
import json
import math
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from minillm import GPT
from minillm.config import ModelConfig
from minillm.io.hf.config import from_hf_dict
from minillm.io.sizes import parameter_count
from minillm.io.safetensors import write_safetensors
from minillm.train.lora.adapters import init_lora, merged_params
from minillm.train.lora.files import load_adapter, save_adapter
from minillm.train.sft.data import read_conversations
from tests.fuzz.profile import CASES_PER_FORMAT
from tests.fuzz.runner import CLEAR

EXAMPLES = settings(max_examples=CASES_PER_FORMAT, deadline=None)
FAMILIES = ("gpt2", "llama", "qwen2", "qwen3", "mistral", "phi3", "olmo2", "smollm3", "mixtral",
            "qwen3_moe", "olmoe", "gemma2", "gemma3_text")
BASE = {"vocab_size": 16, "hidden_size": 8, "num_attention_heads": 2, "num_key_value_heads": 2,
        "num_hidden_layers": 2, "intermediate_size": 8, "head_dim": 4, "n_embd": 8, "n_head": 2,
        "n_layer": 2, "n_positions": 16, "max_position_embeddings": 16, "num_experts": 2,
        "num_local_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 8}
KEYS = ("num_hidden_layers", "n_layer", "sliding_window", "sliding_window_pattern",
        "query_pre_attn_scalar", "attn_logit_softcapping", "final_logit_softcapping",
        "rope_theta", "rope_local_base_freq", "no_rope_layer_interval", "rms_norm_eps",
        "max_position_embeddings", "head_dim")
EXTREME = (st.sampled_from([0, 1, 2, 3, 6, 2**31, 2**32 - 1, 2**32, 2**63, 10**9, 10**400, -1])
           | st.sampled_from([0.0, 1e-310, 1e-300, 1e-30, 1e-4, 0.5, 30.0, 1e8, 1e30, 1e308,
                              math.inf, -math.inf, math.nan])
           | st.sampled_from(["12", None, True, [], {}, [1] * 3]))


@EXAMPLES
@given(st.sampled_from(FAMILIES), st.dictionaries(st.sampled_from(KEYS), EXTREME, max_size=3))
def test_every_familys_config_values_are_refused_by_name_or_give_finite_logits(family, values):
    try:
        config = from_hf_dict({"model_type": family, **BASE, **values})
    except CLEAR as exc:
        config, message = None, str(exc)
    if config is None:
        assert message                                  # (a message, naming the value)
    else:
        assume(parameter_count(config) < 1 << 16)        # (accepted, but too big to run here)
        config = ModelConfig(**{**config.__dict__, "n_ctx": min(config.n_ctx, 16)})
        logits = GPT(config, seed=0)(np.arange(1, 1 + min(4, config.n_ctx))[None])  # [1, T]
        assert np.all(np.isfinite(logits))


CONFIG = ModelConfig(vocab_size=16, n_ctx=8, d_model=8, n_heads=2, n_layers=2, d_ff=8,
                     arch="llama")
SETTINGS = {"r": st.sampled_from([0, 1, 2, 3, -1, 2.0, "2", None]),
            "lora_alpha": EXTREME, "target_modules": st.sampled_from(
                [None, [], ["q_proj"], ["q_proj", "v_proj", "k_proj", "o_proj", "gate_proj",
                 "up_proj", "down_proj"], "all-linear", ".*q_proj", "([", 7, [7]]),
            "layers_to_transform": st.sampled_from([None, 0, 1, [0], [0, 1], [], "0", [True]]),
            "base_model_name_or_path": st.sampled_from([None, ".", "..", "x", 3]),
            "use_dora": st.sampled_from([False, True, None]),
            "alora_invocation_tokens": st.sampled_from([None, [1]])}


@EXAMPLES
@given(st.fixed_dictionaries({}, optional=SETTINGS),
       st.sampled_from([0.0, 0.5, 1e3, 1e5, 1e30, np.inf, np.nan]), st.booleans())
def test_random_adapters_are_refused_by_name_or_load_finite(settings_, value, drop):
    model = GPT(CONFIG, seed=0)
    lora = init_lora(model.params, 2, np.random.default_rng(0))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        save_adapter(folder, lora, CONFIG)
        config_path = folder / "adapter_config.json"
        config_path.write_text(json.dumps({**json.loads(config_path.read_text()), **settings_}))
        if value or drop:
            from minillm.io.safetensors import load_safetensors
            tensors = {k: v + np.float32(value) for k, v in
                       load_safetensors(folder / "adapter_model.safetensors", mmap=False).items()}
            (folder / "adapter_model.safetensors").unlink()
            write_safetensors(folder / "adapter_model.safetensors",
                              dict(list(tensors.items())[1:]) if drop else tensors)
        try:
            merged, message = merged_params(model.params, load_adapter(folder, CONFIG)), ""
        except CLEAR as exc:
            merged, message = None, str(exc)
        assert message if merged is None else \
            all(np.all(np.isfinite(w)) for w in merged.named().values())


LINES = st.one_of(
    st.text(max_size=40), st.just(""), st.just("   "), st.just("[]"), st.just("null"),
    st.just("[" * 5000 + "]" * 5000),
    st.builds(lambda c, r: json.dumps({"messages": [{"role": r, "content": c},
                                                    {"role": "assistant", "content": "ok"}]}),
              st.text(max_size=20), st.sampled_from(["user", "system", "assistant", "bot"])))


@EXAMPLES
@given(st.lists(LINES, max_size=6), st.sampled_from(["\n", "\r\n", "\u2028", "\n\n\n"]))
def test_random_jsonl_lines_are_read_or_refused_naming_the_line(lines, end):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chat.jsonl"
        path.write_text(end.join(lines), encoding="utf-8")
        try:
            conversations, message = read_conversations(path), ""
        except CLEAR as exc:
            conversations, message = None, str(exc)
        assert "chat.jsonl" in message if conversations is None else \
            all(isinstance(c, list) and c for c in conversations)
