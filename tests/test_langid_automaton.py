"""py3langid's automaton held as its trie: the same moves, counts and languages as the table."""

from __future__ import annotations

import random
from array import array

import pytest
from py3langid import langid
from py3langid.langid import MODEL_FILE, LanguageIdentifier

from deep_research.domain.langid_automaton import trie_moves


@pytest.fixture(scope="module")
def library():
    """The library's identifier with its full table, and the trie's moves read off it."""
    model = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    moves, rowbase = trie_moves(model.tk_nextmove, model.tk_row)
    return model, moves, rowbase


def test_every_state_moves_on_every_byte_as_the_librarys_table_says(library):
    model, moves, rowbase = library
    states = len(model.tk_row)
    sample = [0, 1, states - 1, *random.Random(7).sample(range(states), 1500)]
    for state in sample:
        base = model._rowbase[state]
        assert rowbase[state] == state << 8
        expected = model.tk_nextmove[base : base + 256].tolist()
        assert [moves[(state << 8) + letter] for letter in range(256)] == expected, state


TEXTS = [
    "Compare zstd and xz for log archives",
    "Wie unterscheiden sich zstd und xz bei der Archivierung von Logdateien?",
    "Comment zstd et xz se comparent-ils pour l'archivage des journaux ?",
    "Почему растут цены на электроэнергию в Европе?",
    "比较 zstd 和 xz 在日志归档中的表现",
    "ログのアーカイブに zstd と xz のどちらを使うべきか",
    "قارن بين zstd و xz",
    "SQLite WAL mode performance " * 40,
    "",
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_texts_features_and_language_are_the_librarys(library, text):
    model, moves, rowbase = library
    encoded = LanguageIdentifier._encode(text)
    table = langid.visit_counts(model.tk_nextmove, model._rowbase, model.tk_output, encoded)
    trie = langid.visit_counts(moves, rowbase, array("i", model.tk_output), encoded)
    assert trie == table
    compact = LanguageIdentifier(
        model.nb_ptc,
        model.nb_pc,
        model.nb_classes,
        moves,
        model.tk_output,
        norm_probs=True,
        tk_row=model.tk_row,
    )
    compact._rowbase = rowbase
    assert compact.rank(text) == model.rank(text)


def test_random_bytes_walk_alike(library):
    model, moves, rowbase = library
    rng = random.Random(11)
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
        table = langid.visit_counts(model.tk_nextmove, model._rowbase, model.tk_output, data)
        assert langid.visit_counts(moves, rowbase, model.tk_output, data) == table


def test_a_table_that_is_not_an_automatons_trie_is_left_as_it_is():
    # state 2 is never reached from the root: no trie to read off
    nextmove = array("I", [1] * 256 + [0] * 256 + [2] * 256)
    assert trie_moves(nextmove, array("H", [0, 1, 2])) is None
    # two moves one deeper into the same state: not a trie
    nextmove = array("I", [1, 1] + [0] * 254 + [0] * 256)
    assert trie_moves(nextmove, array("H", [0, 1])) is None
    # tables in another form: a list, rows of another width, a row past the table's end
    assert trie_moves([1] * 256 + [0] * 256, array("H", [0, 1])) is None
    assert trie_moves(array("I", [0] * 300), array("H", [0])) is None
    assert trie_moves(array("I", [0] * 256), array("H", [0, 1])) is None


def _dense_automaton(patterns: list[str]) -> tuple[list[str], array]:
    """A small Aho-Corasick automaton written out as py3langid writes its own: the states are
    the patterns' prefixes, shallowest first, and a state's move on a byte is the longest
    suffix of its string and that byte that is a state (one row per state)."""
    states = sorted({p[:n] for p in patterns for n in range(len(p) + 1)}, key=lambda s: (len(s), s))
    index = {state: number for number, state in enumerate(states)}
    moves = []
    for state in states:
        for byte in range(256):
            text = state + chr(byte)
            moves.append(next(index[text[k:]] for k in range(len(text) + 1) if text[k:] in index))
    return states, array("I", moves)


def test_a_small_automatons_trie_makes_every_move_its_table_makes():
    states, nextmove = _dense_automaton(["he", "she", "his", "hers"])
    moves, rowbase = trie_moves(nextmove, array("H", range(len(states))))
    for state in range(len(states)):
        for byte in range(256):
            assert moves[rowbase[state] + byte] == nextmove[state * 256 + byte]


def test_a_table_whose_moves_the_trie_does_not_make_is_left_as_it_is():
    states, nextmove = _dense_automaton(["he", "she", "his", "hers"])
    sh, h = states.index("sh"), states.index("h")
    assert nextmove[sh * 256 + ord("x")] == 0  # "shx" ends in no state: back to the root
    nextmove[sh * 256 + ord("x")] = h  # one move no trie with failure links makes
    assert trie_moves(nextmove, array("H", range(len(states)))) is None
