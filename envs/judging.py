"""`TeachesJudging`: the opt-in protocol of an environment that teaches the critic its checks.

The embedded default's warm-start (k2rl.bootstrap) shows its policy-as-critic scripted
judgments before RL, as K2 bootstraps its critic in SFT: on a training-split prompt, the
expert's answer against a plausible wrong one, the critic's own answer, one check line per
answer and the verdict (k2rl.step.critic_demos). An environment takes part by declaring it,
``class ChatEnv(TextEnv, TeachesJudging)``, and implementing the three scripts below besides
`TextEnv.expert_action` (whose answer is the chosen one); the rest of k2rl asks
``isinstance(env, TeachesJudging)``. The scripts read the answer key and are used
on training-split prompts only; at judging time the own answer (written as the policy) and the
checks are the model's own tokens. An environment that does not opt in is trained and judged
all the same; only the warm-start's scripted judgments leave it out. (`judge_working` and
`judge_check` keep the critic's old name: they are the embedded default's scripted checks.)

Where a check line follows from what the critic saw and wrote (the question, the response and
its own answer), the env also sets ``corrects_checks = True`` and gives that line through
``check_against`` or ``check_from``: with `critic.correct_checks` the critic's refresh trains
the critic on it in place of its own where they differ (k2rl.step.critic_loop.critic_examples).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np


class TeachesJudging(ABC):
    """A mixin for a `TextEnv` whose scripted expert also teaches the critic (module doc)."""

    # True where `check_from` gives the check line from the question, the response and the
    # critic's own answer alone (arithmetic's result, chat's fact, an instruction's constraints);
    # False where the check needs the problem (a tool call's product).
    corrects_checks: ClassVar[bool] = False

    @abstractmethod
    def judge_working(self) -> str:
        """The critic's own answer to the current question, as the policy writes its first
        turn (a sum's columns, the tool call, the fact): the skill the policy has."""

    @abstractmethod
    def judge_check(self, response: str) -> str:
        """One check line of ``response`` (the transcript after the prompt, turns joined by
        " | ") against the own answer, ending ": yes" if it is right and ": no" if not."""

    @abstractmethod
    def rejected_response(self, rng: np.random.Generator) -> str:
        """A plausible wrong response transcript to the current question."""

    @classmethod
    def check_against(cls, response: str, own: str) -> str | None:
        """The check line of ``response`` against the critic's own answer ``own`` where it
        follows from those two texts alone (a result or a fact compared a character at a
        time); None where it needs the problem (a tool call's product, an instruction's
        constraints)."""
        return None

    def check_from(self, question: str, response: str, own: str) -> str | None:
        """The check line of ``response`` the critic should have written from what it saw (the
        question) and wrote (its own answer ``own``), for critic.correct_checks:
        `check_against` here; an env whose checks read the question (an instruction's
        constraints) overrides it. None where the line does not follow from those texts."""
        return self.check_against(response, own)
