"""One sentence on a topic under two of IFEval's constraints, for a pretrained chat model
("k2rl/ShortWriting-v0").

``"Write one sentence about the sea. Use only lowercase letters. Include the word \\"blue\\"."``
The constraints are IFEval instructions (lowercase only, fewer than N words, a keyword, no
commas, a closing phrase) in IFEval's wording, and the reply is scored by ``ifeval``
(rewards.ifeval, IFEval's own checks): the fraction of the constraints it follows, so one of
two earns 0.5 and `correct` needs both. The key is the topic with its constraints (in a fixed
order), so a held-out problem is never trained on with its constraints asked in another order.

>>> env = ShortWritingEnv()
>>> prompt, _ = env.reset(seed=0)
>>> prompt
'Write one sentence about a friend. Include the word "old". Finish your response with this exact phrase "That is all.". No other words should follow this phrase.'
>>> env.step("An old friend knows you well. That is all.")[1], env.reset(seed=0)[0] == prompt
(1.0, True)
>>> env.step("A friend knows you well. That is all.")[1]
0.5
"""

from __future__ import annotations

import numpy as np

from envs.base import Problem, TextEnv

TOPICS = ("the sea", "a cat", "coffee", "autumn", "a library", "the moon", "a garden", "rain",
          "a bicycle", "bread", "a river", "winter", "a dog", "music", "a mountain", "the sun",
          "a train", "snow", "an apple", "a forest", "the city", "a bird", "tea", "a bridge",
          "the desert", "a candle", "a clock", "the wind", "a boat", "a teacher", "the night",
          "a lake", "a farm", "a window", "the ocean", "a song", "chocolate", "a horse",
          "the spring", "a map", "a storm", "a school", "a friend", "a kitchen", "the stars",
          "a road", "an island", "a flower", "a market", "the morning")
KEYWORDS = ("blue", "quiet", "warm", "old", "bright", "small", "green", "happy", "slow", "soft")
ENDINGS = ("That is all.", "The end.", "Thank you.")
WORD_LIMITS = (8, 12, 16)
KINDS = ("lowercase", "words", "keyword", "no_comma", "ending")


def constraint(kind: str, rng: np.random.Generator) -> tuple[str, str, dict]:
    """(IFEval's wording, its instruction id, its kwargs) of one constraint."""
    if kind == "lowercase":
        return ("Use only lowercase letters.", "change_case:english_lowercase", {})
    if kind == "words":
        n = int(rng.choice(WORD_LIMITS))
        return (f"Answer with less than {n} words.", "length_constraints:number_words",
                {"num_words": n, "relation": "less than"})
    if kind == "keyword":
        word = str(rng.choice(KEYWORDS))
        return (f'Include the word "{word}".', "keywords:existence", {"keywords": [word]})
    if kind == "no_comma":
        return ("Do not use any commas.", "punctuation:no_comma", {})
    phrase = str(rng.choice(ENDINGS))
    return (f'Finish your response with this exact phrase "{phrase}". No other words should '
            "follow this phrase.", "startend:end_checker",
            {"end_phrase": phrase})


class ShortWritingEnv(TextEnv):
    """One request, one reply; `ifeval` scores the constraints it follows."""

    task = "short_writing"
    budget = 96
    max_turns = 1
    reward_name = "ifeval"

    def _draw(self) -> Problem:
        rng = self.np_random
        topic = str(rng.choice(TOPICS))
        kinds = sorted(rng.choice(len(KINDS), size=2, replace=False).tolist())
        parts = [constraint(KINDS[i], rng) for i in kinds]
        prompt = f"Write one sentence about {topic}. " + " ".join(text for text, _, _ in parts)
        answer = {"instruction_id_list": [i for _, i, _ in parts],
                  "kwargs": [kwargs for _, _, kwargs in parts]}
        return Problem(f"{topic}|" + " ".join(text for text, _, _ in parts), prompt, answer)

    def _step(self, action: str) -> None:
        return None  # every reply is the final answer

    def expert_action(self, rng: np.random.Generator) -> str:
        answer = self._require_active().answer
        words = ["this", "is", "it"]
        ending = ""
        for instruction, kwargs in zip(answer["instruction_id_list"], answer["kwargs"]):
            words += kwargs.get("keywords", [])
            ending = kwargs.get("end_phrase", ending)
        text = f"{' '.join(words)}. {ending}".strip()
        # IFEval's closing phrase matches in any case, so lowercase and an ending go together
        lowercase = "change_case:english_lowercase" in answer["instruction_id_list"]
        return text.lower() if lowercase else text
