"""Random patterns from a small grammar, and texts over the same alphabet (ASCII, Latin-1, CJK,
a 4-byte emoji), for the properties of the regex compiler and the vocabulary index."""
from hypothesis import strategies as st

CHARS = ["a", "b", "c", "1", " ", "\n", "é", "中", "文", "😀", '"', "."]
ATOMS = ["a", "b", "c", "1", "é", "中", "😀", r"\.", '"', ".", r"\d", r"\w", r"\s", r"\D",
         "[ab]", "[^a]", "[a-c]", "[^\"\\\\]", "[é-中]", "[0-9_]", r"[\s\d]", "[^😀]"]
QUANTIFIERS = ["", "", "", "?", "*", "+", "{2}", "{0,2}", "{1,}", "{1,3}"]


def patterns():
    """Pattern texts: atoms, concatenations, alternations and groups, each maybe repeated."""
    atom = st.sampled_from(ATOMS)

    def grow(inner):
        group = inner.map(lambda p: f"(?:{p})") | inner.map(lambda p: f"({p})")
        repeated = st.tuples(group | atom, st.sampled_from(QUANTIFIERS)).map("".join)
        concat = st.lists(repeated, min_size=1, max_size=3).map("".join)
        return concat | st.lists(concat, min_size=2, max_size=3).map("|".join)

    return st.recursive(atom, grow, max_leaves=5)


def texts(max_size: int = 6):
    return st.lists(st.sampled_from(CHARS), max_size=max_size).map("".join)
