"""The example's verifier: a batched function ``(responses, answers) -> list[float]``, as every
k2rl verifier is (rewards/). k2rl calls it with one reply and its problem's ``answer``."""


def exact_text(responses: list[str], answers: list) -> list[float]:
    """1.0 where the reply, without surrounding whitespace, is the answer exactly.

    >>> exact_text(["catdog", " catdog\\n", "CatDog", "say catdog"], ["catdog"] * 4)
    [1.0, 1.0, 0.0, 0.0]
    """
    if len(responses) != len(answers):
        raise ValueError(f"exact_text got {len(responses)} responses but {len(answers)} answers")
    return [float(isinstance(response, str) and response.strip() == str(answer))
            for response, answer in zip(responses, answers)]
