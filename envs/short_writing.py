"""One sentence on a topic under two of IFEval's constraints, for a pretrained chat model
("k2rl/ShortWriting-v1").

``"Write one sentence about the sea. Use only lowercase letters. Include the word \\"blue\\"."``
The constraints are IFEval instructions (lowercase only, fewer than N words, a keyword, no
commas, a closing phrase) in IFEval's wording, and the reply is scored by ``ifeval``
(rewards.ifeval, IFEval's own checks): the fraction of the constraints it follows, so one of
two earns 0.5 and `correct` needs both; but only if the reply is what the prompt asks for,
one sentence of at least 5 words that names the topic and does not repeat the request
(`rewards.ifeval.is_sentence_about`), else 0. v0 had no such check, and SmolLM2 learned in
twelve steps to answer "Thank you." or '"A lake"' (README, real-model run): IFEval's checks
alone are met by a reply that says nothing. A word limit of 8 is not drawn with a closing
phrase, so that both fit in a sentence. The key is the topic with its constraints (in a fixed
order), so a held-out problem is never trained on with its constraints asked in another order.

>>> env = ShortWritingEnv()
>>> prompt, _ = env.reset(seed=0)
>>> prompt
'Write one sentence about a friend. Include the word "old". Finish your response with this exact phrase "That is all.". No other words should follow this phrase.'
>>> env.step("An old friend knows you well. That is all.")[1], env.reset(seed=0)[0] == prompt
(1.0, True)
>>> env.step("A friend knows you well. That is all.")[1]
0.5
>>> env.reset(seed=0)[0] == prompt and env.step("An old friend. That is all.")[1]  # no sentence
0.0
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


MIN_WORDS = 5  # a sentence, less its closing phrase


def constraint(kind: str, rng: np.random.Generator, ending: bool = False
               ) -> tuple[str, str, dict]:
    """(IFEval's wording, its instruction id, its kwargs) of one constraint; ``ending``: a
    closing phrase is asked too (a word limit then leaves room for a sentence before it)."""
    if kind == "lowercase":
        return ("Use only lowercase letters.", "change_case:english_lowercase", {})
    if kind == "words":
        n = int(rng.choice(WORD_LIMITS[1:] if ending else WORD_LIMITS))
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


def topic_forms(topic: str) -> list[str]:
    """The words that name a topic: its noun, singular and plural.

    >>> topic_forms("the stars"), topic_forms("a library"), topic_forms("coffee")
    (['star', 'stars'], ['libraries', 'library'], ['coffee', 'coffees'])
    """
    noun = topic.split()[-1].lower()
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        forms = {noun, noun[:-1] + "ies"}
    elif noun.endswith("s"):
        forms = {noun, noun[:-1]}
    else:
        forms = {noun, noun + "s", noun + "es"} if noun.endswith(("sh", "ch", "x")) else {
            noun, noun + "s"}
    return sorted(forms)


class ShortWritingEnv(TextEnv):
    """One request, one reply; `ifeval` scores the constraints a sentence on the topic follows."""

    task = "short_writing"
    budget = 96
    max_turns = 1
    reward_name = "ifeval"

    def _draw(self) -> Problem:
        rng = self.np_random
        topic = str(rng.choice(TOPICS))
        kinds = sorted(rng.choice(len(KINDS), size=2, replace=False).tolist())
        ending = KINDS.index("ending") in kinds
        parts = [constraint(KINDS[i], rng, ending) for i in kinds]
        request = f"Write one sentence about {topic}."
        prompt = f"{request} " + " ".join(text for text, _, _ in parts)
        answer = {"instruction_id_list": [i for _, i, _ in parts],
                  "kwargs": [kwargs for _, _, kwargs in parts],
                  "sentence": {"about": topic_forms(topic), "min_words": MIN_WORDS,
                               "request": [request] + [text for text, _, _ in parts]}}
        return Problem(f"{topic}|" + " ".join(text for text, _, _ in parts), prompt, answer)

    def expert_action(self, rng: np.random.Generator) -> str:
        answer = self._require_active().answer
        noun = answer["sentence"]["about"][0]
        words = ["this", noun, "is", "here", "now"]
        ending = ""
        for instruction, kwargs in zip(answer["instruction_id_list"], answer["kwargs"]):
            words += kwargs.get("keywords", [])
            ending = kwargs.get("end_phrase", ending)
        text = f"{' '.join(words)}. {ending}".strip()
        # IFEval's closing phrase matches in any case, so lowercase and an ending go together
        lowercase = "change_case:english_lowercase" in answer["instruction_id_list"]
        return text.lower() if lowercase else text
