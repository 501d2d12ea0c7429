"""Reward verifiers, looked up by name.

Configs and environments name their verifier with a string (an env's
``reward_name``), so rewards live in one flat registry: ``REWARDS`` maps a name
to a batched verifier ``fn(responses, answers) -> list[float]``.

Verifiers that score an answer (math_equiv, exact_int, final_int, exact_match,
multiple_choice, countdown) read it with one extractor, ``rewards.extract.final_answer``:
the final answer a grader would read, the working before it unscored; each takes the
answer format as ``fmt`` ("auto" by default).

A verifier whose cost a reply could blow up runs its work under a hard time limit
(``rewards.deadline.within``, a worker process killed at the limit: ``math_equiv`` does);
timed-out calls score 0 and are counted in ``rewards.deadline.TIMEOUTS``.
"""

from __future__ import annotations

import difflib
from typing import Callable

from rewards.arithmetic import exact_int, final_int, parse_int
from rewards.chat import chat_reference
from rewards.code import unit_tests
from rewards.describe import describe_reference
from rewards.ifeval import ifeval_following
from rewards.instructions import instruction_following
from rewards.logic import countdown, sudoku
from rewards.math import math_equiv
from rewards.text import exact_match, multiple_choice

Reward = Callable[[list[str], list], list[float]]

REWARDS: dict[str, Reward] = {}


def register_reward(name: str, fn: Reward) -> Reward:
    """Add ``fn`` under ``name``; refuse to silently replace another verifier."""
    if name in REWARDS:
        raise ValueError(f"reward {name!r} is already registered")
    REWARDS[name] = fn
    return fn


def takes_question(fn: Reward) -> bool:
    """Whether a verifier reads the question too (``questions=``: ``math_equiv``'s echo rule)."""
    import inspect

    return "questions" in inspect.signature(fn).parameters


def takes_format(fn: Reward) -> bool:
    """Whether a verifier reads a final answer in a format (``fmt=``: rewards.extract)."""
    import inspect

    return "fmt" in inspect.signature(fn).parameters


def get_reward(name: str) -> Reward:
    """The verifier registered as ``name``; a typo gets the closest names."""
    try:
        return REWARDS[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(REWARDS))
        hint = f"did you mean {close}?" if close else f"registered: {sorted(REWARDS)}"
        raise KeyError(f"unknown reward {name!r}; {hint}") from None


register_reward("exact_int", exact_int)
register_reward("final_int", final_int)
register_reward("math_equiv", math_equiv)
register_reward("countdown", countdown)
register_reward("sudoku", sudoku)
register_reward("instruction_following", instruction_following)
register_reward("ifeval", ifeval_following)
register_reward("unit_tests", unit_tests)
register_reward("chat_reference", chat_reference)
register_reward("describe_reference", describe_reference)
register_reward("exact_match", exact_match)
register_reward("multiple_choice", multiple_choice)

__all__ = ["REWARDS", "Reward", "chat_reference", "countdown", "describe_reference", "exact_int", "exact_match",
           "final_int", "get_reward", "ifeval_following", "instruction_following", "math_equiv",
           "multiple_choice", "parse_int", "register_reward", "sudoku", "takes_format", "takes_question", "unit_tests"]
