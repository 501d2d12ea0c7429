"""Supervised warm-start of the default model on demonstrations from the default environments.

Each demonstration is one episode played by the environment's scripted expert
(`TextEnv.expert_action`), laid out with k2rl.lm.chat, with the loss on the assistant's tokens only.
The recipe (k2rl.bootstrap.recipe) says how: the calculator expert calls its tool only `tool_rate`
of the time and guesses otherwise, so the warm-started policy is sometimes right: RL must find
that the tool pays. With `word_demos`, every instruction demonstration asks to include or avoid
a quoted word, so the model learns to copy it (k2rl/Instructions-v1's `word_constraint`). With
`critic_demo_rate`, some sequences are scripted judgments (k2rl.step.critic_demos):
an expert answer against a wrong one to a training-split prompt of a family that teaches judging,
with the critic's working, its check of each answer and the verdict (critic.layout). With
`copy_demo_rate`, some are copying drills (k2rl.bootstrap.copying): the critic's
checks copy a reply's words, which demonstrations alone never taught the default model to do.
"""
from __future__ import annotations

import math

import gymnasium
import numpy as np
import torch
from tqdm import tqdm

from critic.rubrics import load_rubrics
from envs import TeachesJudging  # importing envs registers the k2rl environments
from k2rl.bootstrap.copying import copy_drill
from k2rl.bootstrap.recipe import Recipe
from k2rl.lm.chat import conversation_ids
from k2rl.lm.logprobs import collate, token_logp
from k2rl.step.critic_demos import critic_demonstration

SFT_CHUNK_TOKENS = 2048  # padded tokens per length-sorted chunk of a warm-start batch (CPU)
# On a GPU, fewer and larger chunks: the default recipe's judging phase took 43 ms a step on an
# H200 with 16,384 (bench/archive/notebook.md, "The judge's build"), where launches, not
# FLOPs, bound it.
GPU_CHUNK_TOKENS = 16384


def make_demo_envs(cfg: Recipe) -> list:
    kwargs = {"k2rl/Calculator-v1": {"tool_rate": cfg.tool_rate},
              "k2rl/Instructions-v0": {"word_constraint": cfg.word_demos},
              "k2rl/Instructions-v1": {"word_constraint": cfg.word_demos}}
    return [gymnasium.make(env_id, **kwargs.get(env_id, {})).unwrapped for env_id in cfg.demo_tasks]


def instruction_scripts(cfg: Recipe) -> dict:
    """The instruction envs' options for the critic's scripts (envs/instructions.py) that a build
    with `cfg` teaches: {"misspell_rate": ..., "bounds_in_checks": ..., "compare_quoted": ...}."""
    return {"misspell_rate": cfg.instr_misspell_rate, "bounds_in_checks": cfg.instr_bounds,
            "compare_quoted": cfg.instr_compare}


def make_critic_envs(cfg: Recipe) -> list:
    """The demo tasks' environments whose scripted experts also teach judging; in them the
    calculator's expert always calls its tool and chat's never flatters (the right answers),
    and the instruction scripts take `instr_bounds`, `instr_misspell_rate` and `instr_compare`."""
    scripts = instruction_scripts(cfg)
    kwargs = {"k2rl/Calculator-v1": {"tool_rate": 1.0}, "k2rl/Chat-v1": {"hack_rate": 0.0},
              "k2rl/Instructions-v0": scripts, "k2rl/Instructions-v1": scripts}
    made = [gymnasium.make(env_id, **kwargs.get(env_id, {})).unwrapped
            for env_id in dict.fromkeys(cfg.demo_tasks)]
    return [env for env in made if isinstance(env, TeachesJudging)]


def demonstration(env, tokenizer, seed: int, rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """(ids, mask) of one expert episode on the train split; mask is 1 on the model's tokens
    (the conversation laid out as a rollout lays it out, k2rl.lm.chat.conversation_ids)."""
    obs, _ = env.reset(seed=seed, options={"split": "train"})
    messages = [{"role": "user", "content": obs}]
    terminated = truncated = False
    while not (terminated or truncated):
        text = env.expert_action(rng)
        messages.append({"role": "assistant", "content": text})
        obs, _, terminated, truncated, _ = env.step(text)
        if not (terminated or truncated):
            messages.append({"role": "tool", "content": obs})
    return conversation_ids(tokenizer, messages)


def length_chunks(lengths: list[int], budget: int = SFT_CHUNK_TOKENS) -> list[list[int]]:
    """Indices of `lengths` sorted by length and cut into chunks of at most `budget` padded
    tokens (a chunk's size times its longest), so a few long judgments are not padded together
    with many short demonstrations; a sequence longer than `budget` is a chunk of its own.

    >>> length_chunks([5, 1, 3, 3], budget=6)
    [[1, 2], [3], [0]]
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    chunks: list[list[int]] = []
    for i in order:
        if chunks and (len(chunks[-1]) + 1) * lengths[i] <= budget:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    return chunks


def bucketed_nll_backward(model, seqs: list, pad_id: int, budget: int | None = None) -> float:
    """Backward of the batch's mean token NLL in length-sorted chunks of at most `budget`
    padded tokens (None: SFT_CHUNK_TOKENS, or GPU_CHUNK_TOKENS for a model on a GPU), on the
    model's device; returns the loss.

    The same gradient as one padded batch (each chunk's summed NLL is divided by the whole
    batch's token count), without padding short demonstrations to the longest one.
    """
    device = next(model.parameters()).device
    budget = budget or (GPU_CHUNK_TOKENS if device.type == "cuda" else SFT_CHUNK_TOKENS)
    total = max(1, sum(sum(mask) for _, mask in seqs))
    loss = 0.0
    for chunk in length_chunks([len(ids) for ids, _ in seqs], budget):
        batch = collate([seqs[i] for i in chunk], pad_id, device)
        logp = token_logp(model, batch["input_ids"], batch["attention_mask"])
        part = -(logp * batch["loss_mask"]).sum() / total
        part.backward()
        loss += part.item()
    return loss


def cosine(steps: int):
    """The learning rate's factor at each step: a linear warm-up over the first 5% of `steps`,
    then a cosine from 1 down to 0.1 at the last step."""
    warmup = max(1, steps // 20)
    return lambda s: min(1.0, (s + 1) / warmup) * (
        0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, s / steps))))


def train_steps(model, tokenizer, sequence, steps: int, batch: int, lr: float, desc: str,
                progress: bool) -> dict:
    """`steps` AdamW steps of `model` in place, each on `batch` sequences from `sequence()`
    ((ids, mask) pairs), at `lr` times `cosine(steps)`; returns loss figures."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, cosine(steps))
    model.train()
    losses = []
    bar = tqdm(range(steps), desc=desc, disable=not progress, mininterval=5, miniters=20)
    for _ in bar:
        seqs = [sequence() for _ in range(batch)]
        opt.zero_grad(set_to_none=True)
        loss = bucketed_nll_backward(model, seqs, tokenizer.pad_token_id)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss)
        bar.set_postfix(loss=f"{loss:.3f}", refresh=False)
    model.eval()
    return {"first_loss": losses[0], "last_loss": float(np.mean(losses[-20:])), "steps": steps}


def warm_start(model, tokenizer, cfg: Recipe, progress: bool = True) -> dict:
    """Train `model` in place on fresh expert demonstrations; returns loss figures."""
    rng = np.random.default_rng(cfg.seed)
    demo_envs = make_demo_envs(cfg)
    critic_envs, rubrics = [], []
    if cfg.critic_demo_rate > 0:
        critic_envs, rubrics = make_critic_envs(cfg), load_rubrics()

    def sequence(rng: np.random.Generator) -> tuple[list[int], list[int]]:
        """A scripted judgment, a copying drill or an expert demonstration, at their rates."""
        u = rng.random() if critic_envs or cfg.copy_demo_rate else 1.0
        if critic_envs and u < cfg.critic_demo_rate:
            return critic_demonstration(critic_envs[int(rng.integers(len(critic_envs)))], tokenizer,
                                        int(rng.integers(2**31)), rng, rubrics)
        if u < (cfg.critic_demo_rate if critic_envs else 0.0) + cfg.copy_demo_rate:
            return copy_drill(tokenizer, rng)
        return demonstration(demo_envs[int(rng.integers(len(demo_envs)))], tokenizer,
                             int(rng.integers(2**31)), rng)

    return train_steps(model, tokenizer, lambda: sequence(rng), cfg.sft_steps, cfg.sft_batch,
                       cfg.sft_lr, "warm-start", progress)


def judging_phase(model, tokenizer, cfg: Recipe, progress: bool = True) -> dict:
    """Continue a warm-started `model` in place for `cfg.judge_steps` steps on batches of which
    `cfg.judge_share` are scripted judgments (training-split prompts, as in the warm-start) and
    the rest demonstrations, at `cfg.judge_lr` (warmed up, then down a cosine to a tenth, as the
    warm-start's); returns loss figures.

    In the warm-start a judgment's one-character decisions (the "!" after two different
    characters, chat's mismatch) are a sliver of the loss; here they get enough examples to be
    learnt, and the demonstrations keep the policy's skill (bench/archive/notebook.md, The
    judging phase)."""
    rng = np.random.default_rng(cfg.seed + 1)  # not the warm-start's draws again
    demo_envs, critic_envs, rubrics = make_demo_envs(cfg), make_critic_envs(cfg), load_rubrics()
    if not critic_envs:
        raise ValueError(f"the recipe's judge_steps needs a demo task that teaches judging; "
                         f"none of {cfg.demo_tasks} does")

    def sequence() -> tuple[list[int], list[int]]:
        if rng.random() < cfg.judge_share:
            return critic_demonstration(critic_envs[int(rng.integers(len(critic_envs)))], tokenizer,
                                        int(rng.integers(2**31)), rng, rubrics)
        return demonstration(demo_envs[int(rng.integers(len(demo_envs)))], tokenizer,
                             int(rng.integers(2**31)), rng)

    return train_steps(model, tokenizer, sequence, cfg.judge_steps, cfg.sft_batch, cfg.judge_lr,
                       "judging phase", progress)
