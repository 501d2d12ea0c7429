"""Multi-turn rollouts: K environment instances per prompt, one batched generate per turn.

`rollout` is plain logic over a `generate` callable (k2rl.engine provides the vLLM one), so it
is tested without a model. Each trajectory keeps the exact token ids the engine sampled (prompt,
the model's replies, tool observations) with a mask that is 1 on the model's tokens, and the
engine's log-prob of each of those tokens. The token budget counts all of the model's tokens in
the episode: a reply cut at the budget is truncated and gets `truncation_penalty` as reward.

Partial rollouts (k1.5): with `partial_budget` > 0 an episode that has generated that many
tokens in this call is paused (even mid-reply) and returned with `paused=True` and no reward.
`rollout(..., resumed=[paused dicts])` continues them with the current policy: the environment
is rebuilt from its seed and the finished turns are replayed into it (environments are
deterministic given seed and actions), then generation goes on from the exact token ids.
"""
from __future__ import annotations

import time
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
    judged: bool = False  # the reward comes from the critic (k2rl.judge), not the env
    env_seconds: float = 0.0  # time in env.step: tools and the verifier's reward
    paused: bool = False
    segments: int = 1  # rollout calls this trajectory spanned (partial rollouts)
    stale: int = 0  # leading logp_engine entries sampled by an earlier policy
    resume: dict = field(default_factory=dict)  # seed, split, budget, reply_start while paused

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
    request: Request
    reply_start: int = 0  # index in traj.ids where the model's current reply began
    generated: int = 0  # model tokens generated in this rollout call
    done: bool = False

    def room(self, max_len: int, partial_budget: int) -> int:
        """Tokens the next generate call may produce for this episode."""
        room = min(self.budget - self.traj.n_tokens, max_len - len(self.traj.ids))
        if partial_budget:
            room = min(room, partial_budget - self.generated)
        return max(1, room)


def _make_env(req: Request, env_kwargs: dict | None):
    env = gymnasium.make(req.env_id, **(env_kwargs or {}).get(req.env_id, {})).unwrapped
    try:
        obs, info = env.reset(seed=req.seed, options={"split": req.split})
    except Exception as e:
        raise EnvCrash(f"environment {req.env_id} crashed in reset(seed={req.seed}): "
                       f"{type(e).__name__}: {e}") from e
    return env, obs, info


def start_episodes(requests: list[Request], k: int, tokenizer, step: int,
                   env_kwargs: dict | None = None, temperature: float = 1.0) -> list[_Episode]:
    episodes = []
    for req in requests:
        for i in range(k):
            env, obs, info = _make_env(req, env_kwargs)
            traj = Trajectory(f"{step}:{req.group}:{i}", req.env_id, info["task"], info["prompt_id"],
                              req.group, i, messages=[{"role": "user", "content": obs}])
            traj.ids = prompt_ids(tokenizer, obs)
            traj.mask = [0] * len(traj.ids)
            temp = temperature if req.temperature is None else req.temperature
            budget = req.budget or info["budget"]
            episodes.append(_Episode(env, traj, budget, temp, req, reply_start=len(traj.ids)))
    return episodes


def resume_episodes(paused: list[dict], env_kwargs: dict | None = None,
                    temperature: float = 1.0) -> list[_Episode]:
    """Rebuild paused episodes: reset each environment and replay its finished turns.

    A paused dict may carry `resume["temperature"]` (the task's temperature now); else
    `temperature` is used.
    """
    episodes = []
    for d in paused:
        traj = Trajectory(**{**d, "paused": False, "segments": d["segments"] + 1,
                             "stale": len(d["logp_engine"]), "resume": {}})
        r = d["resume"]
        req = Request(traj.env_id, r["seed"], r["budget"], r["split"], traj.group)
        env, obs, _ = _make_env(req, env_kwargs)
        for msg in traj.messages[1:]:
            if msg["role"] == "assistant":
                try:
                    obs, *_ = env.step(msg["content"])
                except Exception as err:
                    raise EnvCrash(f"environment {traj.env_id} crashed replaying prompt "
                                   f"{traj.prompt_id}: {type(err).__name__}: {err}") from err
            elif msg["content"] != obs:
                raise EnvCrash(f"environment {traj.env_id} is not deterministic: replaying "
                               f"paused trajectory {traj.traj_id} gave a different observation")
        temp = r.get("temperature", temperature)
        episodes.append(_Episode(env, traj, r["budget"], temp, req, reply_start=r["reply_start"]))
    return episodes


def rollout(requests: list[Request], k: int, tokenizer, generate: Generate, step: int = 0,
            truncation_penalty: float = 0.0, max_len: int = 256,
            env_kwargs: dict | None = None, temperature: float = 1.0,
            partial_budget: int = 0, resumed: list[dict] = ()) -> list[Trajectory]:
    """Play K episodes per request, plus the `resumed` paused ones, until each ends or pauses.

    Each request samples at its own temperature if it has one (per-task schedules), else at
    `temperature`; all live episodes still share one generate call per turn. Resumed
    trajectories come first in the result, then the new ones grouped by request.
    """
    episodes = (resume_episodes(list(resumed), env_kwargs, temperature)
                + start_episodes(requests, k, tokenizer, step, env_kwargs, temperature))
    while live := [e for e in episodes if not e.done]:
        max_tokens = [e.room(max_len, partial_budget) for e in live]
        outputs = generate([e.traj.ids for e in live], max_tokens, [e.temperature for e in live])
        for episode, (tokens, logps) in zip(live, outputs):
            _advance(episode, tokens, logps, tokenizer, truncation_penalty, max_len, partial_budget)
            if partial_budget and not episode.done and episode.generated >= partial_budget:
                _pause(episode)
    return [e.traj for e in episodes]


def _pause(e: _Episode) -> None:
    e.done, e.traj.paused = True, True
    e.traj.resume = {"seed": e.request.seed, "split": e.request.split, "budget": e.budget,
                     "reply_start": e.reply_start}


def _advance(e: _Episode, tokens: list[int], logps: list[float], tokenizer, penalty: float,
             max_len: int, partial_budget: int = 0) -> None:
    """Append generated tokens; once the reply is complete, step the environment with it.

    A reply that stopped at the per-call partial budget (not at <|eos|> or the episode budget)
    is left open: the episode pauses mid-reply and a later call goes on generating it.
    """
    t = e.traj
    t.ids += tokens
    t.mask += [1] * len(tokens)
    t.logp_engine += logps
    t.n_tokens += len(tokens)
    e.generated += len(tokens)
    closed = bool(tokens) and tokens[-1] == tokenizer.eos_token_id
    over = t.n_tokens >= e.budget or len(t.ids) >= max_len
    if not closed and not over and partial_budget and e.generated >= partial_budget:
        return  # paused mid-reply by the caller
    t.turns += 1
    text = reply_text(tokenizer, t.ids[e.reply_start:])
    t.messages.append({"role": "assistant", "content": text})
    if not closed and over:
        t.truncated, t.reward, e.done = True, penalty, True  # over budget: scored, not stepped
        return
    start = time.perf_counter()
    try:
        obs, reward, terminated, truncated, info = e.env.step(text)
        t.env_seconds += time.perf_counter() - start
    except Exception as err:
        raise EnvCrash(f"environment {t.env_id} crashed in step() on prompt {t.prompt_id}: "
                       f"{type(err).__name__}: {err}") from err
    if terminated or truncated:
        t.reward, t.correct, e.done = float(reward), bool(info.get("correct", False)), True
        t.judged = bool(info.get("judged", False))
        return
    t.messages.append({"role": "tool", "content": obs})
    t.ids += observation_ids(tokenizer, obs, closed)
    t.mask += [0] * (len(t.ids) - len(t.mask))
    e.reply_start = len(t.ids)


def finished_groups(trajs: list[dict], k: int) -> tuple[list[dict], list[dict]]:
    """(groups whose K members have all finished, in order; the rest, to carry to next step).

    Partial rollouts score a group only when all of it is done, so every trained sample keeps
    its full group baseline; the trainer expects each group's K samples to be consecutive.
    """
    groups: dict[str, list[dict]] = {}
    for t in trajs:
        groups.setdefault(t["traj_id"].rsplit(":", 1)[0], []).append(t)
    done, carry = [], []
    for members in groups.values():
        members.sort(key=lambda t: t["sample"])
        finished = len(members) == k and not any(t["paused"] for t in members)
        (done if finished else carry).extend(members)
    return done, carry
