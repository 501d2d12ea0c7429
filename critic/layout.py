"""The critic's conversation, as chat messages, in one of two layouts (``LAYOUTS``):

- ``chat``, for any chat model: one user turn with the rubrics, the question and both
  responses, asking the critic to work the question out, compare, and end with a verdict
  (`chat_messages`); it writes freely in its own assistant turn, and the verdict is read as
  the log-probs of "A" and "B" after "Verdict:" (k2rl.step.critic_engine), in both orders;
- ``checks``, k2rl's embedded default's: answer the question, a scripted check line per
  answer, verdict (below). Its check lines are a format taught to that model in its build;
  no other model writes them.

The checks layout:

K2 (sec. 3.2.2) has the policy compare its own responses against rubrics but does not say how
the critic reads a pair. A critic that answers with one verdict token stays at chance on pairs
whose correctness needs work (a sum, a word count; bench/README.md), so k2rl's critic works
the question out first, as generative verifiers (GenRM, arXiv 2408.15240), MT-Bench's
reference-guided math judge and Kimi k1.5's reasoning reward model do, with its own answer as
the reference, never the answer key ("judge after doing"):

    user:      <question>                   (the policy's prompt, as the policy sees it)
    assistant: <its own answer>             (written as the policy writes it: the same skill)
    user:      Judge by: <rubrics>. Answer: <first answer>
    critic:    <check of the first answer against its own: "84 vs 85: no">
    user:      Answer: <second answer>
    critic:    <check of the second answer>
    user:      Better: A (first) or B (second)?
    critic:    A | B

Its own answer is written in the assistant's role, after exactly the policy's prompt, because
that is where the model's skill is: in a turn of its own the 3.4 M-parameter default critic
wrote wrong column workings for sums its policy gets right 98% of the time (bench/README.md).
The critic's turns are written by the model (the engine generates them,
k2rl.step.critic_engine); this module only lays them out. An answer's check is generated once,
right after its answer as the first one shown, and reused in both orders, so it does not depend
on the order or on the other answer. The verdict is read as the log-probs of the two choice
tokens after the last user turn, in both orders. `CRITIC` marks the critic's turns; the engine
maps it to a role of the model's template (k2rl's own `<|critic|>`, else the assistant's).
"""
from __future__ import annotations

from critic.rubrics import Rubric

CRITIC = "critic"  # the critic's own turns; laid out in the model's critic or assistant role
OWN = "assistant"  # the critic's own answer: the policy's turn
VERDICTS = ("A", "B")  # the verdict's reply: "A" if the first answer shown is better
ASK = "Better: A (first) or B (second)?"
LAYOUTS = ("chat", "checks")
# The chat layout's request and the words after which its verdict is read.
CHAT_ASK = ("Two responses to the same request follow. Judge them by these rules: {rules}.\n\n"
            "Request: {question}\n\nResponse A: {first}\n\nResponse B: {second}\n\n"
            "Work the request out yourself first, in a few short lines. Then say which response "
            "follows the rules better, and end with \"Verdict: A\" or \"Verdict: B\".")
VERDICT_HEAD = "Verdict:"


def criteria(rubrics: list[Rubric] | tuple[Rubric, ...]) -> str:
    return "; ".join(r.text.rstrip(". ") for r in rubrics)


def first_answer_text(answer: str, rubrics: list[Rubric] | tuple[Rubric, ...]) -> str:
    """The user turn that shows the first answer, after the rubrics.

    >>> first_answer_text("85", [Rubric("r", "core", "Correct.")])
    'Judge by: Correct. Answer: 85'
    """
    head = f"Judge by: {criteria(rubrics)}. " if rubrics else ""
    return f"{head}Answer: {answer}"


def solve_messages(prompt: str) -> list[dict]:
    """Up to the critic's own answer: the policy's prompt (the model answers as the policy)."""
    return [{"role": "user", "content": prompt}]


def check_messages(prompt: str, rubrics, own: str, answer: str) -> list[dict]:
    """Up to the check of `answer` shown first (the model writes it next)."""
    return solve_messages(prompt) + [{"role": OWN, "content": own},
                                     {"role": "user", "content": first_answer_text(answer, rubrics)}]


def verdict_messages(prompt: str, rubrics, own: str, a: str, check_a: str, b: str,
                     check_b: str) -> list[dict]:
    """Up to the verdict: `a` shown first (A), `b` second (B), each with its check."""
    return check_messages(prompt, rubrics, own, a) + [
        {"role": CRITIC, "content": check_a}, {"role": "user", "content": f"Answer: {b}"},
        {"role": CRITIC, "content": check_b}, {"role": "user", "content": ASK}]


def example_messages(prompt: str, rubrics, own: str, a: str, check_a: str, b: str,
                     check_b: str, verdict: str) -> list[dict]:
    """A whole judgment, for training: the verdict messages and the verdict's turn."""
    if verdict not in VERDICTS:
        raise ValueError(f"a verdict is one of {VERDICTS}, got {verdict!r}")
    return verdict_messages(prompt, rubrics, own, a, check_a, b, check_b) + [
        {"role": CRITIC, "content": verdict}]


def finding(check: str) -> bool | None:
    """What a check line found: True if it ends ": yes", False if ": no", else None.

    >>> finding("85 vs 85: yes"), finding("84 vs 85: no"), finding("84 vs")
    (True, False, None)
    """
    tail = check.strip().rsplit(":", 1)[-1].strip() if ":" in check else ""
    return {"yes": True, "no": False}.get(tail)


def chat_messages(prompt: str, rubrics, first: str, second: str) -> list[dict]:
    """The chat layout's one user turn: `first` shown as A, `second` as B.

    >>> from critic.rubrics import Rubric
    >>> m = chat_messages("What is 2+2?", [Rubric("r", "core", "Correct.")], "4", "5")
    >>> m[0]["role"], "Response A: 4" in m[0]["content"], "rules: Correct." in m[0]["content"]
    ('user', True, True)
    """
    rules = criteria(rubrics) if rubrics else "correct, complete and concise"
    return [{"role": "user", "content": CHAT_ASK.format(rules=rules, question=prompt,
                                                        first=first, second=second)}]


def before_verdict(reasoning: str) -> str:
    r"""The critic's free text up to where it starts its verdict (read as log-probs, not text).

    >>> before_verdict("2+2 is 4, so A is right.\nVerdict: A"), before_verdict("A is right.")
    ('2+2 is 4, so A is right.', 'A is right.')
    """
    cut = reasoning.lower().find(VERDICT_HEAD.lower())
    return (reasoning if cut < 0 else reasoning[:cut]).rstrip()
