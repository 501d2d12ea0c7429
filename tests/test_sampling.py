"""Prompt sampling: task mix, prioritized sampling and the pass@k keep rule (pure logic)."""
from collections import Counter

import numpy as np
import pytest

from k2rl.config import ConfigError, load_config
from k2rl.rollout import Request
from k2rl.sampling import filter_pool, moderate, prioritized, prompt_key, sample_requests


def test_task_mix_follows_weights_and_is_deterministic():
    cfg = load_config(None, ["rollout.prompts_per_step=400",
                             "tasks=[{id: k2rl/Arithmetic-v0, weight: 3}, {id: k2rl/Calculator-v0, weight: 1}]"])
    reqs = sample_requests(cfg, step=1)
    share = Counter(r.env_id for r in reqs)["k2rl/Arithmetic-v0"] / len(reqs)
    assert 0.68 < share < 0.82
    assert [r.seed for r in reqs] == [r.seed for r in sample_requests(cfg, step=1)]
    assert [r.seed for r in reqs] != [r.seed for r in sample_requests(cfg, step=2)]
    assert all(r.split == "train" for r in reqs) and [r.group for r in reqs] == list(range(400))


def test_prioritized_prefers_unsolved_prompts():
    cands = [Request("k2rl/Arithmetic-v0", i) for i in range(200)]
    rates = [1.0 if i < 100 else 0.0 for i in range(200)]  # first half always solved
    picked = prioritized(cands, rates, 50, np.random.default_rng(0))
    assert len({r.seed for r in picked}) == 50  # without replacement
    assert sum(r.seed >= 100 for r in picked) >= 40  # uniform would give about 25


def test_prioritized_sampling_reads_success_rates_by_prompt_key():
    cfg = load_config(None, ["rollout.prioritized=true", "rollout.prompts_per_step=8"])
    seen = []

    def rates(keys):
        seen.extend(keys)
        return [None] * len(keys)

    reqs = sample_requests(cfg, 3, success_rates=rates)
    assert len(reqs) == 8 and len(seen) == 32  # 4x candidates were scored
    assert seen[0].startswith("k2rl/") and "|" in seen[0]
    assert prompt_key(Request("k2rl/Arithmetic-v0", 5)) == prompt_key(Request("k2rl/Arithmetic-v0", 5))


def test_passk_keep_rule_and_pool():
    t = lambda ok: {"correct": ok}  # noqa: E731
    trajs = [t(1), t(1), t(0), t(0), t(1), t(0)]  # groups of 2: always, never, sometimes
    assert moderate(trajs, 2) == [False, False, True]
    cfg = load_config(None, ["rollout.passk_filter=2", "rollout.filter_pool=30"])

    def fake_rollout(reqs, k, temperature):
        return [t(i % 3 == 0 and j == 0) for i in range(len(reqs)) for j in range(k)]

    pool, stats = filter_pool(cfg, fake_rollout)
    assert stats == {"filter/candidates": 30, "filter/kept": 10} and len(pool) == 10
    assert sample_requests(cfg, 1, pool=pool)[0].seed in {r.seed for r in pool}
    with pytest.raises(ConfigError, match="kept none"):
        filter_pool(cfg, lambda reqs, k, temp: [t(1)] * len(reqs) * k)
