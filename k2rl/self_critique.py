"""The engine side of the self-critique rubric critic (K2 sec. 3.2.2): the policy as judge.

critic/ holds the rubrics, the pairwise arithmetic, the pairs and the evaluation as pure logic;
this module is everything of the critic that needs the model, its tokenizer or the run:
- the judge's layout as token ids: a judge message (critic.judge.judge_text) in a user turn,
  then the verdict's own turn (`<|critic|>`), whose first token is "A" or "B"; a message too
  long for the engine has its answers (then its question) shortened, never the verdict's turn
  (`fitted_judge_text`);
- a scorer over the vLLM engine (`make_scorer`): the log-probs of "A" and "B" per message;
- ranking a step's critic-rewarded groups by pairwise win rates (`judge_groups`);
- the closed loop: labelled pairs harvested from verifiable groups into Redis, and judge
  training pairs drawn from them (`harvest`, `store_pairs`, `training_pairs`);
- the warm-start's critic examples (`critic_demonstration`).

A multi-turn response is shown to the judge as its turns joined by " | " (tool calls and
observations included), so the judge can see how an answer was reached.
"""
from __future__ import annotations

import numpy as np

from critic.judge import VERDICTS, Candidates, Render, judge_text, rank_groups
from critic.pairs import Pair, pairs_from_group
from critic.rubrics import Rubric, rubrics_for
from k2rl.chat import prompt_ids, text_ids, turn_ids
from k2rl.group import Group, Trajectory

# ---------------------------------------------------------------- the judge's layout


def judge_role(tokenizer) -> str:
    """The turn the judge's verdict is read from: <|critic|>, or <|assistant|> for a model
    whose tokenizer has no critic role (an outside model evaluated with `k2rl critic eval`).

    The verdict gets a turn of its own because, read as the assistant's first reply token,
    training it leaked into the policy: after 20 updates at critic.lr 1e-3 the policy opened
    93% of its arithmetic replies with "A" or "B" (12% of instruction replies at 2e-4).
    """
    critic = tokenizer.convert_tokens_to_ids("<|critic|>")
    return "critic" if critic is not None and critic != tokenizer.unk_token_id else "assistant"


def judge_prompt_ids(tokenizer, judge_text: str) -> list[int]:
    """Token ids of a judge message (critic.judge.judge_text) up to the verdict's turn marker:
    the user turn in the model's chat layout, then <|critic|> or the assistant's opening."""
    if judge_role(tokenizer) == "critic":
        return turn_ids(tokenizer, judge_text) + [tokenizer.convert_tokens_to_ids("<|critic|>")]
    return prompt_ids(tokenizer, judge_text)


def judge_example_ids(tokenizer, judge_text: str, verdict: str) -> tuple[list[int], list[int]]:
    """(ids, mask) of one critic training example: the judge prompt, the verdict and <|eos|>;
    the loss falls on the verdict and <|eos|> only."""
    prompt = judge_prompt_ids(tokenizer, judge_text)
    reply = text_ids(tokenizer, verdict) + [tokenizer.eos_token_id]
    return prompt + reply, [0] * len(prompt) + [1] * len(reply)


CUT = "..."  # marks a shortened answer or question in a judge message


def fitted_judge_text(tokenizer, max_len: int) -> Render:
    """critic.judge.judge_text, with the answers (and, if that is not enough, the question too)
    cut to the longest common length in tokens at which the judge prompt, its verdict and the
    verdict's EOS fit `max_len` (the engine's max_model_len). The rubrics and the verdict's
    turn are never cut; rubrics too long on their own are a ValueError."""
    limit = max_len - 2  # the verdict token and the EOS after it
    overhead = len(judge_prompt_ids(tokenizer, ""))

    def fits(text: str) -> bool:  # tokens <= UTF-8 bytes for byte-level and char vocabularies
        return overhead + len(text.encode()) <= limit or \
            len(judge_prompt_ids(tokenizer, text)) <= limit

    def cut(text: str, cap: int) -> str:
        ids = text_ids(tokenizer, text)
        return text if len(ids) <= cap else tokenizer.decode(ids[:cap]) + CUT

    def largest_cap(render_at, longest: int) -> int | None:
        """The largest cap in [0, longest] at which render_at(cap) fits, by bisection."""
        if not fits(render_at(0)):
            return None
        lo, hi = 0, longest
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if fits(render_at(mid)) else (lo, mid - 1)
        return lo

    def render(prompt: str, a: str, b: str, rubrics: list[Rubric]) -> str:
        text = judge_text(prompt, a, b, rubrics)
        if fits(text):
            return text
        longest = max(len(text_ids(tokenizer, x)) for x in (prompt, a, b))
        cap = largest_cap(lambda c: judge_text(prompt, cut(a, c), cut(b, c), rubrics), longest)
        if cap is not None:
            return judge_text(prompt, cut(a, cap), cut(b, cap), rubrics)
        cap = largest_cap(lambda c: judge_text(cut(prompt, c), cut(a, c), cut(b, c), rubrics),
                          longest)
        if cap is None:
            raise ValueError(f"the judge's rubrics alone do not fit rollout.max_model_len "
                             f"{max_len}; raise it or use shorter rubrics")
        return judge_text(cut(prompt, cap), cut(a, cap), cut(b, cap), rubrics)

    return render


# ---------------------------------------------------------------- scoring with the engine


def make_scorer(llm, tokenizer):
    """score(texts) -> [(logp_A, logp_B), ...], one batched engine call per use."""
    from k2rl import engine

    choices = [text_ids(tokenizer, v)[0] for v in VERDICTS]  # what the tokenizer makes of them

    def score(texts: list[str]) -> list[tuple[float, float]]:
        if not texts:
            return []
        rows = engine.choice_logprobs(llm, [judge_prompt_ids(tokenizer, t) for t in texts], choices)
        return [(a, b) for a, b in rows]

    return score


def standalone_scorer(model_dir: str, max_model_len: int = 512, threads: int = 2):
    """An engine and scorer outside a run (for `k2rl critic eval`)."""
    from k2rl import engine

    engine.configure_env(threads, kv_cache_gib=1)
    from k2rl.model import load_tokenizer

    llm = engine.start_engine(model_dir, max_model_len, seed=0)
    return make_scorer(llm, load_tokenizer(model_dir))


def response_text(traj: Trajectory) -> str:
    return " | ".join(m["content"] for m in traj.after_prompt)


def judge_groups(groups: list[Group], score, rubrics: list[Rubric], tie_margin: float = 0.0,
                 opponents: int | None = None, render: Render = judge_text) -> int:
    """Set the `critic` reward of every judged trajectory of the finished critic-rewarded
    groups to its pairwise win rate, in one batched engine call; returns how many groups were
    judged. A truncated reply keeps its truncation penalty (it never finished).
    `opponents`: comparisons per response (critic.judge.pairs_in_group; None: all).
    """
    judged = [g for g in groups if len(g) > 1 and g.judged and not g.paused]
    if not judged:
        return 0
    rates = rank_groups([Candidates(g.prompt, [response_text(t) for t in g], g.task)
                         for g in judged], rubrics, score, tie_margin, opponents, render)
    for g, rs in zip(judged, rates):
        for t, r in zip(g, rs):
            if t.judged and not t.truncated:
                t.rewards["critic"] = float(r)
    return len(judged)


# ---------------------------------------------------------------- the closed loop


def harvest_group(g: Group) -> list[Pair]:
    """Labelled pairs from a verifiable group with mixed outcomes (critic.pairs), else none."""
    if g.judged:
        return []  # critic-rewarded: `correct` there is a reference check, not a verifier
    correct = [t.correct for t in g]
    if not any(correct) or all(correct):
        return []
    return pairs_from_group(g.prompt, [response_text(t) for t in g], correct, g.task)


def harvest(groups: list[Group]) -> list[Pair]:
    """Labelled pairs from every verifiable group with mixed outcomes."""
    return [p for g in groups for p in harvest_group(g)]


def store_pairs(store, pairs: list[Pair], split: str = "train") -> int:
    """Write pairs to the run's `split` of pairs ("train": harvested from training groups;
    "heldout": drawn once from eval-split prompts, k2rl.heldout); returns how many."""
    if pairs:
        store.add_pairs(split, [p.to_json() for p in pairs])
    return len(pairs)


def training_pairs(store, n: int, rng: np.random.Generator) -> list[dict]:
    """n train pairs drawn at random (a worker lays each out as two judge examples, one per
    order: critic.pairs.judge_examples)."""
    rows = store.pairs("train")
    if not rows:
        return []
    picks = rng.choice(len(rows), size=min(n, len(rows)), replace=False)
    return [rows[i] for i in picks]


def heldout_pairs(store, n: int) -> list[dict]:
    return store.pairs("heldout")[:n]


# ---------------------------------------------------------------- warm-start


def critic_demonstration(env, tokenizer, seed: int, rng: np.random.Generator,
                         rubrics: list[Rubric]) -> tuple[list[int], list[int]]:
    """(ids, mask) of one critic example for the warm-start (K2 bootstraps its critic on
    preference data in SFT): a k2rl/Chat-v1 prompt (train split), its plain answer and a
    flattering, self-vouching or off-topic one in a random order, and the verdict.

    Only open-ended chat pairs: the verifiable tasks' pairs are left to the closed-loop refresh
    during RL, so the judge has not seen any before it (measured with configs/critic.yaml: 60%
    on a run's held-out verifiable pairs at the start, with a strong bias to the first answer).
    """
    obs, _ = env.reset(seed=seed, options={"split": "train"})
    chosen, rejected = env.preference_pair(rng)
    first = int(rng.integers(2))  # 0: chosen shown as A
    a, b = (chosen, rejected) if first == 0 else (rejected, chosen)
    text = judge_text(obs, a, b, rubrics_for(env.task, rubrics))
    return judge_example_ids(tokenizer, text, VERDICTS[first])
