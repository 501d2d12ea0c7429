"""How well the critic judges labelled pairs: accuracy, position bias and ties.

Not in the paper (K2 reports no critic metrics); these are the checks that tell whether the
self-critique reward means anything. For each pair the judge sees two orders: chosen shown
as A (`p_ab` = its P(A better)) and rejected shown as A (`p_ba` = its P(A better)).
- accuracy: the combined preference (`judge.combine_orders`) names chosen, outside the tie
  margin; a tie is not a correct answer, and is counted in tie_rate.
- accuracy_ab / accuracy_ba: the same with one order alone; a gap between them is position bias.
- swap_consistency: both orders name the same winner (a tie in either order does not count).
- tie_rate: the combined preference is within the tie margin of 0.5.
The same metrics are broken down by task and by rubric ("(none)": no task; "(all)": judged by
every rubric that applies to the task).
"""
from __future__ import annotations

from critic.judge import Render, Scorer, combine_orders, is_tie, judge_text, verdict_from_logprobs
from critic.pairs import Pair, pair_texts
from critic.rubrics import Rubric

METRICS = ("accuracy", "accuracy_ab", "accuracy_ba", "swap_consistency", "tie_rate")
NO_TASK = "(none)"
ALL_RUBRICS = "(all)"


def _winner(p: float, tie_margin: float) -> int:
    """+1 if A wins, -1 if B wins, 0 for a tie."""
    return 0 if is_tie(p, tie_margin) else (1 if p > 0.5 else -1)


def _mean(flags: list[bool]) -> float:
    return sum(flags) / len(flags)


def _metrics(p_ab: list[float], p_ba: list[float], tie_margin: float) -> dict:
    # Each list says who won from chosen's side: +1 chosen, -1 rejected, 0 tie.
    ab = [_winner(p, tie_margin) for p in p_ab]
    ba = [-_winner(p, tie_margin) for p in p_ba]  # chosen is shown as B in this order
    both = [_winner(combine_orders(a, b), tie_margin) for a, b in zip(p_ab, p_ba)]
    return {"n": len(p_ab),
            "accuracy": _mean([w == 1 for w in both]),
            "accuracy_ab": _mean([w == 1 for w in ab]),
            "accuracy_ba": _mean([w == 1 for w in ba]),
            "swap_consistency": _mean([a == b != 0 for a, b in zip(ab, ba)]),
            "tie_rate": _mean([w == 0 for w in both])}


def _breakdown(labels: list[str], p_ab: list[float], p_ba: list[float],
               tie_margin: float) -> dict[str, dict]:
    out = {}
    for label in sorted(set(labels)):
        idx = [k for k, lab in enumerate(labels) if lab == label]
        out[label] = _metrics([p_ab[k] for k in idx], [p_ba[k] for k in idx], tie_margin)
    return out


def evaluate(pairs: list[Pair], p_ab: list[float], p_ba: list[float],
             tie_margin: float) -> dict:
    """The metrics over all pairs, by task and by rubric; p_ab[k], p_ba[k] belong to pairs[k]."""
    if not pairs:
        raise ValueError("no pairs to evaluate the critic on")
    if not len(pairs) == len(p_ab) == len(p_ba):
        raise ValueError(f"{len(pairs)} pairs but {len(p_ab)} A/B and {len(p_ba)} B/A verdicts")
    if not 0.0 <= tie_margin <= 0.5:
        raise ValueError(f"tie_margin must be in [0, 0.5], got {tie_margin}")
    for p in list(p_ab) + list(p_ba):
        if not 0.0 <= p <= 1.0:  # also refuses NaN
            raise ValueError(f"verdicts are probabilities in [0, 1], got {p}")
    p_ab, p_ba = [float(p) for p in p_ab], [float(p) for p in p_ba]
    return {**_metrics(p_ab, p_ba, tie_margin), "tie_margin": tie_margin,
            "by_task": _breakdown([p.task or NO_TASK for p in pairs], p_ab, p_ba, tie_margin),
            "by_rubric": _breakdown([p.rubric or ALL_RUBRICS for p in pairs], p_ab, p_ba,
                                    tie_margin)}


def evaluate_scorer(pairs: list[Pair], rubrics: list[Rubric], score: Scorer,
                    tie_margin: float, render: Render = judge_text) -> dict:
    """`evaluate` with the verdicts from one batched call of the engine's scorer."""
    if not pairs:
        raise ValueError("no pairs to evaluate the critic on")
    texts = [t for pair in pairs for t in pair_texts(pair, rubrics, render)]
    scores = list(score(texts))
    if len(scores) != len(texts):
        raise ValueError(f"{len(texts)} judge texts but {len(scores)} scores")
    p = [verdict_from_logprobs(la, lb) for la, lb in scores]
    return evaluate(pairs, p[0::2], p[1::2], tie_margin)


def _row(name: str, m: dict) -> str:
    cells = "".join(f"{100 * m[k]:>9.1f}%" for k in METRICS)
    return f"{name:<24}{m['n']:>6}{cells}"


def format_table(result: dict) -> str:
    """A plain-text table: all pairs, then one row per task and per rubric."""
    head = f"{'slice':<24}{'n':>6}" + "".join(
        f"{h:>10}" for h in ("acc", "acc A/B", "acc B/A", "swap", "ties"))
    rows = [head, _row("all", result)]
    rows += [_row(f"task={t}", m) for t, m in result["by_task"].items()]
    rows += [_row(f"rubric={r}", m) for r, m in result["by_rubric"].items()]
    rows.append(f"(tie margin {result['tie_margin']})")
    return "\n".join(rows)
