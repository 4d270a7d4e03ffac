"""Chat formats, one per family, by name: how a conversation becomes the text a model was
fine-tuned on. Each is a small renderer (messages -> pieces -> text or ids, base.py), written by
hand from the family's real template: minillm runs no Jinja (numpy and regex are its only
dependencies), and tests/chat/test_chat_formats.py checks every one against transformers'
``apply_chat_template`` with the real template (text and ids).

    chatml, smollm2, qwen2.5, qwen3     ChatML  <|im_start|>user\\nHi<|im_end|>\\n      chatml.py
    llama3, llama3.1, llama3.2          headers <|start_header_id|>user<|end_header_id|>  llama3.py
    gemma2, gemma3                      turns   <start_of_turn>user\\nHi<end_of_turn>\\n  gemma.py
    phi3, phi3.5                        tags    <|user|>\\nHi<|end|>\\n                   phi3.py
    mistral, mistral-tekken             [INST] Hi[/INST]                                 mistral.py
    olmo2                               Tülu    <|user|>\\nHi\\n<|assistant|>\\n          olmo2.py
    smollm3, smollm3-unsloth            ChatML after a metadata block, /think /no_think  smollm3.py

Which one a model uses: detect.py reads its chat template. Example::

    fmt = get_format("gemma3")
    fmt.render([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
    # '<bos><start_of_turn>user\\nBe brief.\\n\\nHi<end_of_turn>\\n<start_of_turn>model\\n'
    fmt.ids(tokenizer, messages)      # the markers as special ids, all text as text
"""
from minillm.chat.formats import chatml, gemma, llama3, mistral, olmo2, phi3, smollm3
from minillm.chat.formats.base import ChatFormat, Marker

FORMATS: dict[str, ChatFormat] = {f.name: f for module in (chatml, llama3, gemma, phi3, mistral,
                                                            olmo2, smollm3)
                                  for f in module.FORMATS}


def get_format(name) -> ChatFormat:
    """A chat format by name (``FORMATS``' keys); a ChatFormat is returned as it is."""
    if isinstance(name, ChatFormat):
        return name
    if not isinstance(name, str) or name not in FORMATS:
        raise ValueError(f"unknown chat format {name!r}; the formats: {', '.join(FORMATS)}")
    return FORMATS[name]


__all__ = ["ChatFormat", "FORMATS", "Marker", "get_format"]
