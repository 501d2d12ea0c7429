"""Labelled pairs (a prompt, a chosen and a rejected response) for the critic's closed loop
and its evaluation.

K2 (sec. 3.2.2) grounds the critic in verifiable outcomes: on-policy rollouts whose rewards are
known become critic training signal (the correct response should win). K2 leaves the update
rule open; here a group with mixed outcomes gives pairs (`pairs_from_group`), and a pair is
judged as a `Comparison` (chosen first, `comparison_of`), in both orders; the engine turns the
judgments into training examples (k2rl.step.critic_loop.critic_examples).

Pairs files are JSONL, one pair a line:
    {"prompt": str, "chosen": str, "rejected": str, "task": str (optional),
     "rubric": str (optional: the one rubric the pair is labelled by),
     "rationale": str (optional: for critic SFT, the critic's reasoning to learn before its
                       verdict; it is shown in both orders, so it names no position)}
A malformed line is reported with its file and number; a file with no pairs is an error
(an evaluation over nothing would otherwise print 100%).

A pair's split is a hash of its prompt, so a prompt's pairs never straddle train and held-out.
"""
from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from critic.compare import Comparison
from critic.rubrics import Rubric, rubric_named, rubrics_for

REQUIRED = ("prompt", "chosen", "rejected")
OPTIONAL = ("task", "rubric", "rationale")
HELDOUT_PERCENT = 20
# Salted so the critic's split is independent of any other hash-of-text split in k2rl.
SPLIT_SALT = "k2rl-critic-pairs:"
PAIRS_PER_GROUP = 4


class PairsError(ValueError):
    """A bad pairs file or line; the message names the file and the line."""


@dataclass(frozen=True)
class Pair:
    prompt: str
    chosen: str  # the better response
    rejected: str
    task: str | None = None
    rubric: str | None = None  # None: judged by every rubric that applies to the task
    rationale: str | None = None  # critic SFT's target reasoning (k2rl.step.critic_sft); never shown

    def to_json(self) -> dict:
        row = {"prompt": self.prompt, "chosen": self.chosen, "rejected": self.rejected}
        row.update({k: getattr(self, k) for k in OPTIONAL if getattr(self, k) is not None})
        return row

    @classmethod
    def from_json(cls, row: dict) -> Pair:
        """The pair of a `to_json` dict (a missing optional field is None), as stored in a
        run's Redis. Unlike `parse_pair` (a user's pairs file, checked strictly) it reads back
        what k2rl itself wrote, so it does not re-check the values, and it drops keys that Pair
        lacks: every writer so far stored `to_json()` (so there are none in any run), and a
        key a later version adds must not make an older reader fail on that run's pairs."""
        missing = [k for k in REQUIRED if k not in row]
        if missing:
            raise ValueError(f"a stored pair needs {', '.join(missing)}; got keys {sorted(row)}")
        return cls(**{k: row[k] for k in REQUIRED + OPTIONAL if k in row})


def parse_pair(line: str, where: str) -> Pair:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as e:
        raise PairsError(f"{where} is not valid JSON: {e.msg}") from None
    if not isinstance(row, dict):
        raise PairsError(f"{where} must be a JSON object with prompt, chosen and rejected")
    for key in row:
        if key not in REQUIRED + OPTIONAL:
            close = difflib.get_close_matches(str(key), REQUIRED + OPTIONAL, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise PairsError(f"{where} has unknown key {key}{hint}")
    for key in REQUIRED:
        if not isinstance(row.get(key), str):
            raise PairsError(f"{where} needs {key} as a string")
    for key in OPTIONAL:
        if key in row and not (isinstance(row[key], str) and row[key]):
            raise PairsError(f"{where} needs {key}, when given, as a non-empty string")
    if row["chosen"] == row["rejected"]:
        raise PairsError(f"{where} has the same text as chosen and rejected")
    return Pair(row["prompt"], row["chosen"], row["rejected"], row.get("task"), row.get("rubric"),
                row.get("rationale"))


def read_pairs(path: str | Path) -> list[Pair]:
    """The pairs of a JSONL file, checked line by line; blank lines are skipped."""
    path = Path(path)
    if not path.exists():
        raise PairsError(f"pairs file {path} does not exist")
    pairs = [parse_pair(line, f"line {n} of {path}")
             for n, line in enumerate(path.read_text().splitlines(), start=1) if line.strip()]
    if not pairs:
        raise PairsError(f"pairs file {path} has no pairs")
    return pairs


def write_pairs(path: str | Path, pairs: list[Pair]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(p.to_json()) + "\n" for p in pairs))
    return path


def _unique(texts: list[str]) -> list[str]:
    return list(dict.fromkeys(texts))  # first occurrence order, so the result is deterministic


def pairs_from_group(prompt: str, responses: list[str], correct: list[bool],
                     task: str | None = None, cap: int = PAIRS_PER_GROUP) -> list[Pair]:
    """Pairs from one verifiable group: each correct response beats each incorrect one.

    Duplicate texts count once (a group often repeats its answer). At most `cap` pairs, taken
    diagonal by diagonal (correct c with incorrect (c + offset) mod n), so a capped group uses
    as many different responses as it can rather than one correct answer against all. A group
    with no mixed outcome gives no pair.
    """
    if len(responses) != len(correct):
        raise ValueError(f"{len(responses)} responses but {len(correct)} outcomes")
    if cap < 0:
        raise ValueError(f"cap must be at least 0, got {cap}")
    good = _unique([r for r, ok in zip(responses, correct) if ok])
    bad = [r for r in _unique([r for r, ok in zip(responses, correct) if not ok])
           if r not in good]  # a text both right and wrong (multi-turn context) teaches nothing
    order = [(c, (c + off) % len(bad)) for off in range(len(bad)) for c in range(len(good))]
    return [Pair(prompt, good[c], bad[w], task) for c, w in order[:cap]]


def split_of_pair(pair: Pair) -> str:
    """"heldout" for about HELDOUT_PERCENT% of prompts, "train" for the rest; by prompt alone."""
    digest = int(hashlib.sha256((SPLIT_SALT + pair.prompt).encode()).hexdigest(), 16)
    return "heldout" if digest % 100 < HELDOUT_PERCENT else "train"


def pair_rubrics(pair: Pair, rubrics: list[Rubric]) -> list[Rubric]:
    """The rubrics a pair is judged by: its own named rubric, or all that apply to its task."""
    return [rubric_named(pair.rubric, rubrics)] if pair.rubric else rubrics_for(pair.task, rubrics)


def comparison_of(pair: Pair, rubrics: list[Rubric]) -> Comparison:
    """The pair as the critic sees it: the chosen response first (the critic reads both orders)."""
    return Comparison(pair.prompt, pair.chosen, pair.rejected, tuple(pair_rubrics(pair, rubrics)),
                      pair.task)
