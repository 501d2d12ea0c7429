"""Echo: the user says a short word, the model must say it back. Reward 1 for an exact echo.

The env only draws problems; scoring is the verifier its `reward_name` names (`exact_text`,
registered by this package's `__init__`), called by `TextEnv` with the reply and the problem's
`answer`.
"""
import numpy as np

from envs.base import Problem, TextEnv

WORDS = ["cat", "dog", "sun", "red", "map", "cup", "hat", "pen", "box", "key", "owl", "fig"]


class EchoEnv(TextEnv):
    task = "echo"
    budget = 8
    max_turns = 1
    reward_name = "exact_text"  # registered in k2rl_example_env/__init__.py

    def _draw(self) -> Problem:
        a, b = self.np_random.choice(WORDS, size=2)
        word = f"{a}{b}"
        return Problem(key=f"echo:{word}", prompt=f"say {word}", answer=word)

    def _step(self, action: str) -> None:
        return None  # every action is the final answer

    def expert_action(self, rng: np.random.Generator) -> str:
        return self.problem.answer
