"""Chunking a long document (minillm/decoding/chunks.py): the properties of the chunks."""
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import minillm
from minillm.decoding.chunks import chunk_ids, chunk_spans

lengths = st.integers(0, 300)
sizes = st.integers(1, 40)


@st.composite
def arguments(draw):
    size = draw(sizes)
    return draw(lengths), size, draw(st.integers(0, size - 1))


def test_docstring_examples():
    assert chunk_spans(10, 4, 1) == [(0, 4), (3, 7), (6, 10)]
    assert chunk_ids([1, 2, 3, 4, 5, 6], 4, 2) == [[1, 2, 3, 4], [3, 4, 5, 6]]
    assert (minillm.chunk_ids, minillm.chunk_spans) == (chunk_ids, chunk_spans)   # the public API


@given(arguments())
def test_every_token_is_covered_and_the_last_chunk_ends_at_the_end(args):
    n, size, overlap = args
    spans = chunk_spans(n, size, overlap)
    covered = np.zeros(n, dtype=bool)
    for start, stop in spans:
        covered[start:stop] = True
    assert covered.all()
    if n == 0:
        assert spans == []
    else:
        assert spans[0][0] == 0 and spans[-1][1] == n


@given(arguments())
def test_consecutive_chunks_overlap_by_exactly_overlap(args):
    n, size, overlap = args
    spans = chunk_spans(n, size, overlap)
    for (_, stop), (next_start, _) in zip(spans, spans[1:]):
        assert stop - next_start == overlap


@given(arguments())
def test_every_chunk_holds_at_most_size_tokens_and_all_but_the_last_exactly_size(args):
    n, size, overlap = args
    spans = chunk_spans(n, size, overlap)
    assert all(0 < stop - start <= size for start, stop in spans)
    assert all(stop - start == size for start, stop in spans[:-1])


@given(arguments())
def test_the_number_of_chunks_is_one_plus_the_steps_past_the_first_window(args):
    n, size, overlap = args
    assume(n > 0)
    expected = 1 if n <= size else 1 + -(-(n - size) // (size - overlap))   # ceil division
    assert len(chunk_spans(n, size, overlap)) == expected


@given(arguments())
def test_chunk_ids_are_the_slices_of_the_spans_for_lists_and_arrays(args):
    n, size, overlap = args
    ids = list(range(100, 100 + n))
    chunks = chunk_ids(ids, size, overlap)
    assert chunks == [ids[a:b] for a, b in chunk_spans(n, size, overlap)]
    assert chunk_ids(np.array(ids, dtype=np.int64), size, overlap) == chunks
    assert all(type(i) is int for chunk in chunks for i in chunk)


@pytest.mark.parametrize("n, size, overlap, message", [
    (10, 0, 0, "size must be >= 1"),
    (10, -3, 0, "size must be >= 1"),
    (10, 4, 4, r"overlap must be in \[0, size - 1\]"),
    (10, 4, 7, r"overlap must be in \[0, size - 1\]"),
    (10, 4, -1, r"overlap must be in \[0, size - 1\]"),
    (-1, 4, 1, "n_tokens must be >= 0"),
    (10, 4.0, 1, "size must be an int"),
    (10, True, 0, "size must be an int"),
    (10, 4, None, "overlap must be an int"),
])
def test_bad_arguments_are_refused(n, size, overlap, message):
    with pytest.raises(ValueError, match=message):
        chunk_spans(n, size, overlap)
    if isinstance(n, int) and n >= 0:
        with pytest.raises(ValueError, match=message):
            chunk_ids(list(range(n)), size, overlap)


@pytest.mark.parametrize("ids", ["abc", b"abc", 7, np.zeros((2, 3), dtype=np.int64)])
def test_ids_that_are_not_a_token_list_are_refused(ids):
    with pytest.raises(ValueError, match="ids must be a list or 1-D array of token ids"):
        chunk_ids(ids, 4, 1)
