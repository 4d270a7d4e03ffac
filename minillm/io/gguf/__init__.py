"""GGUF, llama.cpp's one-file format, both ways.

In: ``read.py`` (the header and tensor table, memory-mapped; every value bounds-checked by
``values.py`` within ``limits.py``), ``dequant.py`` (F16, BF16, Q8_0, Q4_0, Q4_1 -> float32),
``model.py`` (a file -> ModelConfig + weights; GPT-2's names in ``gpt2_names.py``; llama.cpp's
Q/K row order undone by ``qk_rows.py``).
Out: ``export.py`` (a model + tokenizer -> one file) over ``write.py`` (the format), ``vocab.py``
(the tokenizer as metadata) and ``carry.py`` (the source's other metadata, written back).
"""
