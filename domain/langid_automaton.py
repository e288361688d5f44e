"""py3langid's byte automaton held as the trie it was built from: about 1.3 MB where the
library's table of every transition is 39 MB, for the same walk over a text's bytes.

The library walks an Aho-Corasick automaton with every transition written out (`tk_nextmove`:
38,346 rows of 256 states, a row shared by the states that move alike, `tk_row` naming each
state's). The same moves follow from the trie, each state's own edges, and each state's
failure link: a byte without an edge of its own moves as it would from the failure state. Both
are read off the full table once, when the model is loaded (half a second, with numpy): a
state's depth is its distance from the root, an edge of the trie is a move one deeper, and a
state's failure is where its parent's failure moves on the edge's byte; then every move they
make is checked against the table's, and a table they do not reproduce is kept as it is.

A move then costs a few lookups (0.65 µs a byte, 0.08 with the full table): nothing for what is
detected (a question, a report's first 2,000 characters, 400 characters of a file), and 38 MB
less in every process, which holds the model from its first run to its last.
"""

from __future__ import annotations

from array import array

import numpy as np

_CHUNK = 2048  # states whose rows are looked at together: 2 MB of moves at a time
_UNSIGNED = "BHILQ"  # the typecodes of arrays of unsigned ints


class TrieMoves:
    """The automaton's moves by the trie and its failure links, indexed as the library indexes
    its table: `moves[(state << 8) + byte]` is the state after `byte`."""

    __slots__ = ("_children", "_edge_bytes", "_failure", "_from_root", "_starts")

    def __init__(
        self,
        starts: array,
        edge_bytes: bytes,
        children: array,
        failure: array,
        from_root: tuple[int, ...],
    ) -> None:
        self._starts, self._edge_bytes, self._children = starts, edge_bytes, children
        self._failure, self._from_root = failure, from_root

    def __getitem__(self, index: int) -> int:
        state, letter = index >> 8, index & 255
        starts, find = self._starts, self._edge_bytes.find
        while state:
            edge = find(letter, starts[state], starts[state + 1])
            if edge >= 0:
                return self._children[edge]
            state = self._failure[state]
        return self._from_root[letter]


def trie_moves(nextmove: array, rows: array) -> tuple[TrieMoves, range] | None:
    """The trie's moves and the row offsets that index them (`(state << 8)`, as a range), from
    the library's full table and each state's row; None when the table is not an Aho-Corasick
    automaton's (a later py3langid may build another), which is then kept as it is."""
    if not (isinstance(nextmove, array) and nextmove.typecode in _UNSIGNED and len(rows)):
        return None
    if len(nextmove) % 256 or len(nextmove) // 256 <= max(rows):
        return None
    table = np.frombuffer(nextmove, dtype=np.dtype(f"u{nextmove.itemsize}")).reshape(-1, 256)
    row_of = np.asarray(rows, dtype=np.int64)
    states = len(row_of)
    depth = _depths(table, row_of)
    if depth is None:
        return None
    parents, letters, children = _trie_edges(table, row_of, depth)
    if len(children) != states - 1 or len(np.unique(children)) != states - 1:
        return None
    failure = _failures(table, row_of, depth, parents, letters, children)
    if not _moves_agree(table, row_of, failure, parents, letters, children):
        return None
    moves = TrieMoves(
        starts=array("I", np.searchsorted(parents, np.arange(states + 1)).astype(np.uint32)),
        edge_bytes=letters.astype(np.uint8).tobytes(),
        children=array("I", children.astype(np.uint32)),
        failure=array("I", failure.astype(np.uint32)),
        from_root=tuple(int(s) for s in table[row_of[0]]),
    )
    return moves, range(0, states << 8, 256)


def _depths(table: np.ndarray, row_of: np.ndarray) -> np.ndarray | None:
    """Each state's distance from the root, level by level (a string of n bytes is reached
    in no fewer than n moves); None if some state is never reached."""
    depth = np.full(len(row_of), -1, dtype=np.int32)
    depth[0], level, frontier = 0, 0, np.zeros(1, dtype=np.int64)
    while len(frontier):
        level += 1
        found = []
        for at in range(0, len(frontier), _CHUNK):
            reached = table[np.unique(row_of[frontier[at : at + _CHUNK]])].ravel()
            new = np.unique(reached[depth[reached] < 0])
            depth[new] = level
            found.append(new)
        frontier = np.concatenate(found).astype(np.int64)
    return None if (depth < 0).any() else depth


def _trie_edges(
    table: np.ndarray, row_of: np.ndarray, depth: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The trie's edges, as parent, byte and child, ordered by parent and byte: the moves that
    go one deeper."""
    parents, letters, children = [], [], []
    for start in range(0, len(row_of), _CHUNK):
        state = np.arange(start, min(len(row_of), start + _CHUNK))
        reached = table[row_of[state]]
        rows, letter = np.nonzero(depth[reached] == depth[state][:, None] + 1)
        parents.append(state[rows])
        letters.append(letter)
        children.append(reached[rows, letter])
    parents, letters, children = (np.concatenate(p) for p in (parents, letters, children))
    order = np.lexsort((letters, parents))
    return parents[order], letters[order], children[order].astype(np.int64)


def _moves_agree(
    table: np.ndarray,
    row_of: np.ndarray,
    failure: np.ndarray,
    parents: np.ndarray,
    letters: np.ndarray,
    children: np.ndarray,
) -> bool:
    """Whether the trie and its failure links make every move of every state as the table
    does (a state's own edges, else its failure state's move): checked whole, 0.2 s."""
    for start in range(1, len(row_of), _CHUNK):
        state = np.arange(start, min(len(row_of), start + _CHUNK))
        derived = table[row_of[failure[state]]]
        first, last = np.searchsorted(parents, [state[0], state[-1] + 1])
        derived[parents[first:last] - start, letters[first:last]] = children[first:last]
        if not np.array_equal(derived, table[row_of[state]]):
            return False
    return True


def _failures(
    table: np.ndarray,
    row_of: np.ndarray,
    depth: np.ndarray,
    parents: np.ndarray,
    letters: np.ndarray,
    children: np.ndarray,
) -> np.ndarray:
    """Each state's failure link, shallowest first: the root's children fail to the root, any
    other state to where its parent's failure moves on its byte."""
    failure = np.zeros(len(row_of), dtype=np.int64)
    parent_of = np.zeros(len(row_of), dtype=np.int64)
    letter_of = np.zeros(len(row_of), dtype=np.int64)
    parent_of[children], letter_of[children] = parents, letters
    for level in range(2, int(depth.max()) + 1):
        state = np.nonzero(depth == level)[0]
        failure[state] = table[row_of[failure[parent_of[state]]], letter_of[state]]
    return failure
