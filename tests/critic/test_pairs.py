"""Tests for labelled pairs: the JSONL format, pairs from verifiable groups, the split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from critic.pairs import (Pair, PairsError, comparison_of, pairs_from_group, read_pairs,
                          split_of_pair, write_pairs)
from critic.rubrics import Rubric, RubricError

RUBRICS = [Rubric("clear", "core", "Clear."), Rubric("short", "task", "Short.", ["chat"])]


def test_read_pairs_round_trips(tmp_path: Path) -> None:
    pairs = [Pair("q", "good", "bad"),
             Pair("hi", "Hello.", "Great question! Hello.", "chat", "short")]
    path = write_pairs(tmp_path / "p.jsonl", pairs)
    assert read_pairs(path) == pairs
    first = json.loads(path.read_text().splitlines()[0])
    assert first == {"prompt": "q", "chosen": "good", "rejected": "bad"}


def test_from_json_reads_back_to_json_and_drops_keys_pair_lacks() -> None:
    pairs = [Pair("q", "good", "bad"), Pair("hi", "Hello.", "Hi!!", "chat", "short")]
    assert [Pair.from_json(p.to_json()) for p in pairs] == pairs
    assert Pair.from_json({"prompt": "q", "chosen": "a", "rejected": "b", "step": 3}) == \
        Pair("q", "a", "b")
    with pytest.raises(ValueError, match="needs prompt, rejected"):
        Pair.from_json({"chosen": "a"})


@pytest.mark.parametrize(("line", "pattern"), [
    ("{not json", r"line 2 of .*p\.jsonl is not valid JSON"),
    ('["a"]', r"line 2 of .*p\.jsonl must be a JSON object"),
    ('{"prompt": "q", "chosen": "a"}', r"line 2 of .*p\.jsonl needs rejected as a string"),
    ('{"prompt": "q", "chosen": "a", "rejected": 3}', r"needs rejected as a string"),
    ('{"prompt": "q", "chosen": "a", "rejected": "b", "taks": "chat"}',
     r"unknown key taks; did you mean task\?"),
    ('{"prompt": "q", "chosen": "a", "rejected": "b", "task": ""}', r"needs task, when given"),
    ('{"prompt": "q", "chosen": "a", "rejected": "a"}', r"same text as chosen and rejected"),
])
def test_malformed_line_names_file_and_line(tmp_path: Path, line: str, pattern: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"prompt": "q", "chosen": "a", "rejected": "b"}\n' + line + "\n")
    with pytest.raises(PairsError, match=pattern):
        read_pairs(path)


def test_empty_or_missing_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text("\n  \n")
    with pytest.raises(PairsError, match="has no pairs"):
        read_pairs(path)
    with pytest.raises(PairsError, match="does not exist"):
        read_pairs(tmp_path / "none.jsonl")


def test_pairs_from_group_puts_correct_over_incorrect() -> None:
    pairs = pairs_from_group("2+2=", ["4", "5", "4", "3"], [True, False, True, False], "arithmetic")
    assert [(p.chosen, p.rejected) for p in pairs] == [("4", "5"), ("4", "3")]  # "4" counted once
    assert all(p.task == "arithmetic" and p.rubric is None for p in pairs)


def test_pairs_from_group_without_mixed_outcomes_is_empty() -> None:
    assert pairs_from_group("q", ["a", "b"], [True, True]) == []
    assert pairs_from_group("q", ["a", "b"], [False, False]) == []
    assert pairs_from_group("q", [], []) == []
    with pytest.raises(ValueError, match="2 responses but 1 outcomes"):
        pairs_from_group("q", ["a", "b"], [True])


def test_pairs_from_group_cap_is_deterministic_and_spreads_responses() -> None:
    responses = ["c0", "c1", "c2", "c3", "w0", "w1", "w2", "w3"]
    correct = [True] * 4 + [False] * 4
    pairs = pairs_from_group("q", responses, correct)
    assert [(p.chosen, p.rejected) for p in pairs] == [
        ("c0", "w0"), ("c1", "w1"), ("c2", "w2"), ("c3", "w3")]
    assert pairs == pairs_from_group("q", responses, correct)
    full = pairs_from_group("q", responses, correct, cap=100)
    assert len({(p.chosen, p.rejected) for p in full}) == 16


def test_split_is_by_prompt_and_about_a_fifth_heldout() -> None:
    prompts = [f"{a}+{b}=" for a in range(40) for b in range(25)]
    splits = {q: split_of_pair(Pair(q, "x", "y")) for q in prompts}
    for q in prompts[:50]:  # other responses and tasks never move a prompt
        assert split_of_pair(Pair(q, "other", "answers", "chat", "clear")) == splits[q]
    train = {q for q, s in splits.items() if s == "train"}
    heldout = {q for q, s in splits.items() if s == "heldout"}
    assert not train & heldout and len(train) + len(heldout) == len(prompts)
    assert 0.15 < len(heldout) / len(prompts) < 0.25


def test_a_pair_is_judged_chosen_first_by_its_rubrics() -> None:
    c = comparison_of(Pair("hi", "Hello.", "Great question!", "chat"), RUBRICS)
    assert (c.prompt, c.first, c.second, c.task) == ("hi", "Hello.", "Great question!", "chat")
    assert [r.name for r in c.rubrics] == ["clear", "short"]
    named = comparison_of(Pair("hi", "a", "b", "chat", "short"), RUBRICS)
    assert [r.name for r in named.rubrics] == ["short"]
    with pytest.raises(RubricError, match="unknown rubric 'shrt'"):
        comparison_of(Pair("hi", "a", "b", "chat", "shrt"), RUBRICS)
