"""The model, one concept per module, in reading order:
embedding → norm → linear → attention (with rope) → ffn → block → gpt; params and the parameter
arena (one contiguous block the loaders fill) hold the weights."""
from minillm.model.arena import to_arena
from minillm.model.gpt import GPT
from minillm.model.init import init_params
from minillm.model.params import GPTParams

__all__ = ["GPT", "GPTParams", "init_params", "to_arena"]
