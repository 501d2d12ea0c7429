"""What a run measures itself on, drawn once per run: held-out prompts and held-out critic pairs.

- Held-out prompts (`eval_requests`): up to `eval.prompts_per_task` *distinct* problems of each
  task's eval split, told apart by the environment's canonical problem key (`prompt_id`, which
  names a problem up to its symmetries), so no problem is counted twice. Seeds are tried from
  `eval.seed` on until that many distinct problems are found or the split stops giving new ones;
  a split with fewer has fewer, and every figure carries its n (`heldout/<task>/n`).
- Held-out prompts sampled (`sampled_requests`): a critic-rewarded task's held-out prompts are
  also sampled `eval.sampled_k` times at the training temperature, since its greedy reply can
  be right while a share of its sampled ones flatter (`heldout/<task>/sampled_accuracy`).
- Held-out critic pairs (`critic_pairs`): labelled pairs from rollouts of eval-split prompts,
  sampled for this purpose before the first step with the starting policy at the training
  temperature. The policy never trains on these prompts (eval split) and they are never
  harvested into the critic's training pairs, so `critic/accuracy` is measured on data the model
  has not seen in any role, and on the same pairs at every evaluation.
- Held-out pairs of critic-rewarded tasks (`judged_pairs`): their rollouts have no verifier to
  label them, so each eval-split prompt gives a reply made by the env's scripted expert (chat:
  the item's fact) against wrong ones the env makes (a wrong fact, another item's fact,
  praise or self-praise), labelled by the env's reference check, which is never a reward.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict

import numpy as np

from critic.pairs import Pair
from envs import TeachesJudging  # importing envs registers the k2rl environments
from k2rl.config import Config
from k2rl.step.critic_demos import expert_transcript
from k2rl.step.critic_loop import harvest_group
from k2rl.step.group import Group, Request
from k2rl.tasks.make import make_env
from rewards import get_reward

# Stop looking for more distinct problems after this many draws in a row gave none.
PATIENCE = 500


def distinct_seeds(env_id: str, n: int, first_seed: int, split: str = "eval") -> list[int]:
    """Seeds from `first_seed` on whose problems are pairwise distinct, at most n of them."""
    env = make_env(env_id)
    seen, seeds, seed, since_new = set(), [], first_seed, 0
    while len(seeds) < n and since_new < max(PATIENCE, 5 * n):
        _, info = env.reset(seed=seed, options={"split": split})
        if info["prompt_id"] in seen:
            since_new += 1
        else:
            seen.add(info["prompt_id"])
            seeds.append(seed)
            since_new = 0
        seed += 1
    return seeds


def split_leaks(env_id: str, train_draws: int = 2000, eval_problems: int = 200) -> dict:
    """Check an environment's held-out split against its training split, for any environment
    (an outside one included): which of up to `eval_problems` distinct eval problems also occur
    among `train_draws` training draws, by the environment's declared problem key
    (`prompt_id`) or by the exact prompt text, whitespace aside. The text check does not rely
    on the key: an environment whose key misses a symmetry still leaks identical prompts.
    """
    env = make_env(env_id)

    def draw(seed: int, split: str) -> tuple[str, str]:
        obs, info = env.reset(seed=seed, options={"split": split})
        return info["prompt_id"], " ".join(str(obs).split())

    evals = [draw(s, "eval") for s in distinct_seeds(env_id, eval_problems, 0)]
    trains = [draw(s, "train") for s in range(10 ** 6, 10 ** 6 + train_draws)]
    train_keys, train_texts = {k for k, _ in trains}, {t for _, t in trains}
    return {"env_id": env_id, "eval_problems": len(evals), "train_draws": train_draws,
            "train_problems": len(train_keys),
            "by_key": sorted({k for k, _ in evals if k in train_keys}),
            "by_text": sorted({t for _, t in evals if t in train_texts})}


def eval_requests(cfg: Config) -> list[Request]:
    """Greedy requests for up to eval.prompts_per_task distinct eval problems of every task."""
    out = []
    for task in cfg.tasks:
        for seed in distinct_seeds(task.id, cfg.eval.prompts_per_task, cfg.eval.seed):
            out.append(Request(task.id, seed, task.budget, "eval", len(out), temperature=0.0))
    return out


def sampled_requests(cfg: Config, eval_reqs: list[Request]) -> list[Request]:
    """The critic-rewarded tasks' held-out prompts again, each sampled `eval.sampled_k` times
    at the training temperature of step 1 (the same at every evaluation), numbered after
    `eval_reqs`."""
    judged = judged_tasks(cfg)
    picked = [r for r in eval_reqs if r.env_id in judged] if cfg.eval.sampled_k else []
    return [dataclasses.replace(r, group=len(eval_reqs) + i, temperature=cfg.rollout.temperature,
                                k=cfg.eval.sampled_k) for i, r in enumerate(picked)]


def counts(groups: list[Group]) -> dict[str, float]:
    """`heldout/<task>/n`: the distinct problems each held-out figure is over."""
    by_task = defaultdict(set)
    for g in groups:
        for t in g:
            by_task[t.task].add((t.env_id, t.prompt_id))
            by_task["all"].add((t.env_id, t.prompt_id))
    return {f"heldout/{task}/n": float(len(keys)) for task, keys in by_task.items()}


def critic_requests(cfg: Config, eval_reqs: list[Request]) -> list[Request]:
    """`critic.eval_prompts` eval-split prompts (shared out over the tasks as evenly as the
    splits allow), each sampled K times at the training temperature of step 1."""
    by_task = defaultdict(list)
    for r in eval_reqs:
        by_task[r.env_id].append(r)
    picked, i = [], 0
    while len(picked) < cfg.critic.eval_prompts and any(i < len(rs) for rs in by_task.values()):
        picked += [rs[i] for rs in by_task.values() if i < len(rs)]
        i += 1
    return [Request(r.env_id, r.seed, r.budget, "eval", n, cfg.rollout.temperature, cfg.rollout.k)
            for n, r in enumerate(picked[:cfg.critic.eval_prompts])]


def critic_evaluated(cfg) -> bool:
    """Whether a run evaluates its critic on held-out pairs: where the critic's refresh trains
    it, or where a task's reward comes from it (a critic-rewarded env), refresh or not."""
    return refreshes(cfg) or bool(judged_tasks(cfg))


def refreshes(cfg) -> bool:
    """Whether the closed loop trains the critic: `critic.refresh`, or where it is null,
    whether some task's reward comes from the critic."""
    return cfg.critic.refresh if cfg.critic.refresh is not None else bool(judged_tasks(cfg))


def judged_tasks(cfg) -> set[str]:
    """The ids of the run's critic-rewarded tasks (an env with `judged`: chat)."""
    return {t.id for t in cfg.tasks if getattr(make_env(t.id), "judged", False)}


def judged_pairs(requests: list[Request], per_prompt: int = 3) -> list[Pair]:
    """Labelled pairs for the critic-rewarded tasks among `requests` (eval split): the
    expert's reply against up to `per_prompt` distinct wrong replies, each checked by the
    env's reference verifier (chosen scores 1, rejected under 1)."""
    envs_ = {env_id: make_env(env_id) for env_id in {r.env_id for r in requests}}
    out = []
    for r in requests:
        env = envs_[r.env_id]
        if not (getattr(env, "judged", False) and isinstance(env, TeachesJudging)):
            continue
        env.hack_rate = 0.0  # the expert's reply is the plain answer
        rng = np.random.default_rng([r.seed, 7])
        obs, _ = env.reset(seed=r.seed, options={"split": "eval"})
        chosen = expert_transcript(env, rng)
        env.reset(seed=r.seed, options={"split": "eval"})
        verify, answer = get_reward(env.reward_name), env.problem.answer
        wrong = list(dict.fromkeys(env.rejected_response(rng) for _ in range(8 * per_prompt)))
        wrong = [w for w in wrong if verify([w], [answer])[0] < 1.0][:per_prompt]
        if verify([chosen], [answer])[0] >= 1.0:
            out += [Pair(obs, chosen, w, env.task) for w in wrong]
    return out


def critic_pairs(groups: list[Group], n: int) -> list[Pair]:
    """Up to n labelled pairs from the verifiable groups with mixed outcomes, spread over as
    many prompts as there are (one pair per prompt in turn)."""
    per_prompt = [harvest_group(g) for g in groups]
    out, i = [], 0
    while len(out) < n and any(i < len(ps) for ps in per_prompt):
        out += [ps[i] for ps in per_prompt if i < len(ps)]
        i += 1
    return out[:n]
