"""The self-critique rubric critic (K2 sec. 3.2.2): the policy judges its own responses.

Pure logic only; the engine (k2rl) imports this package, never the reverse. `rubrics` loads
the criteria, `judge` turns a step's groups into one batch of pairwise comparisons and their
verdicts into win-rate rewards, `pairs` makes labelled pairs from verifiable groups (the
closed loop) and splits them, `evaluate` measures the critic on held-out pairs.
"""
from critic.evaluate import evaluate, evaluate_scorer, format_table
from critic.judge import (VERDICTS, Candidates, JudgeRequest, Scorer, both_orders,
                          build_judge_requests, combine_orders, group_win_rates, judge_text,
                          pairs_in_group, rank_groups, scatter_verdicts, verdict_from_logprobs)
from critic.pairs import (Pair, PairsError, judge_examples, pair_texts, pairs_from_group,
                          read_pairs, split_of_pair, write_pairs)
from critic.rubrics import Rubric, RubricError, load_rubrics, rubric_named, rubrics_for

__all__ = ["VERDICTS", "Candidates", "JudgeRequest", "Pair", "PairsError", "Rubric", "RubricError",
           "Scorer", "both_orders", "build_judge_requests", "combine_orders", "evaluate",
           "evaluate_scorer", "format_table", "group_win_rates", "judge_examples", "judge_text",
           "load_rubrics", "pair_texts", "pairs_from_group", "pairs_in_group", "rank_groups",
           "read_pairs", "rubric_named", "rubrics_for", "scatter_verdicts", "split_of_pair",
           "verdict_from_logprobs", "write_pairs"]
