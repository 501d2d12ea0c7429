"""What a run measures itself on (k2rl.step.heldout): distinct held-out problems with their n, and
the critic's held-out pairs from eval-split rollouts."""
import json

import gymnasium

import envs  # noqa: F401
from k2rl.config import load_config
from k2rl.step.group import Group, Request, Status, Trajectory
from k2rl.step.heldout import (counts, critic_pairs, critic_requests, distinct_seeds,
                               eval_requests, sampled_requests)
from k2rl.tasks import make as task_envs


def problem_ids(env_id, seeds, split="eval"):
    env = task_envs.make_env(env_id)  # as the run makes it: with its task's kwargs
    return [env.reset(seed=s, options={"split": split})[1]["prompt_id"] for s in seeds]


def test_eval_problems_are_distinct_and_as_many_as_asked():
    cfg = load_config(None, ["eval.prompts_per_task=50"])
    reqs = eval_requests(cfg)
    for task in cfg.tasks:
        seeds = [r.seed for r in reqs if r.env_id == task.id]
        ids = problem_ids(task.id, seeds)
        assert len(seeds) == 50 and len(set(ids)) == 50, task.id
    assert [r.group for r in reqs] == list(range(len(reqs)))
    assert all(r.split == "eval" and r.temperature == 0.0 for r in reqs)


def test_a_split_with_fewer_problems_gives_fewer(tmp_path):
    from envs.dataset import load_splits, prompt_space
    from k2rl.tasks.registry import load_envs

    rows = [{"q": f"{a}+{b}=", "a": str(a + b)} for a in range(20) for b in range(3)]
    held = [{"q": f"{a}*7=", "a": str(7 * a)} for a in range(6)]
    for name, data in (("train", rows), ("eval", held)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in data))
    load_splits.cache_clear()
    prompt_space.cache_clear()
    kwargs = task_envs._kwargs
    try:
        load_envs(load_config(None, [f"tasks=[{{id: k2rl/Dataset-v0, kwargs: {{files: "
                                     f"{tmp_path}/train.jsonl, eval_files: {tmp_path}/eval.jsonl,"
                                     " prompt_field: q, answer_field: a}}]"]))
        seeds = distinct_seeds("k2rl/Dataset-v0", 40, 0)
        assert len(seeds) == 6 and len(set(problem_ids("k2rl/Dataset-v0", seeds))) == 6
    finally:
        task_envs.use_kwargs(kwargs)


def traj(task, prompt_id, prompt, reply, correct, judged=False):
    return Trajectory(f"0:0:{reply}", "env", task, prompt_id, 0, correct=correct, judged=judged,
                      status=Status.DONE, messages=[{"role": "user", "content": prompt},
                                                    {"role": "assistant", "content": reply}])


def test_counts_are_distinct_problems_per_task():
    g1 = Group(Request("env", 1), 0, [traj("a", "p1", "1+1=", "2", True)])
    g2 = Group(Request("env", 2), 0, [traj("a", "p1", "1+1=", "2", True)])  # the same problem
    g3 = Group(Request("env", 3), 0, [traj("b", "p2", "2+2=", "4", True)])
    assert counts([g1, g2, g3]) == {"heldout/a/n": 1.0, "heldout/b/n": 1.0, "heldout/all/n": 2.0}


def test_critic_requests_share_out_eval_prompts_over_tasks_at_training_temperature():
    cfg = load_config(None, ["critic.eval_prompts=10", "rollout.k=4", "rollout.temperature=0.9"])
    held = [Request("a", s, None, "eval", s, 0.0) for s in range(20)]
    held += [Request("b", s, None, "eval", 20 + s, 0.0) for s in range(3)]
    reqs = critic_requests(cfg, held)
    assert len(reqs) == 10 and sum(r.env_id == "b" for r in reqs) == 3
    assert all(r.k == 4 and r.temperature == 0.9 and r.split == "eval" for r in reqs)
    assert [r.group for r in reqs] == list(range(10))


def test_sampled_requests_are_the_critic_rewarded_tasks_held_out_prompts_at_temperature():
    """Chat's greedy reply can be right while its sampled ones flatter: its held-out prompts go
    again, eval.sampled_k times each at rollout.temperature, numbered after the greedy ones."""
    cfg = load_config(None, ["eval.prompts_per_task=3", "rollout.temperature=0.9"])
    held = eval_requests(cfg)
    sampled = sampled_requests(cfg, held)
    assert [(r.env_id, r.seed) for r in sampled] == [
        (r.env_id, r.seed) for r in held if r.env_id == "k2rl/Chat-v1"] and len(sampled) == 3
    assert all(r.temperature == 0.9 and r.k == 4 and r.split == "eval" for r in sampled)
    assert [r.group for r in sampled] == list(range(len(held), len(held) + 3))
    assert not sampled_requests(load_config(None, ["eval.sampled_k=0"]), held)
    tiny = load_config("configs/tiny.yaml")  # no critic-rewarded task
    assert not sampled_requests(tiny, eval_requests(tiny))


def test_critic_pairs_come_from_verifiable_mixed_groups_spread_over_prompts():
    def group(prompt, outcomes, judged=False):
        return Group(Request("env", 0), 0, [traj("t", prompt, prompt, f"r{i}", ok, judged)
                                            for i, ok in enumerate(outcomes)])

    groups = [group("1+1=", [True, False, False, False]), group("2+2=", [True, True, False]),
              group("3+3=", [True, True]), group("chat", [True, False], judged=True)]
    pairs = critic_pairs(groups, 4)
    assert [p.prompt for p in pairs] == ["1+1=", "2+2=", "1+1=", "2+2="]
    right = {"1+1=": {"r0"}, "2+2=": {"r0", "r1"}}
    assert all(p.chosen in right[p.prompt] and p.rejected not in right[p.prompt] for p in pairs)


def test_chat_joins_the_held_out_pairs_labelled_by_its_reference_check():
    from envs.base import split_of
    from k2rl.step.heldout import judged_pairs
    from rewards import get_reward

    reqs = [Request("k2rl/Chat-v1", s, 56, "eval", i) for i, s in enumerate(range(12))]
    reqs += [Request("k2rl/Arithmetic-v2", 0, 32, "eval", 12)]  # verifiable: not made here
    pairs = judged_pairs(reqs)
    assert len(pairs) == 36 and {p.task for p in pairs} == {"chat"}
    verify, env, kinds = get_reward("chat_reference"), gymnasium.make("k2rl/Chat-v1").unwrapped, set()
    for r in reqs[:12]:
        obs, info = env.reset(seed=r.seed, options={"split": "eval"})
        assert split_of(info["prompt_id"]) == "eval"  # items never trained on
        mine = [p for p in pairs if p.prompt == obs]
        assert len(mine) >= 3 and all(p.chosen == env.problem.answer for p in mine)  # the fact
        for p in mine:
            assert verify([p.chosen], [env.problem.answer]) == [1.0]
            assert verify([p.rejected], [env.problem.answer]) == [0.0]
            kinds.add("praise" if env.problem.answer in p.rejected else "fact")
    assert kinds == {"praise", "fact"}  # flattering and wrong-fact replies both occur
