"""Critic SFT from preference pairs: K2's initialisation of the critic (sec. 3.2.2: its
ability is first taught on preference data, then refined in RL on verifiable pairs).

Each pair gives two judgments in the chat layout (critic.layout), one per order: the
request, the rubrics and both responses as the critic reads them at judging time
(k2rl.step.critic_engine.chat_critic_with), then the critic's reply: the pair's rationale where
it has one, "Verdict:" and the chosen response's letter. The loss falls on that reply. The ids
are built exactly as the chat critic builds the prompt it reads its verdict from
(k2rl.step.critic_ids.chat_verdict_prompt), so training and judging see the same tokens. The
critic's reply never holds anything the pair's labels gave it beyond the rationale the user
wrote; the request shown is the pair's prompt, without its answer key.

`k2rl critic train` runs it on a model folder and writes the trained model (k2rl.cli).
"""
from __future__ import annotations

import math
import random

import torch
from tqdm import tqdm

from critic.layout import chat_messages
from critic.pairs import Pair, pair_rubrics
from critic.rubrics import Rubric
from k2rl.lm.chat import turn_end_id
from k2rl.lm.logprobs import Passes, collate, cut
from k2rl.step.critic_ids import (chat_caps, chat_prompt_ids, chat_verdict_ids,
                                  chat_verdict_prompt, shorten)
from k2rl.step.schedules import decay

CHUNK_TOKENS = 4096  # padded tokens per length-sorted chunk of a batch on a CPU


def judgment_ids(tokenizer, max_len: int, pair: Pair, rubrics: list[Rubric],
                 chosen_first: bool) -> tuple[list[int], list[int]]:
    """(ids, mask) of one training judgment of `pair`, the chosen response shown first (A) or
    second (B); the mask is 1 on the critic's reply (rationale, "Verdict:", the letter, the
    turn's end)."""
    rules = pair_rubrics(pair, rubrics)
    q_cap, r_cap = chat_caps(tokenizer, max_len, rules, pair.prompt)
    question = shorten(tokenizer, pair.prompt, q_cap)
    chosen, rejected = (shorten(tokenizer, t, r_cap) for t in (pair.chosen, pair.rejected))
    first, second = (chosen, rejected) if chosen_first else (rejected, chosen)
    opened = chat_prompt_ids(tokenizer, chat_messages(question, rules, first, second))
    head = chat_verdict_prompt(tokenizer, opened, pair.rationale or "")
    _, letters = chat_verdict_ids(tokenizer)
    ids = head + [letters[0 if chosen_first else 1], turn_end_id(tokenizer)]
    return ids, [0] * len(opened) + [1] * (len(ids) - len(opened))


def examples(tokenizer, max_len: int, pairs: list[Pair], rubrics: list[Rubric]
             ) -> list[tuple[list[int], list[int]]]:
    """Both orders of every pair, so that a position is never the answer."""
    return [judgment_ids(tokenizer, max_len, p, rubrics, first)
            for p in pairs for first in (True, False)]


def verdict_loss_backward(model, seqs: list[tuple[list[int], list[int]]], pad_id: int) -> float:
    """Backward of the batch's mean NLL over the critic's reply tokens, a pass of at most
    CHUNK_TOKENS tokens at a time with the judgments of one pair packed under their shared
    prompt (k2rl.lm.logprobs.Passes; the output head on the reply's tokens alone); returns
    the loss."""
    device = next(model.parameters()).device
    total = max(1, sum(sum(mask) for _, mask in seqs))
    data = collate(seqs, pad_id, device)
    passes = Passes(CHUNK_TOKENS, shared=True)
    loss = 0.0
    for rows in passes.plan(data["input_ids"], data["attention_mask"], max_rows=len(seqs)):
        batch = cut(data, rows)
        part = -(passes.logp(model, batch) * batch["loss_mask"]).sum() / total
        part.backward()
        loss += part.item()
    return loss


def train(model, tokenizer, seqs: list[tuple[list[int], list[int]]], pad_id: int,
          epochs: float = 1.0, batch: int = 16, lr: float = 1e-5, seed: int = 0,
          progress: bool = True) -> dict:
    """AdamW on the judgments `seqs` in place: `epochs` passes in shuffled batches of `batch`,
    a warm-up then a cosine decay of `lr`; returns the first and last losses and the steps."""
    if not seqs:
        raise ValueError("critic SFT has no training judgments (every pair held out?)")
    rng = random.Random(seed)
    order: list[int] = []
    steps = max(1, math.ceil(len(seqs) * epochs / batch))
    while len(order) < steps * batch:
        order += rng.sample(range(len(seqs)), len(seqs))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0, betas=(0.9, 0.98))
    warmup = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(  # a linear warm-up, then a cosine to a tenth
        opt, lambda s: min(1.0, (s + 1) / warmup) * decay(s + 1, 1.0, 0.1, steps, "cosine"))
    model.train()
    losses = []
    bar = tqdm(range(steps), desc="critic SFT", disable=not progress, mininterval=5)
    for s in bar:
        opt.zero_grad(set_to_none=True)
        losses.append(verdict_loss_backward(
            model, [seqs[i] for i in order[s * batch:(s + 1) * batch]], pad_id))
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        bar.set_postfix(loss=f"{losses[-1]:.3f}", refresh=False)
    model.eval()
    tail = losses[-max(1, steps // 10):]
    return {"steps": steps, "judgments": len(seqs), "first_loss": losses[0],
            "last_loss": sum(tail) / len(tail)}

