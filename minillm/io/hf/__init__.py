"""Hugging Face's own files beside the weights: ``config.json`` and sharded checkpoints.

``config.py``: ``read_config`` / ``write_config``, ``from_hf_dict`` / ``to_hf_dict`` (the keys
every Llama-derived family shares, then what its module in minillm/families/ declares);
``families.py``: a mixture of experts' keys read as each family declares them, old names kept
(Gemma's reader and writer now live in families/gemma2.py); ``checks.py``: config.json's values checked before use (JSON types,
variants refused by name, RoPE settings). ``shards.py``: a checkpoint split over several
safetensors files and its ``model.safetensors.index.json``, read and checked; ``shard_write.py``:
the split and the index as transformers writes them (``save_pretrained(max_shard_size=…)``).
"""
