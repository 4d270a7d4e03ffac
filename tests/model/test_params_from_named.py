"""GPTParams.from_named, the loaders' way in: the tree around exactly the config's names and
shapes, arrays used as given; anything else is a ValueError naming what is wrong."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm.model.init import init_params
from minillm.model.params import GPTParams
from tests.model.strategies import tiny_configs


@given(tiny_configs(), st.integers(0, 100))
def test_from_named_inverts_named_using_the_arrays_as_given(config, seed):
    named = init_params(config, np.random.default_rng(seed)).named()
    rebuilt = GPTParams.from_named(named, config).named()
    assert list(rebuilt) == list(named)
    assert all(rebuilt[name] is a for name, a in named.items())


@given(tiny_configs(), st.data())
def test_from_named_refuses_a_missing_an_unexpected_or_a_wrongly_shaped_parameter(config, data):
    """One parameter dropped, one name added, or one array with a row more: each a ValueError
    saying which name (loaders rely on it to refuse a checkpoint of another shape)."""
    named = init_params(config, np.random.default_rng(0)).named()
    name = data.draw(st.sampled_from(sorted(named)))
    missing = {k: a for k, a in named.items() if k != name}
    with pytest.raises(ValueError, match=rf"missing \['{name}'\]"):
        GPTParams.from_named(missing, config)
    with pytest.raises(ValueError, match=r"unexpected \['blocks.9.extra'\]"):
        GPTParams.from_named({**named, "blocks.9.extra": named[name]}, config)
    a = named[name]
    reshaped = {**named, name: np.zeros((a.shape[0] + 1, *a.shape[1:]), np.float32)}
    with pytest.raises(ValueError, match=rf"{name} has shape"):
        GPTParams.from_named(reshaped, config)
