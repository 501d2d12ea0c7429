"""Multi-turn rollouts: K environment instances per prompt, one batched generate per turn.

`rollout` is plain logic over a `generate` callable (k2rl.engine provides the vLLM one), so it
is tested without a model. Each trajectory keeps the exact token ids the engine sampled (prompt,
the model's replies, tool observations) with a mask that is 1 on the model's tokens, and the
engine's log-prob of each of those tokens. The token budget counts all of the model's tokens in
the episode: a reply cut at the budget is truncated and gets `truncation_penalty` as reward.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable

import gymnasium

import envs  # noqa: F401  (registers the k2rl environments)
from k2rl.chat import observation_ids, prompt_ids, reply_text


class EnvCrash(RuntimeError):
    """An environment raised inside reset() or step(); the message names it and the prompt."""


@dataclass
class Request:
    """One prompt: K episodes of env_id reset with the same seed."""
    env_id: str
    seed: int
    budget: int | None = None
    split: str = "train"
    group: int = 0
    temperature: float | None = None  # None: the rollout's default temperature


@dataclass
class Trajectory:
    traj_id: str
    env_id: str
    task: str
    prompt_id: str
    group: int
    sample: int
    ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    logp_engine: list[float] = field(default_factory=list)  # one per masked token
    messages: list[dict] = field(default_factory=list)
    reward: float = 0.0
    correct: bool = False
    truncated: bool = False
    n_tokens: int = 0
    turns: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


# generate(prompts: list of token-id lists, max_tokens: list[int], temperatures: list[float])
#   -> list of (token_ids, logprobs) pairs, one per prompt
Generate = Callable[[list[list[int]], list[int], list[float]], list[tuple[list[int], list[float]]]]


@dataclass
class _Episode:
    env: gymnasium.Env
    traj: Trajectory
    budget: int
    temperature: float
    done: bool = False


def start_episodes(requests: list[Request], k: int, tokenizer, step: int,
                   env_kwargs: dict | None = None, temperature: float = 1.0) -> list[_Episode]:
    episodes = []
    for req in requests:
        for i in range(k):
            env = gymnasium.make(req.env_id, **(env_kwargs or {}).get(req.env_id, {})).unwrapped
            try:
                obs, info = env.reset(seed=req.seed, options={"split": req.split})
            except Exception as e:
                raise EnvCrash(f"environment {req.env_id} crashed in reset(seed={req.seed}): "
                               f"{type(e).__name__}: {e}") from e
            traj = Trajectory(f"{step}:{req.group}:{i}", req.env_id, info["task"], info["prompt_id"],
                              req.group, i, messages=[{"role": "user", "content": obs}])
            traj.ids = prompt_ids(tokenizer, obs)
            traj.mask = [0] * len(traj.ids)
            temp = temperature if req.temperature is None else req.temperature
            episodes.append(_Episode(env, traj, req.budget or info["budget"], temp))
    return episodes


def rollout(requests: list[Request], k: int, tokenizer, generate: Generate, step: int = 0,
            truncation_penalty: float = 0.0, max_len: int = 256,
            env_kwargs: dict | None = None, temperature: float = 1.0) -> list[Trajectory]:
    """Play K episodes per request to the end; returns trajectories grouped by request.

    Each request samples at its own temperature if it has one (per-task schedules), else at
    `temperature`; all live episodes still share one generate call per turn.
    """
    episodes = start_episodes(requests, k, tokenizer, step, env_kwargs, temperature)
    while live := [e for e in episodes if not e.done]:
        max_tokens = [max(1, min(e.budget - e.traj.n_tokens, max_len - len(e.traj.ids))) for e in live]
        outputs = generate([e.traj.ids for e in live], max_tokens, [e.temperature for e in live])
        for episode, (tokens, logps) in zip(live, outputs):
            _advance(episode, tokens, logps, tokenizer, truncation_penalty, max_len)
    return [e.traj for e in episodes]


def _advance(e: _Episode, tokens: list[int], logps: list[float], tokenizer, penalty: float,
             max_len: int) -> None:
    """Append one model turn and step the environment with it."""
    t = e.traj
    t.ids += tokens
    t.mask += [1] * len(tokens)
    t.logp_engine += logps
    t.n_tokens += len(tokens)
    t.turns += 1
    closed = bool(tokens) and tokens[-1] == tokenizer.eos_token_id
    text = reply_text(tokenizer, tokens)
    t.messages.append({"role": "assistant", "content": text})
    if not closed and (t.n_tokens >= e.budget or len(t.ids) >= max_len):
        t.truncated, t.reward, e.done = True, penalty, True  # over budget: scored, not stepped
        return
    try:
        obs, reward, terminated, truncated, info = e.env.step(text)
    except Exception as err:
        raise EnvCrash(f"environment {t.env_id} crashed in step() on prompt {t.prompt_id}: "
                       f"{type(err).__name__}: {err}") from err
    if terminated or truncated:
        t.reward, t.correct, e.done = float(reward), bool(info.get("correct", False)), True
        return
    t.messages.append({"role": "tool", "content": obs})
    t.ids += observation_ids(tokenizer, obs, closed)
    t.mask += [0] * (len(t.ids) - len(t.mask))
