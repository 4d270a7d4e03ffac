"""The model, one concept per module, in reading order:
embedding → norm → attention (with rope) → ffn → block → gpt."""
from minillm.model.gpt import GPT
from minillm.model.params import GPTParams, init_params

__all__ = ["GPT", "GPTParams", "init_params"]
