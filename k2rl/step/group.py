"""The unit of work: a group, one prompt's K trajectories, typed from rollout to store.

A `Request` names a prompt (environment id and seed) and how many samples to draw for it; a
`Group` is that request with the trajectories sampled for it, and it is what the RL step
samples, rolls out, judges, harvests for critic pairs, stores, shards across workers and trains
on (so K is `len(group)`). A `Trajectory` is one episode with a single `status`. Both travel as
objects, across Ray too; only k2rl.runtime.store turns them into dicts, at the Redis edge (after
slime's `Sample`). The scalar reward is composed from named components in k2rl.step.reward.
"""
from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field

from k2rl.step import reward


class Status(str, enum.Enum):
    RUNNING = "running"  # mid-episode, inside a rollout call
    PAUSED = "paused"  # partial rollouts: stopped at the per-call budget, continued next step
    DONE = "done"  # the environment ended the episode and scored it
    TRUNCATED = "truncated"  # out of token budget: never scored by the environment


@dataclass
class Request:
    """One prompt: `k` episodes of env_id, each reset with the same seed."""
    env_id: str
    seed: int
    budget: int | None = None  # None: the environment's own budget
    split: str = "train"
    group: int = 0  # index of the group in its step
    temperature: float = 1.0  # 0 is greedy
    k: int = 1


@dataclass
class Trajectory:
    traj_id: str  # "{step}:{group}:{sample}", fixed at the step the episode began in
    env_id: str
    task: str
    prompt_id: str
    sample: int
    ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)  # 1 on the model's own tokens
    logp_engine: list[float] = field(default_factory=list)  # one per masked token
    messages: list[dict] = field(default_factory=list)
    rewards: dict[str, float] = field(default_factory=dict)  # named components, k2rl.step.reward
    correct: bool = False
    status: Status = Status.RUNNING
    n_tokens: int = 0
    turns: int = 0
    judged: bool = False  # the task's reward is the critic's (critic-rewarded environment)
    env_seconds: float = 0.0  # time in env.step: tools and the verifier's reward
    segments: int = 1  # rollout calls this trajectory spanned (partial rollouts)
    stale: int = 0  # leading logp_engine entries sampled by an earlier policy
    reply_start: int = 0  # index in ids where the model's current reply began (while paused)
    opening: int = 0  # messages before the model's first reply (0: up to the first user's)
    malformed_calls: int = 0  # tool calls the env could not read (envs.tool_calls), each answered
    # The final answer the verifier read in the last reply (TextEnv.read_answer): "" none found;
    # None where the verifier reads no single answer
    extracted: str | None = None

    @property
    def reward(self) -> float:
        return reward.total(self.rewards)

    @property
    def paused(self) -> bool:
        return self.status is Status.PAUSED

    @property
    def truncated(self) -> bool:
        return self.status is Status.TRUNCATED

    @property
    def _first_reply(self) -> int:
        if self.opening:
            return self.opening
        return next(i for i, m in enumerate(self.messages) if m["role"] == "user") + 1

    @property
    def prompt(self) -> str:
        """The user message the episode answers (the last of its opening conversation)."""
        return self.messages[self._first_reply - 1]["content"]

    @property
    def after_prompt(self) -> list[dict]:
        """The episode's messages after the user prompt: replies and tool results."""
        return self.messages[self._first_reply:]

    def to_dict(self) -> dict:
        return {**asdict(self), "status": self.status.value, "reward": self.reward}

    @classmethod
    def from_dict(cls, d: dict) -> Trajectory:
        fields = {k: v for k, v in d.items() if k != "reward"}  # derived, kept for readers
        return cls(**{**fields, "status": Status(d["status"])})


@dataclass
class Group:
    request: Request
    step: int  # the step the group was sampled in (its id keeps it when carried over)
    trajectories: list[Trajectory] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.step}:{self.request.group}"

    @property
    def paused(self) -> bool:
        """Partial rollouts: some member is still to be continued, so none is scored yet."""
        return any(t.paused for t in self.trajectories)

    @property
    def judged(self) -> bool:
        """The group's reward comes from the critic (a critic-rewarded environment)."""
        return any(t.judged for t in self.trajectories)

    @property
    def prompt(self) -> str:
        return self.trajectories[0].prompt

    @property
    def task(self) -> str:
        return self.trajectories[0].task

    def __len__(self) -> int:
        return len(self.trajectories)

    def __iter__(self):
        return iter(self.trajectories)

    def to_dict(self) -> dict:
        return {"request": asdict(self.request), "step": self.step,
                "trajectories": [t.to_dict() for t in self.trajectories]}

    @classmethod
    def from_dict(cls, d: dict) -> Group:
        return cls(Request(**d["request"]), d["step"],
                   [Trajectory.from_dict(t) for t in d["trajectories"]])


def trajectories(groups: list[Group]) -> list[Trajectory]:
    """Every trajectory of `groups`, group by group."""
    return [t for g in groups for t in g]


def group_size(groups: list[Group]) -> int:
    """The K shared by `groups` (the loss's baseline is computed over groups of equal size)."""
    sizes = {len(g) for g in groups}
    if len(sizes) > 1:
        raise ValueError(f"groups of different sizes {sorted(sizes)} in one batch")
    return sizes.pop() if sizes else 1
