"""The self-critique rubric critic (K2 sec. 3.2.2): the policy judges its own responses.

Pure logic only; the engine (k2rl) imports this package, never the reverse. `rubrics` loads
the criteria, `layout` lays out a judgment (the critic's own working, a check line per answer,
the verdict), `compare` turns a step's groups into one batch of comparisons and their verdicts
into win-rate rewards, `pairs` makes labelled pairs from verifiable groups (the closed loop)
and splits them, `evaluate` measures the critic on held-out pairs.
"""
from critic.compare import (Candidates, Comparison, Critic, Judgment, combine_orders,
                            group_win_rates, pairs_in_group, rank_groups, verdict_from_logprobs)
from critic.evaluate import evaluate, evaluate_critic, format_judgments, format_table
from critic.layout import (CRITIC, VERDICTS, check_messages, example_messages, solve_messages,
                           verdict_messages)
from critic.pairs import (Pair, PairsError, comparison_of, pairs_from_group, read_pairs,
                          split_of_pair, write_pairs)
from critic.rubrics import Rubric, RubricError, load_rubrics, rubric_named, rubrics_for

__all__ = ["CRITIC", "VERDICTS", "Candidates", "Comparison", "Critic", "Judgment", "Pair",
           "PairsError", "Rubric", "RubricError", "check_messages", "combine_orders",
           "comparison_of", "evaluate", "evaluate_critic", "example_messages", "format_judgments",
           "format_table", "group_win_rates", "load_rubrics", "pairs_from_group",
           "pairs_in_group", "rank_groups", "read_pairs", "rubric_named", "rubrics_for",
           "solve_messages", "split_of_pair", "verdict_from_logprobs", "verdict_messages",
           "write_pairs"]
