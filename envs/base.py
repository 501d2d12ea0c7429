"""The base class of every k2rl environment: text observation, text action.

An episode is a short conversation. ``reset`` draws a problem and returns the
user message; each ``step`` takes the model's whole turn as text. A subclass
decides, in ``_step``, whether that turn is a tool call (the env replies with
the tool's output as the next observation) or the final answer (the default: the
episode terminates and ``score``, by default the verifier named by ``reward_name``,
rates it). The base does
the bookkeeping common to all tasks: turn counting, the turn limit, the
train/eval split, info dicts and the chat transcript.

Token budgets are enforced by the engine, which sees tokens; the env only
advertises its ``budget`` in ``info``.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass, field
from typing import Any

import gymnasium
import numpy as np

from envs.tool_calls import MALFORMED, MalformedCall
from rewards import get_reward, takes_format, takes_question
from rewards.extract import FORMATS as ANSWER_FORMATS, final_answer

# Every printable ASCII character: what a character-level model may emit.
CHARSET = string.printable
MAX_TEXT_LENGTH = 512
SPLITS = ("train", "eval")
# A generator whose key space has (almost) no problem in the requested split
# is a bug; fail loudly instead of looping forever.
MAX_DRAWS = 10_000


def split_of(key: str) -> str:
    """The split of the problem with canonical key ``key``.

    It depends on the key alone, so problems with different keys are split
    independently, whatever seeds or generators are used. About 10% is eval.
    Train and eval are disjoint as problems only if the key is the problem's
    identity up to its symmetries (see ``Problem.key``).
    """
    digest = int(hashlib.sha256(key.encode()).hexdigest(), 16)
    return "eval" if digest % 10 == 0 else "train"


def check_line(evidence: str, ok: bool) -> str:
    """A critic's check line: what it compared, then its finding.

    >>> check_line("85 vs 85", True), check_line("84 vs 85", False)
    ('85 vs 85: yes', '84 vs 85: no')
    """
    return f"{evidence}: {'yes' if ok else 'no'}"


def side_by_side(said: str, mine: str) -> str:
    """Two results compared a character at a time, left to right, up to the first difference:
    each position is the answer's character, its own character, then "=" or "!" ("_" pads the
    shorter). A small model fails to compare two whole numbers it has just written (bench/README:
    "-32 vs -33: yes" on 95% of wrong answers), but each step here looks only at the two
    characters before it, and the finding is the last mark.

    >>> side_by_side("-32", "-33"), side_by_side("85", "85"), side_by_side("132", "32")
    ('--=33=23!', '88=55=', '13!')
    """
    marks = []
    for i in range(max(len(said), len(mine))):
        s, m = said[i:i + 1] or "_", mine[i:i + 1] or "_"
        marks.append(f"{s}{m}{'=' if s == m else '!'}")
        if s != m:
            break
    return "".join(marks)


def compare_line(said: str, mine: str) -> str:
    """The check of a result against the critic's own: both, side by side, then the finding.

    >>> compare_line("-32", "-33"), compare_line("85", "85")
    ('-32 vs -33, --=33=23!: no', '85 vs 85, 88=55=: yes')
    """
    return check_line(f"{said} vs {mine}, {side_by_side(said, mine)}", said == mine)


def final_part(response: str, limit: int = 12) -> str:
    """What a response gives last: the text after its last "|" (a worked answer's result, a
    tool episode's final turn), at most ``limit`` characters."""
    return response.rsplit("|", 1)[-1].strip()[:limit]


def text_space() -> gymnasium.spaces.Text:
    """The observation and action space shared by every text env."""
    return gymnasium.spaces.Text(max_length=MAX_TEXT_LENGTH, min_length=0, charset=CHARSET)


def turns_and_results(messages: list[dict]) -> list[tuple[dict, list[str]]]:
    """Each assistant turn of a transcript with the tool results that follow it (one a call).

    >>> turns_and_results([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"},
    ...     {"role": "tool", "content": "1"}, {"role": "tool", "content": "2"},
    ...     {"role": "assistant", "content": "3"}])
    [({'role': 'assistant', 'content': 'a'}, ['1', '2']), ({'role': 'assistant', 'content': '3'}, [])]
    """
    out: list[tuple[dict, list[str]]] = []
    for m in messages:
        if m["role"] == "assistant":
            out.append((m, []))
        elif m["role"] == "tool" and out:
            out[-1][1].append(m["content"])
    return out


def has_expert(env: gymnasium.Env) -> bool:
    """Whether ``env`` (unwrapped) has a scripted expert: an ``expert_action`` of its own, not
    `TextEnv`'s, which raises. A plain gymnasium.Env has one only if it defines it."""
    expert = getattr(type(env), "expert_action", None)
    return callable(expert) and expert is not TextEnv.expert_action


@dataclass(frozen=True)
class Problem:
    """One task instance."""

    # The problem's identity up to its symmetries: every surface form of one problem (the
    # operands of a sum in either order, another template for the same fact, ...) has the
    # same key, so they share a split. It serves as prompt_id, so distinct prompt texts of
    # one problem share a prompt_id.
    key: str
    prompt: str  # the user message
    answer: Any  # what the verifier named by the env's reward_name expects
    # What decides the split when it must be coarser than the problem: problems that are not
    # the same but teach the same thing (sudoku puzzles cut from one solution grid) share it.
    # Empty: the key decides.
    split_key: str = field(default="", kw_only=True)


class TextEnv(gymnasium.Env[str, str]):
    """A text-in, text-out environment; subclasses set the attributes below.

    A subclass implements ``_draw`` (a problem from ``self.np_random``); a multi-turn one also
    ``_step`` (the tool's reply, or None for the final answer). Optional: ``score`` (a custom
    reward in place of the named verifier's) and ``expert_action`` (a scripted demonstrator,
    for the embedded default's warm-start and `k2rl envs check`). An env that teaches the
    critic its checks also subclasses ``envs.judging.TeachesJudging``.
    """

    metadata = {"render_modes": []}

    task: str  # task type name, e.g. "arithmetic"
    budget: int  # default max tokens the model may produce over all turns
    max_turns: int  # model turns before the episode ends without an answer
    reward_name: str  # the rewards/ verifier scoring the final answer
    # Where that verifier finds the final answer: auto, boxed, tag, gsm8k, last_number or bare
    # (rewards.extract); for verifiers that read one answer (math_equiv, exact_match, ...).
    answer_format: str = "auto"
    # JSON schemas of the env's tools, for chat templates that list them (envs.tool_calls)
    tools: tuple[dict, ...] = ()
    # True: no verifier in the reward; the policy-as-critic judges the episode (info["judged"])
    judged: bool = False

    def __init__(self, render_mode: str | None = None) -> None:
        if render_mode is not None:
            raise ValueError(f"{type(self).__name__} has no render modes, got {render_mode!r}")
        self.render_mode = None
        self.observation_space = text_space()
        self.action_space = text_space()
        self.problem: Problem | None = None
        self.malformed_calls = 0  # tool calls this episode that could not be read (in info if any)
        self.split = "train"
        self.turn = 0
        self.terminated = False
        self._messages: list[dict[str, str]] = []

    # --- hooks for subclasses -------------------------------------------

    def _draw(self) -> Problem:
        """A problem drawn with ``self.np_random``, ignoring the split (the one required hook)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _draw (a Problem)")

    def _step(self, action: str) -> str | list[str] | None:
        """The tool's reply if ``action`` is a tool call (a list: one reply to each of several
        calls, in order), None if it is the final answer. By default every action is the final
        answer: a multi-turn env overrides this."""
        return None

    def score(self, action: str) -> float:
        """The reward of ``action`` as the final answer: by default the verifier named by
        ``reward_name`` (rewards/), given the problem's ``answer`` (and, where it takes them,
        the prompt as the question and ``answer_format``). Override it for a custom score."""
        verifier = get_reward(self.reward_name)
        problem = self._require_active()
        extra: dict[str, Any] = {}
        if takes_question(verifier):  # an answer that copies the question's expression is no answer
            extra["questions"] = [problem.prompt]
        if takes_format(verifier):
            extra["fmt"] = self.answer_format
        return float(verifier([action], [problem.answer], **extra)[0])

    def expert_action(self, rng: np.random.Generator) -> str:
        """The scripted demonstrator's next action in the current state (optional: ask
        `has_expert(env)` first). The embedded default's warm-start and `k2rl envs check` use
        it; training does not."""
        raise NotImplementedError(
            f"{type(self).__name__} has no expert_action; only the embedded default's "
            f"warm-start, an env that teaches judging (envs.judging) and `k2rl envs check` use it")

    # --- gymnasium API --------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode on a problem from ``options["split"]`` (default "train")."""
        super().reset(seed=seed)
        split = (options or {}).get("split", "train")
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        self.problem = self._draw_in(split)
        self.split = split
        self.turn = 0
        self.malformed_calls = 0  # tool calls this episode that could not be read (in info if any)
        self.terminated = False
        self._messages = [{"role": "user", "content": self.problem.prompt}]
        return self.problem.prompt, self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Take the model's turn; a final answer or the last turn ends the episode."""
        self._require_active()
        self.turn += 1
        self._messages.append({"role": "assistant", "content": action})
        try:
            reply = self._step(action)
        except MalformedCall:  # a tool call that cannot be read: an error the model sees
            self.malformed_calls += 1
            reply = MALFORMED
        if reply is None:
            observation, reward, terminated, truncated, info = self._finish(self.score(action))
            extracted = self.read_answer(action)
            if extracted is not None:  # what the verifier read as the final answer
                info["extracted"] = extracted
            return observation, reward, terminated, truncated, info
        if self.turn >= self.max_turns:
            # Spending every turn on tools never answers: same as a wrong answer.
            return self._finish(0.0)
        # One tool message a call, as chat templates lay out several calls' results; the
        # observation is their replies one a line, and `info["tool_results"]` lists them when
        # there are several (k2rl.rollout lays each out as its own tool message).
        results = [reply] if isinstance(reply, str) else list(reply)
        self._messages += [{"role": "tool", "content": r} for r in results]
        several = {"tool_results": results} if len(results) > 1 else {}
        return "\n".join(results), 0.0, False, False, {**self._info(), **several}

    def render(self) -> None:
        """Nothing to draw; see ``messages`` for the transcript."""
        return None

    def messages(self) -> list[dict[str, str]]:
        """The episode so far as chat messages (copies, safe to mutate)."""
        return [dict(message) for message in self._messages]

    # --- bookkeeping ----------------------------------------------------

    def _draw_in(self, split: str) -> Problem:
        """Redraw until the problem's key falls in ``split`` (rejection sampling)."""
        for _ in range(MAX_DRAWS):
            problem = self._draw()
            if split_of(problem.split_key or problem.key) == split:
                return problem
        raise RuntimeError(f"{type(self).__name__} drew no {split} problem in {MAX_DRAWS} tries")

    def _require_active(self) -> Problem:
        """The current problem; acting outside an episode is a caller bug."""
        if self.problem is None:
            raise RuntimeError(f"{type(self).__name__}: call reset() before acting")
        if self.terminated:
            raise RuntimeError(f"{type(self).__name__}: the episode has terminated; call reset()")
        return self.problem

    def read_answer(self, action: str) -> str | None:
        """The final answer the verifier reads in ``action`` (rewards.extract, in this env's
        ``answer_format``), as written; "" where it finds none, "(hedged) x" or "(negated) x"
        where it finds one it scores 0; None for a verifier that reads no single answer
        (unit tests, IFEval's checks). Kept in the trajectory and shown by `k2rl rollouts`."""
        if not takes_format(get_reward(self.reward_name)):
            return None
        found = final_answer(action, self.answer_format) if isinstance(action, str) else None
        if found is None:
            return ""
        mark = "(hedged) " if found.hedged else "(negated) " if found.negated else ""
        return mark + action[found.start:found.end][:200]

    def _finish(self, reward: float) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """End the episode; the empty terminal observation is never shown to the model."""
        answer = self._require_active().answer
        self.terminated = True
        info = self._info()
        info["correct"] = reward >= 1.0  # correct means full credit
        info["answer"] = str(answer)
        return "", reward, True, False, info

    def _info(self) -> dict[str, Any]:
        """A fresh info dict (callers may keep and mutate it)."""
        assert self.problem is not None
        return {
            "task": self.task,
            "budget": self.budget,
            "prompt_id": self.problem.key,
            "split": self.split,
            "turn": self.turn,
        } | ({"malformed_calls": self.malformed_calls} if self.malformed_calls else {})
