"""The critic's closed loop (K2 sec. 3.2.2): labelled pairs harvested from verifiable groups
with mixed outcomes into the run's store (`harvest`, `store_pairs`), critic training pairs drawn
from them (`training_pairs`, `heldout_pairs`), and the critic's own text on them as training
examples where its verdict was right (`reasoned`, `critic_examples`), or the checks it should
have written where they follow from what it saw (`corrected`, critic.correct_checks).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from critic.compare import Comparison, Judgment
from critic.layout import VERDICTS, example_messages, finding
from critic.pairs import Pair, pairs_from_group
from envs import TeachesJudging
from k2rl.step.critic_ids import example_ids, response_text
from k2rl.step.group import Group
from k2rl.tasks.make import make_env


def harvest_group(g: Group) -> list[Pair]:
    """Labelled pairs from a verifiable group with mixed outcomes (critic.pairs), else none."""
    if g.judged:
        return []  # critic-rewarded: `correct` there is a reference check, not a verifier
    correct = [t.correct for t in g]
    if not any(correct) or all(correct):
        return []
    return pairs_from_group(g.prompt, [response_text(t) for t in g], correct, g.task)


def harvest(groups: list[Group]) -> list[Pair]:
    """Labelled pairs from every verifiable group with mixed outcomes."""
    return [p for g in groups for p in harvest_group(g)]


def store_pairs(store, pairs: list[Pair], split: str = "train") -> int:
    """Write pairs to the run's `split` of pairs ("train": harvested from training groups;
    "heldout": drawn once from eval-split prompts, k2rl.step.heldout); returns how many."""
    if pairs:
        store.add_pairs(split, pairs)
    return len(pairs)


def training_pairs(store, n: int, rng: np.random.Generator) -> list[Pair]:
    """n train pairs drawn at random (a worker judges each and trains on its judgment in both
    orders: `critic_examples`)."""
    pairs = store.pairs("train")
    if not pairs:
        return []
    picks = rng.choice(len(pairs), size=min(n, len(pairs)), replace=False)
    return [pairs[i] for i in picks]


def heldout_pairs(store, n: int) -> list[Pair]:
    return store.pairs("heldout")[:n]


def reasoned(judgment: Judgment) -> bool:
    """Whether a judgment of a labelled pair (chosen first) was right all through: the
    verdict names the chosen answer, the chosen answer's check found "yes", the other's "no"."""
    check_chosen, check_rejected = judgment.checks
    return (judgment.preference > 0.5 and finding(check_chosen) is True
            and finding(check_rejected) is False)


# (question, response, the critic's own answer) -> the check line it should have written
Corrector = Callable[[str, str, str], "str | None"]


def check_correctors(task_ids: list[str], layout: Mapping[str, object] | None = None
                     ) -> dict[str, Corrector]:
    """task name -> its environment's `check_from`, for the tasks whose checks follow from
    what the critic saw and wrote; `layout` sets the check scripts' options the critic was
    taught (k2rl.bootstrap.model.critic_scripts) on the envs that have them."""
    out = {}
    for env_id in task_ids:
        env = make_env(env_id)
        if not (isinstance(env, TeachesJudging) and env.corrects_checks):
            continue
        for name, value in (layout or {}).items():
            if hasattr(env, name):
                setattr(env, name, value)
        out[env.task] = env.check_from
    return out


def corrected(comparison: Comparison, judgment: Judgment,
              correctors: Mapping[str, Corrector]) -> tuple[str, str] | None:
    """The check lines the critic should have written for a labelled pair (chosen first), from
    what it saw and wrote (its task's `check_from`: the question, the two answers and its own
    answer), where they follow from those texts and agree with the label: the chosen answer's
    check finds "yes" and the rejected one's "no". None otherwise (no corrector for the task,
    a line that does not follow, or the critic's own answer disagrees with the label, as when
    its own sum is wrong)."""
    check = correctors.get(comparison.task or "")
    if check is None:
        return None
    fixed = tuple(check(comparison.prompt, answer, judgment.working) for answer in judgment.shown)
    if None not in fixed and finding(fixed[0]) is True and finding(fixed[1]) is False:
        return fixed
    return None


def critic_examples(tokenizer, comparisons: list[Comparison], judgments: list[Judgment],
                    correctors: Mapping[str, Corrector] | None = None
                    ) -> list[tuple[list[int], list[int]]]:
    """Training examples from the critic's own judgments of labelled pairs (chosen first):
    each pair in both orders, with the loss on the right verdict always and on the critic's
    own checks only where its reasoning was right all through: its verdict named the chosen
    answer, the chosen answer's check found "yes" and the rejected one's "no"
    (rejection-sampled self-training: it learns from its reasoning where that reasoning was
    right, not where a wrong check happened to end in the right verdict). Its own answer to
    the question is the policy's turn, which RL trains; it carries no loss here.

    With `correctors` (task -> `check_against`, `critic.correct_checks`), a pair of a task
    that has one is trained on the checks `corrected` gives, with the loss on them, wherever
    they exist: the comparison each line should have made of what the critic saw and wrote,
    so a slipped mark ("12=" for 1 against 2) is corrected rather than left untrained."""
    out = []
    for c, j in zip(comparisons, judgments):
        (a, b), (ca, cb) = j.shown, j.checks
        right = reasoned(j)
        fixed = corrected(c, j, correctors) if correctors else None
        if fixed is not None:
            (ca, cb), right = fixed, True
        last = len(example_messages(c.prompt, c.rubrics, j.working, a, ca, b, cb, VERDICTS[0])) - 1
        for x, cx, y, cy, verdict in ((a, ca, b, cb, VERDICTS[0]), (b, cb, a, ca, VERDICTS[1])):
            msgs = example_messages(c.prompt, c.rubrics, j.working, x, cx, y, cy, verdict)
            out.append(example_ids(tokenizer, msgs, lambda i: right or i == last))
    return out
