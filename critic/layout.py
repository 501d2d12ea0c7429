"""The judge's conversation, as chat messages: solve, check each answer, then the verdict.

K2 (sec. 3.2.2) has the policy compare its own responses against rubrics but does not say how
the judge reads a pair. A judge that answers with one verdict token stays at chance on pairs
whose correctness needs work (a sum, a word count; bench/README.md), so k2rl's judge works
the question out first, as generative verifiers (GenRM, arXiv 2408.15240), MT-Bench's
reference-guided math judge and Kimi k1.5's reasoning reward model do, but with its own
working, never the answer key:

    user:  Judge by: <rubrics>. Q: <question>
    judge: <its own working: the sum's columns, the call it would make, the constraints, the fact>
    user:  <first answer>
    judge: <check of the first answer against the working: "84 vs 85: no">
    user:  <second answer>
    judge: <check of the second answer>
    user:  Better: A (first) or B (second)?
    judge: A | B

The judge's turns are written by the model (the engine generates them, k2rl.self_critique);
this module only lays them out. An answer's check is generated once, right after its answer
as the first one shown, and reused in both orders, so it does not depend on the order or on
the other answer. The verdict is read as the log-probs of the two choice tokens after the last
user turn, in both orders. `JUDGE` marks the judge's turns; the engine maps it to a role of
the model's template (k2rl's own `<|critic|>`, else the assistant's).
"""
from __future__ import annotations

from critic.rubrics import Rubric

JUDGE = "judge"  # the judge's own turns; laid out in the model's critic or assistant role
VERDICTS = ("A", "B")  # the verdict's reply: "A" if the first answer shown is better
ASK = "Better: A (first) or B (second)?"


def criteria(rubrics: list[Rubric] | tuple[Rubric, ...]) -> str:
    return "; ".join(r.text.rstrip(". ") for r in rubrics)


def question_text(prompt: str, rubrics: list[Rubric] | tuple[Rubric, ...]) -> str:
    """The judge's first user turn.

    >>> question_text("2+2=", [Rubric("r", "core", "Correct.")])
    'Judge by: Correct. Q: 2+2='
    """
    head = f"Judge by: {criteria(rubrics)}. " if rubrics else ""
    return f"{head}Q: {prompt}"


def solve_messages(prompt: str, rubrics) -> list[dict]:
    """Up to the judge's working (the model writes it next)."""
    return [{"role": "user", "content": question_text(prompt, rubrics)}]


def check_messages(prompt: str, rubrics, working: str, answer: str) -> list[dict]:
    """Up to the check of `answer` (the model writes it next)."""
    return solve_messages(prompt, rubrics) + [{"role": JUDGE, "content": working},
                                              {"role": "user", "content": answer}]


def verdict_messages(prompt: str, rubrics, working: str, a: str, check_a: str, b: str,
                     check_b: str) -> list[dict]:
    """Up to the verdict: `a` shown first (A), `b` second (B), each with its check."""
    return check_messages(prompt, rubrics, working, a) + [
        {"role": JUDGE, "content": check_a}, {"role": "user", "content": b},
        {"role": JUDGE, "content": check_b}, {"role": "user", "content": ASK}]


def example_messages(prompt: str, rubrics, working: str, a: str, check_a: str, b: str,
                     check_b: str, verdict: str) -> list[dict]:
    """A whole judgment, for training: the verdict messages and the verdict's turn."""
    if verdict not in VERDICTS:
        raise ValueError(f"a verdict is one of {VERDICTS}, got {verdict!r}")
    return verdict_messages(prompt, rubrics, working, a, check_a, b, check_b) + [
        {"role": JUDGE, "content": verdict}]
