"""Prompt sampling: task mix, prioritized sampling and the pass@k keep rule (pure logic)."""
from collections import Counter

import numpy as np
import pytest

from k2rl.config import ConfigError, load_config
from k2rl.step.group import Group, Request, Status, Trajectory
from k2rl.step.sampling import (filter_pool, moderate, prioritized, prompt_key, sample_requests,
                                task_key)


def test_task_mix_follows_weights_and_is_deterministic():
    cfg = load_config(None, ["rollout.prompts_per_step=400",
                             "tasks=[{id: k2rl/Arithmetic-v1, weight: 3}, {id: k2rl/Calculator-v1, weight: 1}]"])
    reqs = sample_requests(cfg, step=1)
    share = Counter(r.env_id for r in reqs)["k2rl/Arithmetic-v1"] / len(reqs)
    assert 0.68 < share < 0.82
    assert [r.seed for r in reqs] == [r.seed for r in sample_requests(cfg, step=1)]
    assert [r.seed for r in reqs] != [r.seed for r in sample_requests(cfg, step=2)]
    assert all(r.split == "train" for r in reqs) and [r.group for r in reqs] == list(range(400))


def test_prioritized_prefers_unsolved_prompts():
    cands = [Request("k2rl/Arithmetic-v1", i) for i in range(200)]
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
    assert len(reqs) == 8 and len(seen) == 64  # 4x candidates were scored, and their tasks
    assert seen[0].startswith("k2rl/") and "|" in seen[0]
    assert prompt_key(Request("k2rl/Arithmetic-v1", 5)) == prompt_key(Request("k2rl/Arithmetic-v1", 5))


def test_unseen_prompts_count_at_their_task_s_success_rate():
    """Generated tasks rarely repeat a prompt: a mastered task gives way to the others."""
    cfg = load_config(None, ["rollout.prioritized=true", "rollout.prompts_per_step=100",
                             "tasks=[{id: k2rl/Arithmetic-v1}, {id: k2rl/Calculator-v1}]"])
    task_rates = {task_key("k2rl/Arithmetic-v1"): 0.1, task_key("k2rl/Calculator-v1"): 0.95}
    reqs = sample_requests(cfg, 3, success_rates=lambda keys: [task_rates.get(k) for k in keys])
    share = Counter(r.env_id for r in reqs)["k2rl/Arithmetic-v1"] / len(reqs)
    assert share > 0.8  # about 0.9 / (0.9 + 0.05) of the candidates' weight; uniform: 0.5
    no_rates = sample_requests(cfg, 3, success_rates=lambda keys: [None] * len(keys))
    assert 0.35 < Counter(r.env_id for r in no_rates)["k2rl/Arithmetic-v1"] / 100 < 0.65


def test_passk_keep_rule_and_pool():
    def group(*correct):
        return Group(Request("k2rl/Arithmetic-v1", 0, k=len(correct)), 0, [
            Trajectory(f"0:0:{i}", "k2rl/Arithmetic-v1", "arithmetic", "p", i, correct=bool(ok),
                       status=Status.DONE) for i, ok in enumerate(correct)])

    groups = [group(1, 1), group(0, 0), group(1, 0)]  # always, never, sometimes
    assert moderate(groups) == [False, False, True]
    cfg = load_config(None, ["rollout.passk_filter=2", "rollout.filter_pool=30"])
    seen = []

    def fake_rollout(reqs):
        seen.extend(reqs)
        return [group(*[i % 3 == 0 and j == 0 for j in range(r.k)]) for i, r in enumerate(reqs)]

    pool, stats = filter_pool(cfg, fake_rollout)
    assert stats == {"filter/candidates": 30, "filter/kept": 10} and len(pool) == 10
    assert {(r.k, r.temperature) for r in seen} == {(2, 1.0)}  # pass@2 at temperature 1
    assert sample_requests(cfg, 1, pool=pool)[0].seed in {r.seed for r in pool}
    with pytest.raises(ConfigError, match="kept none"):
        filter_pool(cfg, lambda reqs: [group(*[1] * r.k) for r in reqs])


def test_sampled_requests_carry_k_and_their_task_temperature():
    cfg = load_config(None, ["rollout.k=3", "rollout.prompts_per_step=6",
                             "tasks=[{id: k2rl/Arithmetic-v1, temperature: 0.7}, "
                             "{id: k2rl/Calculator-v1}]"])
    reqs = sample_requests(cfg, 1)
    assert {r.k for r in reqs} == {3} and [r.group for r in reqs] == list(range(6))
    temps = {r.env_id: r.temperature for r in reqs}
    assert temps == {"k2rl/Arithmetic-v1": 0.7, "k2rl/Calculator-v1": 1.0}
