"""A regex tree -> a Thompson NFA -> a DFA by subset construction, over characters.

NFA (Thompson, 1968): each node becomes a fragment with one entry and one exit state, joined
by ε-edges; a labelled edge reads one character from a set (ranges, so ``.`` is one edge).

    Chars c      s --c--> e                 Concat a b    a.exit --ε--> b.entry
    Alt a|b      s --ε--> a, b --ε--> e     Repeat x{m,n} m copies, then n-m optional ones
                                            (x* : s --ε--> x --ε--> s, s --ε--> e)

DFA (subset construction, Rabin & Scott 1959): a DFA state is the ε-closure of a set of NFA
states; from it, character c leads to closure({t : s --C--> t, s in the set, c in C}). The
characters are cut into intervals on which every edge agrees (the edges' ends are the cuts), so
the work is per interval, not per character. Example: ``[0-9]{1,3}`` -> 4 states, start 0,
accepting {1, 2, 3}, each with one edge (48, 57) to the next.
"""
from __future__ import annotations

from dataclasses import dataclass

from .regex import Alt, Chars, Concat, Repeat

MAX_NFA_STATES = 200_000        # bounds the memory a pattern may take (x{1000}{...} nests)
MAX_DFA_STATES = 20_000


@dataclass
class NFA:
    epsilon: list               # state -> [states reached reading nothing]
    edges: list                 # state -> [(ranges, state)]: one character in ranges
    start: int = 0
    accept: int = 0

    def new_state(self) -> int:
        if len(self.epsilon) >= MAX_NFA_STATES:
            raise ValueError(f"the regex is too large: over {MAX_NFA_STATES} automaton states "
                             f"(lower the {{m,n}} counts)")
        self.epsilon.append([])
        self.edges.append([])
        return len(self.epsilon) - 1


def build_nfa(tree) -> NFA:
    """The Thompson NFA of a regex tree (one start, one accepting state)."""
    nfa = NFA([], [])
    nfa.start, nfa.accept = fragment(nfa, tree)
    return nfa


def fragment(nfa: NFA, node) -> tuple[int, int]:
    """Add the states of `node` to `nfa`; return its (entry, exit)."""
    if isinstance(node, Chars):
        s, e = nfa.new_state(), nfa.new_state()
        nfa.edges[s].append((node.ranges, e))
        return s, e
    if isinstance(node, Concat):
        s = e = nfa.new_state()
        for part in node.parts:
            ps, pe = fragment(nfa, part)
            nfa.epsilon[e].append(ps)
            e = pe
        return s, e
    if isinstance(node, Alt):
        s, e = nfa.new_state(), nfa.new_state()
        for option in node.options:
            os_, oe = fragment(nfa, option)
            nfa.epsilon[s].append(os_)
            nfa.epsilon[oe].append(e)
        return s, e
    if isinstance(node, Repeat):
        s = e = nfa.new_state()
        for _ in range(node.lo):                    # the m required copies
            ps, pe = fragment(nfa, node.node)
            nfa.epsilon[e].append(ps)
            e = pe
        if node.hi is None:                         # then x*: a loop back
            loop = nfa.new_state()
            nfa.epsilon[e].append(loop)
            ps, pe = fragment(nfa, node.node)
            nfa.epsilon[loop].append(ps)
            nfa.epsilon[pe].append(loop)
            return s, loop
        end = nfa.new_state()                       # or n - m optional copies, each may stop
        for _ in range(node.hi - node.lo):
            nfa.epsilon[e].append(end)
            ps, pe = fragment(nfa, node.node)
            nfa.epsilon[e].append(ps)
            e = pe
        nfa.epsilon[e].append(end)
        return s, end
    raise TypeError(f"not a regex node: {node!r}")


def closure(nfa: NFA, states) -> frozenset:
    """Every NFA state reachable from `states` by ε-edges alone (the states themselves too)."""
    seen, todo = set(states), list(states)
    while todo:
        for t in nfa.epsilon[todo.pop()]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return frozenset(seen)


@dataclass
class CharDFA:
    edges: list                 # state -> [(lo, hi, state)]: sorted, disjoint intervals
    accepting: frozenset
    start: int = 0

    def step(self, state: int, ch: str) -> int | None:
        """The state after reading `ch` (None: no edge, the match failed)."""
        code = ord(ch)
        for lo, hi, target in self.edges[state]:
            if lo <= code <= hi:
                return target
        return None

    def fullmatch(self, text: str) -> bool:
        state = self.start
        for ch in text:
            state = self.step(state, ch)
            if state is None:
                return False
        return state in self.accepting


def intervals(labelled) -> list[tuple[int, int, frozenset]]:
    """[(ranges, target)] -> [(lo, hi, targets)]: the intervals on which the same edges apply.

    The cuts are every range's lo and hi + 1; between two cuts no range starts or ends, so
    one lookup per interval tells which targets it reaches. Adjacent intervals with the same
    targets are merged."""
    cuts = sorted({c for ranges, _ in labelled for lo, hi in ranges for c in (lo, hi + 1)})
    out: list[tuple[int, int, frozenset]] = []
    for lo, nxt in zip(cuts, cuts[1:]):
        targets = frozenset(t for ranges, t in labelled
                            if any(a <= lo <= b for a, b in ranges))
        if not targets:
            continue
        if out and out[-1][1] == lo - 1 and out[-1][2] == targets:
            out[-1] = (out[-1][0], nxt - 1, targets)
        else:
            out.append((lo, nxt - 1, targets))
    return out


def build_dfa(nfa: NFA) -> CharDFA:
    """Subset construction: DFA state k is the k-th distinct closure met, start first."""
    start = closure(nfa, [nfa.start])
    number, subsets, edges = {start: 0}, [start], []
    while len(edges) < len(subsets):
        subset = subsets[len(edges)]
        labelled = [edge for s in subset for edge in nfa.edges[s]]
        row = []
        for lo, hi, targets in intervals(labelled):
            target = closure(nfa, targets)
            if target not in number:
                if len(subsets) >= MAX_DFA_STATES:
                    raise ValueError(f"the regex is too large: over {MAX_DFA_STATES} DFA states")
                number[target] = len(subsets)
                subsets.append(target)
            row.append((lo, hi, number[target]))
        edges.append(row)
    accepting = frozenset(k for k, subset in enumerate(subsets) if nfa.accept in subset)
    return CharDFA(edges, accepting)
