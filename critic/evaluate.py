"""How well the critic judges labelled pairs: accuracy, position bias and ties.

Not in the paper (K2 reports no critic metrics); these are the checks that tell whether the
self-critique reward means anything. For each pair the critic sees two orders: chosen shown
as A (`p_ab` = its P(A better)) and rejected shown as A (`p_ba` = its P(A better)).
- accuracy: the combined preference (`compare.combine_orders`) names chosen, outside the tie
  margin; a tie is not a correct answer, and is counted in tie_rate.
- accuracy_ab / accuracy_ba: the same with one order alone; a gap between them is position bias.
- swap_consistency: order consistency, both orders name the same winner (a tie in either order
  does not count).
- tie_rate: the combined preference is within the tie margin of 0.5.
- brier: calibration, the mean squared error of the combined preference for the chosen
  response against the label 1 (0 is perfect; an always-unsure critic scores 0.25).
- ece: expected calibration error over 10 equal-width bins of the critic's confidence
  max(p, 1 - p): the gap between how sure it is and how often it is right, weighted by bin.
The same metrics are broken down by task and by rubric ("(none)": no task; "(all)": judged by
every rubric that applies to the task). For a critic that writes check lines (critic.layout),
`check_findings` says per task how often the chosen answer's check ends "yes" and the
rejected one's "no": where both are right the verdict follows, so these show which step fails.
"""
from __future__ import annotations

from critic.compare import Critic, Judgment, combine_orders, is_tie
from critic.layout import finding
from critic.pairs import Pair, comparison_of
from critic.rubrics import Rubric

METRICS = ("accuracy", "accuracy_ab", "accuracy_ba", "swap_consistency", "tie_rate", "brier", "ece")
ECE_BINS = 10
NO_TASK = "(none)"
ALL_RUBRICS = "(all)"


def _winner(p: float, tie_margin: float) -> int:
    """+1 if A wins, -1 if B wins, 0 for a tie."""
    return 0 if is_tie(p, tie_margin) else (1 if p > 0.5 else -1)


def _mean(flags: list[bool]) -> float:
    return sum(flags) / len(flags)


def brier(p_chosen: list[float]) -> float:
    """Mean squared error of P(chosen better) against 1.

    >>> brier([1.0, 0.5, 0.0])
    0.4166666666666667
    """
    return sum((1.0 - p) ** 2 for p in p_chosen) / len(p_chosen)


def ece(p_chosen: list[float], bins: int = ECE_BINS) -> float:
    """Expected calibration error of the critic's confidence in its pick.

    The pick is chosen when P(chosen) > 0.5 (an exact 0.5 counts as a wrong pick at
    confidence 0.5). A critic that is 90% sure and right 90% of the time scores 0.

    >>> round(ece([0.9] * 9 + [0.1]), 12)
    0.0
    """
    by_bin: dict[int, list[tuple[float, bool]]] = {}
    for p in p_chosen:
        conf = max(p, 1.0 - p)
        by_bin.setdefault(min(bins - 1, int((conf - 0.5) * 2 * bins)), []).append((conf, p > 0.5))
    n = len(p_chosen)
    return sum(abs(sum(c for c, _ in v) / len(v) - sum(ok for _, ok in v) / len(v)) * len(v) / n
               for v in by_bin.values())


def _metrics(p_ab: list[float], p_ba: list[float], tie_margin: float) -> dict:
    # Each list says who won from chosen's side: +1 chosen, -1 rejected, 0 tie.
    ab = [_winner(p, tie_margin) for p in p_ab]
    ba = [-_winner(p, tie_margin) for p in p_ba]  # chosen is shown as B in this order
    chosen = [combine_orders(a, b) for a, b in zip(p_ab, p_ba)]
    both = [_winner(p, tie_margin) for p in chosen]
    return {"n": len(p_ab),
            "accuracy": _mean([w == 1 for w in both]),
            "accuracy_ab": _mean([w == 1 for w in ab]),
            "accuracy_ba": _mean([w == 1 for w in ba]),
            "swap_consistency": _mean([a == b != 0 for a, b in zip(ab, ba)]),
            "tie_rate": _mean([w == 0 for w in both]),
            "brier": brier(chosen), "ece": ece(chosen)}


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


def evaluate_critic(pairs: list[Pair], rubrics: list[Rubric], critic: Critic,
                    tie_margin: float) -> tuple[dict, list[Judgment]]:
    """`evaluate` with the judgments from one batched call of the critic (the chosen response
    shown first, then second); also returns the judgments, for `format_judgments`."""
    if not pairs:
        raise ValueError("no pairs to evaluate the critic on")
    judgments = list(critic([comparison_of(p, rubrics) for p in pairs]))
    if len(judgments) != len(pairs):
        raise ValueError(f"{len(pairs)} pairs but {len(judgments)} judgments")
    result = evaluate(pairs, [j.p_ab for j in judgments], [j.p_ba for j in judgments], tie_margin)
    if any(any(j.checks) and j.layout == "checks" for j in judgments):
        result["checks"] = check_findings(pairs, judgments)
    return result, judgments


def check_findings(pairs: list[Pair], judgments: list[Judgment]) -> dict[str, dict]:
    """Per task: the share of pairs whose chosen answer's check found "yes" (chosen_yes), whose
    rejected answer's check found "no" (rejected_no), and both (both_right).

    >>> pairs = [Pair("2+2=", "4", "5", "arithmetic")] * 2
    >>> js = [Judgment(0.9, 0.1, "4", ("4: yes", "5: no"), ("4", "5")),
    ...       Judgment(0.5, 0.5, "4", ("4: yes", "5: yes"), ("4", "5"))]
    >>> check_findings(pairs, js)["arithmetic"]
    {'n': 2, 'chosen_yes': 1.0, 'rejected_no': 0.5, 'both_right': 0.5}
    """
    out: dict[str, dict] = {}
    for task in sorted({p.task or NO_TASK for p in pairs}):
        found = [(finding(j.checks[0]), finding(j.checks[1])) for p, j in zip(pairs, judgments)
                 if (p.task or NO_TASK) == task and any(j.checks) and j.layout == "checks"]
        if not found:  # judged in the chat layout: no check lines
            continue
        out[task] = {"n": len(found), "chosen_yes": _mean([c is True for c, _ in found]),
                     "rejected_no": _mean([r is False for _, r in found]),
                     "both_right": _mean([c is True and r is False for c, r in found])}
    return out


def spread(pairs: list[Pair], n: int) -> list[int]:
    """The indices of n pairs taken a task at a time, in the order the tasks first appear, so
    that a few shown judgments cover every family (the pairs are grouped by task).

    >>> spread([Pair("q", "a", "b", t) for t in ("x", "x", "x", "y", "z")], 4)
    [0, 3, 4, 1]
    """
    by_task: dict[str, list[int]] = {}
    for i, pair in enumerate(pairs):
        by_task.setdefault(pair.task or NO_TASK, []).append(i)
    queues = list(by_task.values())
    picked: list[int] = []
    for rank in range(max(map(len, queues), default=0)):
        picked += [q[rank] for q in queues if rank < len(q)]
    return picked[:n]


def format_judgments(pairs: list[Pair], judgments: list[Judgment], n: int) -> str:
    """n judgments as a person reads them, a task at a time (`spread`): question, both answers
    with the critic's check of each, its own answer, and its preference for the chosen answer."""
    blocks = []
    chosen = spread(pairs, n)
    for k, (pair, jd) in enumerate(((pairs[i], judgments[i]) for i in chosen), start=1):
        ok = "right" if jd.preference > 0.5 else "WRONG" if jd.preference < 0.5 else "tie"
        head = [f"[{k}] task={pair.task or NO_TASK}  P(chosen better)={jd.preference:.3f} "
                f"({ok}; A/B {jd.p_ab:.3f}, B/A {1 - jd.p_ba:.3f})",
                f"  question: {pair.prompt}"]
        if jd.layout == "chat":  # its reasoning in each order, before the verdict it was read at
            blocks.append("\n".join(head + [
                f"  chosen:   {pair.chosen}", f"  rejected: {pair.rejected}",
                f"  critic, chosen shown as A:   {jd.checks[0]}",
                f"  critic, rejected shown as A: {jd.checks[1]}"]))
            continue
        blocks.append("\n".join(head + [
            f"  critic's own answer: {jd.working}",
            f"  chosen:   {pair.chosen}",
            f"    check:  {jd.checks[0]}",
            f"  rejected: {pair.rejected}",
            f"    check:  {jd.checks[1]}"]))
    return "\n\n".join(blocks)


def _row(name: str, m: dict) -> str:
    cells = "".join(f"{100 * m[k]:>9.1f}%" for k in METRICS[:5])
    cells += f"{m['brier']:>10.3f}{m['ece']:>10.3f}"
    return f"{name:<24}{m['n']:>6}{cells}"


def format_table(result: dict) -> str:
    """A plain-text table: all pairs, then one row per task and per rubric."""
    head = f"{'slice':<24}{'n':>6}" + "".join(
        f"{h:>10}" for h in ("acc", "acc A/B", "acc B/A", "consist.", "ties", "brier", "ece"))
    rows = [head, _row("all", result)]
    rows += [_row(f"task={t}", m) for t, m in result["by_task"].items()]
    rows += [_row(f"rubric={r}", m) for r, m in result["by_rubric"].items()]
    rows.append(f"(tie margin {result['tie_margin']})")
    if result.get("checks"):
        rows.append(f"\n{'checks: task':<24}{'n':>6}{'chosen yes':>12}{'rejected no':>13}{'both':>8}")
        rows += [f"{t:<24}{m['n']:>6}{100 * m['chosen_yes']:>11.1f}%{100 * m['rejected_no']:>12.1f}%"
                 f"{100 * m['both_right']:>7.1f}%" for t, m in result["checks"].items()]
    return "\n".join(rows)
