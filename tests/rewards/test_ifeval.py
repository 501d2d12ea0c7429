"""rewards.ifeval's cost on long and hostile replies (issue 29); agreement is in
test_ifeval_agreement.py."""

from __future__ import annotations

import re
import time

import pytest

from rewards.ifeval import CHECKERS, MAX_CHARS, _placeholders, check

KWARGS = {
    "keywords": ["red"], "keyword": "red", "frequency": 2, "relation": "less than",
    "forbidden_words": ["red"], "letter": "a", "let_frequency": 2, "let_relation": "less than",
    "num_sentences": 2, "num_paragraphs": 2, "num_words": 10, "nth_paragraph": 1,
    "first_word": "red", "num_placeholders": 1, "postscript_marker": "P.S.", "num_bullets": 2,
    "num_highlights": 2, "section_spliter": "Section", "num_sections": 2,
    "prompt_to_repeat": "red", "end_phrase": "red", "capital_frequency": 2,
    "capital_relation": "less than",
}
# langdetect's kinds are left out: their cost is langdetect's (a bounded sample of n-grams).
KINDS = [kind for kind in CHECKERS if "language" not in kind and "english" not in kind]


def test_capital_word_frequency_on_64k_bangs_is_cheap() -> None:
    """Before: 5.7-8.9 s (nltk's tokenizer on 64k one-character sentences)."""
    start = time.perf_counter()
    assert not check("change_case:capital_word_frequency", "!" * 65536,
                     {"capital_frequency": 3, "capital_relation": "at least"})
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize("flood", ["!" * 31000, "A!" * 15500, "[" * 31000, "A. " * 10000,
                                   "{" * 31000, "x\n\n" * 10000])
def test_every_kind_is_cheap_below_the_cap(flood: str) -> None:
    """Before: number_placeholders on 30k "[" took 82 s (``\\[.*?\\]`` retried per "[")."""
    assert len(flood) <= MAX_CHARS
    check("change_case:capital_word_frequency", "warm UP", KWARGS)  # nltk's import aside
    start = time.perf_counter()
    for kind in KINDS:
        check(kind, flood, KWARGS)
    assert time.perf_counter() - start < 5.0  # about 0.3 s on an idle machine


def test_a_reply_over_the_cap_follows_nothing() -> None:
    long = "red " * (MAX_CHARS // 4 + 1)
    assert not check("keywords:existence", long, {"keywords": ["red"]})
    assert check("keywords:existence", long[:MAX_CHARS], {"keywords": ["red"]})


def test_placeholder_count_is_ifevals() -> None:
    texts = ["[a] [b]", "[[a]]", "[a\n] [b]", "] [a", "[" * 50 + "]", "[a] [", "", "[]"]
    assert [_placeholders(t) for t in texts] == [len(re.findall(r"\[.*?\]", t)) for t in texts]
