"""The policy as its own critic: the engine-side scorer for critic/ (K2 sec. 3.2.2).

critic/ holds the rubrics, the pairwise arithmetic and the evaluation; this module gives it
the one thing it needs from the engine: for each judge message, the log-probs of the replies
"A" and "B" as the assistant's next token, from the same vLLM engine that samples rollouts.
"""
from __future__ import annotations

from critic.judge import VERDICTS
from k2rl import engine
from k2rl.chat import judge_prompt_ids


def make_scorer(llm, tokenizer):
    """score(texts) -> [(logp_A, logp_B), ...], one batched engine call per use."""
    choices = [tokenizer.convert_tokens_to_ids(v) for v in VERDICTS]

    def score(texts: list[str]) -> list[tuple[float, float]]:
        if not texts:
            return []
        rows = engine.choice_logprobs(llm, [judge_prompt_ids(tokenizer, t) for t in texts], choices)
        return [(a, b) for a, b in rows]

    return score


def standalone_scorer(model_dir: str, max_model_len: int = 512, threads: int = 2):
    """An engine and scorer outside a run (for `k2rl critic eval`)."""
    engine.configure_env(threads, kv_cache_gib=1)
    from transformers import AutoTokenizer

    llm = engine.start_engine(model_dir, max_model_len, seed=0)
    return make_scorer(llm, AutoTokenizer.from_pretrained(model_dir))


def judge_rewards(trajs: list[dict], k: int, score, rubrics, tie_margin: float = 0.0,
                  opponents: int | None = None) -> int:
    """Replace the reward of every finished group of judged trajectories (critic-rewarded
    environments) by its pairwise win rates, in one batched engine call; returns how many
    groups were judged. A truncated reply keeps its truncation penalty (it never finished).
    `opponents`: comparisons per response (critic.judge.pairs_in_group; None: all).
    """
    from critic.judge import Group, rank_groups
    from k2rl.refresh import response_text

    groups = [trajs[i:i + k] for i in range(0, len(trajs), k)]
    judged = [g for g in groups if len(g) == k and k > 1 and any(t["judged"] for t in g)
              and not any(t["paused"] for t in g)]
    if not judged:
        return 0
    rates = rank_groups([Group(g[0]["messages"][0]["content"], [response_text(t) for t in g],
                               g[0]["task"]) for g in judged], rubrics, score, tie_margin,
                        opponents)
    for g, rs in zip(judged, rates):
        for t, r in zip(g, rs):
            if t["judged"] and not t["truncated"]:
                t["reward"] = float(r)
    return len(judged)
