"""Two-digit sums and differences asked in words, for a pretrained chat model
("k2rl/WordSums-v0").

``"What is 47 plus 38? Put your final answer within \\boxed{}."`` -> ``85``. Operands are
10..99 and a difference is never negative. The question comes in several phrasings; the
problem's identity (the key) is the operation and its operands, a sum's in ascending order, so
every phrasing of one problem, and a sum in either order, falls in the same split. The reply
is scored by ``math_equiv`` on its final answer (``\\boxed{}``, "the answer is", or the last
number), so a model may show its working first, as real models do.

>>> env = WordSumsEnv()
>>> prompt, info = env.reset(seed=3)
>>> prompt
'Calculate 82 + 88. Put your final answer within \\\\boxed{}.'
>>> env.step("82 + 88 = 170, so the answer is \\\\boxed{170}.")[1]
1.0
"""

from __future__ import annotations

import numpy as np

from envs.base import Problem, TextEnv

LOW, HIGH = 10, 99
SUMS = ("What is {a} plus {b}?", "What is {a} + {b}?", "Calculate {a} + {b}.",
        "Add {a} and {b}.", "What is the sum of {a} and {b}?")
DIFFERENCES = ("What is {a} minus {b}?", "What is {a} - {b}?", "Calculate {a} - {b}.",
               "Subtract {b} from {a}.", "How much is {a} take away {b}?")
ASK = " Put your final answer within \\boxed{}."


class WordSumsEnv(TextEnv):
    """One question, one reply; `math_equiv` reads the reply's final answer."""

    task = "word_sums"
    budget = 160
    max_turns = 1
    reward_name = "math_equiv"

    def _draw(self) -> Problem:
        rng = self.np_random
        a, b = (int(x) for x in rng.integers(LOW, HIGH + 1, size=2))
        if rng.random() < 0.5:
            forms, key, answer = SUMS, f"{min(a, b)}+{max(a, b)}", a + b
        else:
            a, b = max(a, b), min(a, b)
            forms, key, answer = DIFFERENCES, f"{a}-{b}", a - b
        form = forms[int(rng.integers(len(forms)))]
        return Problem(key, form.format(a=a, b=b) + ASK, str(answer))

    def expert_action(self, rng: np.random.Generator) -> str:
        problem = self._require_active()
        a, op, b = problem.key.partition("+") if "+" in problem.key else problem.key.partition("-")
        return f"{a} {op} {b} = {problem.answer}. The answer is \\boxed{{{problem.answer}}}."
