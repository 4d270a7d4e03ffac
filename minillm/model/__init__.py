"""The model, one concept per module, in reading order: embedding → norm → linear → attention
(with rope) → ffn → block → gpt; params and init hold the weights, every one a float32 ndarray.
The fast layout of the same math is ``minillm/engine/``."""
from minillm.model.gpt import GPT
from minillm.model.init import init_params
from minillm.model.params import GPTParams, empty_params

__all__ = ["GPT", "GPTParams", "empty_params", "init_params"]
