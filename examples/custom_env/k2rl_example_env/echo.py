"""Echo: the user says a short word, the model must say it back. Reward 1 for an exact echo.

A single-turn environment is one method: `_draw` gives a problem; every reply is the final
answer, scored by the verifier its `reward_name` names (`exact_text`, registered by this
package's `__init__`), which `TextEnv` calls with the reply and the problem's `answer`.
"""
from envs.base import Problem, TextEnv

WORDS = ["cat", "dog", "sun", "red", "map", "cup", "hat", "pen", "box", "key", "owl", "fig"]


class EchoEnv(TextEnv):
    task, budget, max_turns, reward_name = "echo", 8, 1, "exact_text"

    def _draw(self) -> Problem:
        word = "".join(self.np_random.choice(WORDS, size=2))
        return Problem(key=f"echo:{word}", prompt=f"say {word}", answer=word)
