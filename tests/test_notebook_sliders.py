"""The notebooks' sliders (nbhelpers.explore): a slider per knob where Jupyter widgets can be
shown, else one static figure with a panel per fixed setting — and the rule that picks between
them (a flag, CI or a pytest run forces the static figure, as does a missing ipywidgets or a
plain script)."""
import sys
import types

import pytest

from tests.conftest import REPO

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(REPO / "notebooks"))
import nbhelpers  # noqa: E402

FLAGS = (nbhelpers.STATIC, "CI", "PYTEST_CURRENT_TEST")


def no_flags(monkeypatch):
    """Unset every flag; called in the test body (pytest sets PYTEST_CURRENT_TEST anew per phase)."""
    for flag in FLAGS:
        monkeypatch.delenv(flag, raising=False)


@pytest.fixture
def in_a_kernel(monkeypatch):
    """A Jupyter kernel with ipywidgets installed (fakes of both modules)."""
    calls = []
    widgets = types.SimpleNamespace(
        IntSlider=lambda **kw: ("int", kw), FloatSlider=lambda **kw: ("float", kw),
        interact=lambda fn, **controls: calls.append((fn, controls)))
    shell = types.SimpleNamespace(kernel=object())
    monkeypatch.setitem(sys.modules, "ipywidgets", widgets)
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    return calls


def test_a_kernel_with_ipywidgets_shows_widgets(in_a_kernel, monkeypatch):
    no_flags(monkeypatch)
    assert nbhelpers.widgets_available()


@pytest.mark.parametrize("flag", FLAGS)
def test_a_flag_forces_the_static_figure(in_a_kernel, monkeypatch, flag):
    no_flags(monkeypatch)
    monkeypatch.setenv(flag, "1")
    assert not nbhelpers.widgets_available()


def test_without_ipywidgets_the_figure_is_static(in_a_kernel, monkeypatch):
    no_flags(monkeypatch)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)          # import raises ImportError
    assert not nbhelpers.widgets_available()


def test_a_plain_script_gets_the_static_figure(in_a_kernel, monkeypatch):
    no_flags(monkeypatch)
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: None))
    assert not nbhelpers.widgets_available()


def test_this_test_run_takes_the_static_path():
    assert not nbhelpers.widgets_available()           # pytest sets PYTEST_CURRENT_TEST, as in CI


def test_static_draws_one_panel_per_setting(monkeypatch):
    monkeypatch.setattr(plt, "show", lambda: None)
    drawn = []
    shown = nbhelpers.explore(lambda ax, T, top_p: drawn.append((ax, T, top_p)),
                              {"T": (0.1, 3.0, 0.1, 1.0), "top_p": (0.05, 1.0, 0.05, 0.9)},
                              static=[{"T": 0.5, "top_p": 0.9}, {"T": 2.0, "top_p": 0.5}])
    assert shown == "static"
    assert [(T, p) for _, T, p in drawn] == [(0.5, 0.9), (2.0, 0.5)]
    assert drawn[0][0] is not drawn[1][0] and drawn[0][0].figure is drawn[1][0].figure
    plt.close("all")


def test_widgets_get_one_slider_per_knob_of_the_right_kind(in_a_kernel, monkeypatch):
    no_flags(monkeypatch)
    monkeypatch.setattr(plt, "show", lambda: None)
    drawn = []
    shown = nbhelpers.explore(lambda ax, T, W: drawn.append((T, W)),
                              {"T": (0.1, 3.0, 0.1, 1.0), "W": (1, 64, 1, 32)}, static=[{"T": 1.0, "W": 8}])
    assert shown == "widgets" and drawn == []          # nothing drawn until the slider calls back
    (show, controls), = in_a_kernel
    assert controls["T"] == ("float", {"value": 1.0, "min": 0.1, "max": 3.0, "step": 0.1,
                                       "description": "T", "continuous_update": False})
    assert controls["W"][0] == "int" and controls["W"][1]["value"] == 32
    show(T=0.7, W=5)
    assert drawn == [(0.7, 5)]
    plt.close("all")


@pytest.mark.parametrize("static", [[], [{"T": 1.0, "extra": 2}], [{}]])
def test_static_settings_must_name_every_slider(static):
    with pytest.raises(ValueError, match="static must be a non-empty list"):
        nbhelpers.explore(lambda ax, T: None, {"T": (0.1, 3.0, 0.1, 1.0)}, static=static, widgets=False)
