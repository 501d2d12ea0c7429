"""Multi-turn rollouts: K environment instances per request, one batched generate per turn.

`rollout` is plain logic over a `generate` callable (k2rl.device.engine provides the vLLM one), so it
is tested without a model. It turns requests into groups (k2rl.step.group): each trajectory keeps the
exact token ids the engine sampled (prompt, the model's replies, tool observations) with a mask
that is 1 on the model's tokens, and the engine's log-prob of each of those tokens. The token
budget counts all of the model's tokens in the episode: a reply cut at the budget ends the
episode as TRUNCATED, with the `truncation` reward component, and so does a tool observation
that would leave no room in the engine's `max_model_len`.

Partial rollouts (k1.5): with `partial_budget` > 0 an episode that has generated that many
tokens in this call is PAUSED (even mid-reply) and its group is returned unscored.
`rollout(..., carried=[paused groups])` continues their paused members with the current policy:
the environment is rebuilt from the group's request and the finished turns are replayed into it
(environments are deterministic given seed and actions), then generation goes on from the exact
token ids.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable

import gymnasium

import envs  # noqa: F401  (registers the k2rl environments)
from k2rl.lm.chat import NoContinuation, observation_ids, prompt_ids, reply_text, stop_ids
from k2rl.step.group import Group, Request, Status, Trajectory
from k2rl.tasks.make import make_env


class EnvCrash(RuntimeError):
    """An environment raised inside reset() or step(); the message names it and the prompt."""


# generate(prompts: list of token-id lists, max_tokens: list[int], temperatures: list[float])
#   -> list of (token_ids, logprobs) pairs, one per prompt
Generate = Callable[[list[list[int]], list[int], list[float]], list[tuple[list[int], list[float]]]]


@dataclass
class _Episode:
    env: gymnasium.Env
    traj: Trajectory
    budget: int
    temperature: float
    generated: int = 0  # model tokens generated in this rollout call

    @property
    def live(self) -> bool:
        return self.traj.status is Status.RUNNING

    def room(self, max_len: int, partial_budget: int) -> int:
        """Tokens the next generate call may produce for this episode."""
        room = min(self.budget - self.traj.n_tokens, max_len - len(self.traj.ids))
        if partial_budget:
            room = min(room, partial_budget - self.generated)
        return max(1, room)


def _make_env(req: Request):
    env = make_env(req.env_id)
    try:
        obs, info = env.reset(seed=req.seed, options={"split": req.split})
    except Exception as e:
        raise EnvCrash(f"environment {req.env_id} crashed in reset(seed={req.seed}): "
                       f"{type(e).__name__}: {e}") from e
    return env, obs, info


def opening(obs: str, info: dict) -> list[dict]:
    """The conversation an episode starts from: the env's system prompt (`info["system"]`,
    unless its `info["context"]` has one), the turns before the observation
    (`info["context"]`, e.g. a dataset's chat `messages`), then the observation as the user's."""
    context = list(info.get("context") or [])
    system = info.get("system") if not any(m["role"] == "system" for m in context) else None
    head = [{"role": "system", "content": system}] if system else []
    return head + context + [{"role": "user", "content": obs}]


def start_group(req: Request, step: int, tokenizer, max_len: int
                ) -> tuple[Group, list[_Episode]]:
    group, episodes = Group(req, step), []
    for i in range(req.k):
        env, obs, info = _make_env(req)
        traj = Trajectory(f"{group.id}:{i}", req.env_id, info["task"], info["prompt_id"], i,
                          messages=opening(obs, info))
        traj.opening = len(traj.messages)
        traj.ids = prompt_ids(tokenizer, traj.messages, getattr(env, "tools", ()))
        if len(traj.ids) >= max_len:
            raise EnvCrash(f"environment {req.env_id} gave prompt {traj.prompt_id!r} of "
                           f"{len(traj.ids)} tokens, which leaves no room for a reply in "
                           f"engine.max_model_len {max_len}; raise it or shorten the prompt")
        traj.mask = [0] * len(traj.ids)
        traj.reply_start = len(traj.ids)
        group.trajectories.append(traj)
        episodes.append(_Episode(env, traj, req.budget or info["budget"], req.temperature))
    return group, episodes


def resume_group(group: Group) -> list[_Episode]:
    """Rebuild the paused members of a carried group: reset each environment and replay its
    finished turns; the members that had finished wait as they are."""
    episodes = []
    for i, t in enumerate(group.trajectories):
        if not t.paused:
            continue
        t = group.trajectories[i] = replace(t, status=Status.RUNNING, segments=t.segments + 1,
                                            stale=len(t.logp_engine))
        env, obs, info = _make_env(group.request)
        _replay(env, obs, t)
        budget = group.request.budget or info["budget"]
        episodes.append(_Episode(env, t, budget, group.request.temperature))
    return episodes


def _replay(env, obs: str, t: Trajectory) -> None:
    for msg in t.after_prompt:
        if msg["role"] == "assistant":
            try:
                obs, *_ = env.step(msg["content"])
            except Exception as err:
                raise EnvCrash(f"environment {t.env_id} crashed replaying prompt "
                               f"{t.prompt_id}: {type(err).__name__}: {err}") from err
        elif msg["content"] != obs:
            raise EnvCrash(f"environment {t.env_id} is not deterministic: replaying "
                           f"paused trajectory {t.traj_id} gave a different observation")


def rollout(requests: list[Request], tokenizer, generate: Generate, step: int = 0,
            truncation_penalty: float = 0.0, max_len: int = 256, partial_budget: int = 0,
            carried: list[Group] = (), stops: set[int] | None = None) -> list[Group]:
    """Play `req.k` episodes per request, plus the paused members of `carried` groups, until
    each ends or pauses.

    Each request samples at its own temperature; all live episodes still share one generate
    call per turn. Carried groups come first in the result, then one new group per request.
    `stops`: the ids that end a reply (k2rl.lm.chat.stop_ids; None: the tokenizer's EOS).
    """
    stops = stops or stop_ids(tokenizer)
    carried = list(carried)
    episodes = [e for g in carried for e in resume_group(g)]
    groups = []
    for req in requests:
        group, new = start_group(req, step, tokenizer, max_len)
        groups.append(group)
        episodes += new
    while live := [e for e in episodes if e.live]:
        max_tokens = [e.room(max_len, partial_budget) for e in live]
        outputs = generate([e.traj.ids for e in live], max_tokens, [e.temperature for e in live])
        for episode, (tokens, logps) in zip(live, outputs):
            _advance(episode, tokens, logps, tokenizer, stops, truncation_penalty, max_len,
                     partial_budget)
            if partial_budget and episode.live and episode.generated >= partial_budget:
                episode.traj.status = Status.PAUSED
    return carried + groups


def _advance(e: _Episode, tokens: list[int], logps: list[float], tokenizer, stops: set[int],
             penalty: float, max_len: int, partial_budget: int = 0) -> None:
    """Append generated tokens; once the reply is complete, step the environment with it.

    A reply that stopped at the per-call partial budget (not at the end-of-turn token or the
    episode budget) is left open: the episode pauses mid-reply and a later call goes on
    generating it.
    """
    t = e.traj
    t.ids += tokens
    t.mask += [1] * len(tokens)
    t.logp_engine += logps
    t.n_tokens += len(tokens)
    e.generated += len(tokens)
    closed = bool(tokens) and tokens[-1] in stops
    over = t.n_tokens >= e.budget or len(t.ids) >= max_len
    if not closed and not over and partial_budget and e.generated >= partial_budget:
        return  # paused mid-reply by the caller
    t.turns += 1
    text = reply_text(tokenizer, t.ids[t.reply_start:])
    t.messages.append({"role": "assistant", "content": text})
    if not closed and over:  # over budget: not stepped, so not scored by the environment
        t.status, t.rewards["truncation"] = Status.TRUNCATED, penalty
        return
    start = time.perf_counter()
    try:
        obs, reward, terminated, truncated, info = e.env.step(text)
        t.env_seconds += time.perf_counter() - start
        t.malformed_calls = int(info.get("malformed_calls", t.malformed_calls))
    except Exception as err:
        raise EnvCrash(f"environment {t.env_id} crashed in step() on prompt {t.prompt_id}: "
                       f"{type(err).__name__}: {err}") from err
    if terminated or truncated:
        t.status, t.rewards["task"] = Status.DONE, float(reward)
        t.correct, t.judged = bool(info.get("correct", False)), bool(info.get("judged", False))
        t.extracted = info.get("extracted")
        return
    results = info.get("tool_results") or [obs]  # several calls: one tool message each
    try:
        tail = observation_ids(tokenizer, t.messages, results, tokens[-1] if closed else None,
                               getattr(e.env, "tools", ()))
    except NoContinuation:  # e.g. Mistral after a malformed call: the turn is the final answer
        t.status, t.rewards["task"], t.correct = Status.DONE, 0.0, False
        return
    except ValueError as err:  # a template that rewrites the past (k2rl.lm.chat.delta_ids)
        raise EnvCrash(f"environment {t.env_id}'s tool result on prompt {t.prompt_id} cannot "
                       f"be laid out: {err}") from err
    if len(t.ids) + len(tail) >= max_len:  # no room for the observation and a reply token
        t.status, t.rewards["truncation"] = Status.TRUNCATED, penalty
        return
    t.ids += tail
    t.messages += [{"role": "tool", "content": r} for r in results]
    t.mask += [0] * (len(t.ids) - len(t.mask))
    t.reply_start = len(t.ids)
