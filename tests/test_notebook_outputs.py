"""How a fresh run of a notebook is compared with its committed outputs (scripts/notebook_outputs.py):
exactly as text, numbers within one unit of their last printed digit, times and rates and cells
tagged ``volatile`` not at all, cells needing optional files only where those files are found."""
from tests.test_notebooks_meta import load_script

OUTPUTS = load_script("notebook_outputs")
FOUND = {"smollm2": True, "deepseek_v4": True, "shared_data": True}


def notebook(*texts, found=FOUND, tags=(), needs=(), figures=()):
    cells = []
    for number, text in enumerate(texts):
        metadata = {}
        if number in tags:
            metadata["tags"] = ["volatile"]
        if number in needs:
            metadata["minillm"] = {"needs_data": True}
        outputs = [{"output_type": "stream", "name": "stdout", "text": text}]
        outputs += [{"output_type": "display_data", "data": {"image/png": "x", "text/plain": "<Figure>"},
                     "metadata": {}}] * (number in figures)
        cells.append({"cell_type": "code", "id": f"cell-{number}", "metadata": metadata,
                      "outputs": outputs, "source": "", "execution_count": number + 1})
    return {"cells": cells, "metadata": {"minillm": {"data_found": found}}}


def test_equal_outputs_have_no_difference():
    assert OUTPUTS.differences(notebook("a 1\n", "b 2.5\n"), notebook("a 1\n", "b 2.5\n"), FOUND) == []


def test_a_changed_word_or_count_is_a_difference_named_by_its_cell():
    found = OUTPUTS.differences(notebook("the sea\n", "19 tokens\n"), notebook("the sky\n", "20 tokens\n"), FOUND)
    assert [line.split(":")[0] for line in found] == ["cell-0", "cell-1"]
    assert "the sea" in found[0] and "the sky" in found[0]


def test_a_float_may_round_the_other_way_but_no_further():
    assert OUTPUTS.texts_agree("p = 0.85", "p = 0.86")             # one unit of the last digit
    assert not OUTPUTS.texts_agree("p = 0.85", "p = 0.87")
    assert OUTPUTS.texts_agree("loss 1234.5678", "loss 1234.9")     # within 1e-3 of its size
    assert not OUTPUTS.texts_agree("1.5e-05", "1.8e-05")
    assert not OUTPUTS.texts_agree("1,234 words", "1,235 words")    # integers are counts: exact


def test_times_and_rates_are_not_compared():
    assert OUTPUTS.texts_agree("loaded in 5.9 s; 41 tokens/s; 12.5 GB/s; 3.1× faster; 8 ms; 1.4x",
                               "loaded in 4.8 s; 12 tokens/s; 9.0 GB/s; 2.0× faster; 11 ms; 2.2x")
    assert not OUTPUTS.texts_agree("a 4 × 4 matrix", "a 4 × 5 matrix"), "a shape is no rate"
    assert not OUTPUTS.texts_agree("a 4x4 matrix", "a 4x5 matrix")


def test_volatile_cells_are_skipped_and_figures_are_counted():
    assert OUTPUTS.differences(notebook("1\n", tags=[0]), notebook("2\n"), FOUND) == []
    found = OUTPUTS.differences(notebook("a\n", figures=[0]), notebook("a\n"), FOUND)
    assert found == ["cell-0: 1 figure(s) committed, 0 shown"]


def test_cells_needing_optional_files_are_compared_only_where_the_same_files_are_found():
    committed, fresh = notebook("SmolLM2 says Paris\n", needs=[0]), notebook("the fallback says Lyon\n")
    assert OUTPUTS.differences(committed, fresh, {**FOUND, "smollm2": False}) == []
    assert OUTPUTS.differences(committed, fresh, FOUND) != []


def test_another_number_of_cells_asks_for_a_new_run():
    found = OUTPUTS.differences(notebook("a\n", "b\n"), notebook("a\n"), FOUND)
    assert len(found) == 1 and "--execute" in found[0]


def test_the_text_shown_leaves_out_figure_placeholders_addresses_and_stderr():
    cell = {"outputs": [{"output_type": "stream", "name": "stderr", "text": "warning\n"},
                        {"output_type": "stream", "name": "stdout", "text": ["<object at 0x7f3a>", "\n"]},
                        {"output_type": "execute_result", "data": {"text/plain": "<Figure size 640x480 with 1 Axes>"}}]}
    assert OUTPUTS.shown(cell) == "<object at 0x…>\n<Figure>"
