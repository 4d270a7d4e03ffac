"""``import minillm`` and loading a model read no training code (PEP 562 names in __init__.py)."""
import subprocess
import sys

import pytest

import minillm

CHECK = """
import sys, minillm
model, tokenizer = minillm.load_model("shakespeare")
loaded = sorted(m for m in sys.modules if m == "minillm.train" or m.startswith("minillm.train."))
print(repr(loaded))
"""


def test_loading_a_shipped_model_imports_no_training_module():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_training_names_still_resolve_and_are_listed():
    from minillm.train.sft import finetune
    assert minillm.finetune is finetune
    assert minillm.train.train is __import__("minillm.train", fromlist=["train"]).train
    for name in minillm.__all__:
        assert getattr(minillm, name) is not None
        assert name in dir(minillm)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        minillm.no_such_name
