"""The training engine: optimizers and the policy update of one RL step.

`update` takes π_old (the rollout policy: the engine holds the trainer's weights) from the
engine's sampling-time log-probs, checked against the trainer's first forward pass and
recomputed when they disagree (`train.old_logp`), then takes `inner_steps x minibatches`
optimizer steps on the policy loss (`train.loss`, k2rl.step.loss: the Kimi loss by default).
Minibatches split by whole groups, so every sample keeps its
group baseline.
"""
from __future__ import annotations

from collections.abc import Iterator

import torch
import torch.nn.functional as F

from k2rl.config import TrainConfig
from k2rl.device import distributed as dist
from k2rl.lm.logprobs import Passes, collate, cut, token_logp_sorted, token_nll
from k2rl.step.group import Group, group_size, trajectories
from k2rl.step.loss import LOSSES, PolicyBatch, Whole, sequence_logp
from k2rl.step.schedules import decay


def passes_of(cfg: TrainConfig) -> Passes:
    """How the trainer cuts its batches into forward passes: train.micro_batch_tokens and
    train.shared_prefix (k2rl.lm.logprobs.Passes)."""
    return Passes(cfg.micro_batch_tokens, cfg.shared_prefix)


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig) -> list[torch.optim.Optimizer]:
    """AdamW for everything, or Muon for 2-D hidden matrices plus AdamW for the rest.

    Embeddings (tied with the output head here) stay with AdamW, as the Muon recipe says.
    Muon uses `adjust_lr_fn="match_rms_adamw"` so the same learning rate suits both.
    Only trainable parameters get a place (and state): with LoRA (k2rl.device.lora), the adapter's
    matrices, which are all 2-D, so Muon takes every one of them.
    """
    if cfg.optimizer == "adamw":
        return [torch.optim.AdamW(trainable(model), lr=cfg.lr, weight_decay=cfg.weight_decay)]
    matrices, rest = split_for_muon(model)
    muon = torch.optim.Muon(matrices, lr=cfg.lr, weight_decay=cfg.weight_decay,
                            adjust_lr_fn="match_rms_adamw")
    if not rest:  # a LoRA adapter is matrices only
        return [muon]
    return [muon, torch.optim.AdamW(rest, lr=cfg.lr, weight_decay=cfg.weight_decay)]


def split_for_muon(model: torch.nn.Module) -> tuple[list, list]:
    matrices, rest = [], []
    for name, p in model.named_parameters():
        if p.requires_grad:
            (matrices if p.ndim == 2 and "embed" not in name else rest).append(p)
    return matrices, rest


def trainable(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    """The parameters an optimizer steps: all of them, or the adapter's alone under LoRA."""
    return [p for p in model.parameters() if p.requires_grad]


def set_lr(optimizers: list[torch.optim.Optimizer], lr: float) -> None:
    for opt in optimizers:
        for group in opt.param_groups:
            group["lr"] = lr


def lr_at(step: int, cfg: TrainConfig, total: int) -> float:
    """Linear warm-up, then constant or decaying to lr * lr_min_ratio (RL steps count from 1)."""
    if cfg.warmup_steps and step <= cfg.warmup_steps:
        return cfg.lr * step / cfg.warmup_steps
    after = step - cfg.warmup_steps
    return decay(after, cfg.lr, cfg.lr * cfg.lr_min_ratio, max(1, total - cfg.warmup_steps),
                 cfg.lr_decay)


def batch_of(groups: list[Group], pad_id: int, device: torch.device | str = "cpu"
             ) -> dict[str, torch.Tensor]:
    """The groups' trajectories as one right-padded batch (N, T), with their rewards (N,)."""
    trajs = trajectories(groups)
    batch = collate([(t.ids, t.mask) for t in trajs], pad_id, device)
    batch["rewards"] = torch.tensor([t.reward for t in trajs], dtype=torch.float32,
                                    device=device)
    return batch


@torch.no_grad()
def old_logp(model, batch: dict, norm: str, passes: Passes = Passes()
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """(sequence log-probs (N,), token log-probs (N, T)) under the current weights."""
    tok = token_logp_sorted(model, batch["input_ids"], batch["attention_mask"],
                            max_tokens=passes.max_tokens, loss_mask=batch["loss_mask"],
                            shared=passes.shared)
    return sequence_logp(tok, batch["loss_mask"], norm), tok


def engine_logp(groups: list[Group], mask: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The engine's sampling-time log-probs laid out like the batch's tokens.

    Returns (token log-probs (N, T), fresh (N, T): the masked tokens the current policy
    sampled, exact (N,): rows whose every masked token it sampled). The earlier segments of a
    partial rollout were sampled by an older policy, so their rows are not exact.
    """
    tok = torch.zeros_like(mask)
    fresh = torch.zeros_like(mask, dtype=torch.bool)
    exact = torch.ones(mask.shape[0], dtype=torch.bool, device=mask.device)
    for i, t in enumerate(trajectories(groups)):
        pos = mask[i].nonzero().squeeze(-1)
        n = min(len(pos), len(t.logp_engine))
        tok[i, pos[:n]] = torch.tensor(t.logp_engine[:n], dtype=tok.dtype, device=tok.device)
        fresh[i, pos[t.stale:n]] = True
        exact[i] = t.stale == 0 and n == len(pos)
    return tok, fresh, exact


def mean_gap(trainer: torch.Tensor, engine: torch.Tensor, fresh: torch.Tensor) -> float:
    """Mean |trainer − engine| token log-prob over the fresh tokens (0 if there are none)."""
    diffs = (trainer.detach().float() - engine.float()).abs()[fresh]
    return diffs.mean().item() if diffs.numel() else 0.0


def engine_gap(tok_logp: torch.Tensor, groups: list[Group], mask: torch.Tensor) -> float:
    """Mean |trainer − engine| log-prob over the tokens the current policy sampled."""
    engine, fresh, _ = engine_logp(groups, mask)
    return mean_gap(tok_logp, engine, fresh)


def pi_old(model, batch: dict, groups: list[Group], first, first_tok: torch.Tensor,
           cfg: TrainConfig, later=None) -> tuple[torch.Tensor, dict, torch.Tensor]:
    """Token log-probs of π_old (N, T), how they were found, and the rows still to be filled.

    With `old_logp="engine"` they are the engine's sampling-time log-probs, checked against
    `first_tok`, the trainer's forward pass of rows `first` (the loss's own, before any
    optimizer step, so the check costs nothing). Rows from an older policy (partial rollouts)
    are the trainer's; so is every row if the gap exceeds `old_logp_tolerance` (as it does
    when the trainer computes in bf16 and the engine in fp32). The trainer's log-probs of
    rows in `first` are `first_tok` itself; rows in `later` (the rest of the first
    minibatch, whose own forward passes come before any optimizer step) are left to those
    passes and returned as `pending` (N,); only other rows take an extra pass. With "trainer"
    every row is the trainer's. `first` and `later` are slices or index tensors. Returns the
    gap, the share of rows that are the trainer's, and the share that took an extra pass, as
    metrics.
    """
    n = batch["loss_mask"].shape[0]
    first, later = rows_of(first, n), rows_of(later if later is not None else slice(0, 0), n)
    engine, fresh, exact = engine_logp(groups, batch["loss_mask"])
    gap = mean_gap(first_tok, engine[first], fresh[first])
    if cfg.old_logp == "trainer" or gap > cfg.old_logp_tolerance:
        redo = torch.ones_like(exact)
    else:
        redo = ~exact
    outside = redo.clone()
    pending = torch.zeros_like(redo)
    if same_in_train_mode(model):  # else the passes carry dropout noise: recompute them too
        mine = redo[first].cpu()
        engine[first[mine]] = first_tok.detach()[mine.to(first_tok.device)]
        outside[first] = False
        pending[later] = redo[later]
        outside[later] = False
    rows = outside.nonzero().squeeze(-1)
    if len(rows):
        engine[rows] = recompute(model, {name: t[rows] for name, t in batch.items()},
                                 passes_of(cfg))
    return engine, {"logp_gap": gap, "old_logp_recomputed": redo.float().mean().item(),
                    "old_logp_extra_pass": outside.float().mean().item()}, pending


def rows_of(rows, n: int) -> torch.Tensor:
    """An index tensor of the rows a slice (or index tensor) of `n` rows picks."""
    return torch.arange(n)[rows] if isinstance(rows, slice) else rows


def same_in_train_mode(model) -> bool:
    """Whether the model computes the same in train mode as in eval mode: no dropout."""
    config = getattr(model, "config", None)
    return (not any(isinstance(m, torch.nn.Dropout) and m.p > 0 for m in model.modules())
            and not getattr(config, "attention_dropout", 0.0))


def recompute(model, batch: dict, passes: Passes = Passes()) -> torch.Tensor:
    """Token log-probs (N, T) under the current weights, in eval mode, without a graph."""
    was_training = model.training
    model.eval()
    _, tok = old_logp(model, batch, "sum", passes)
    model.train(was_training)
    return tok


def nll_backward(model, samples: list, weight: float, pad_id: int, passes: Passes
                 ) -> tuple[float, float]:
    """Accumulate the gradient of `weight` x the mean NLL of `samples`' assistant tokens, one
    pass (`passes`) at a time; returns (the NLL, the passes' matmul FLOPs). PTX (curated
    samples) and the critic's verdicts (critic examples) are such terms."""
    data = collate(samples, pad_id, model.device)
    total = data["loss_mask"].sum().clamp(min=1)
    nll, flops = 0.0, 0.0
    for rows in passes.plan(data["input_ids"], data["attention_mask"]):
        part = cut(data, rows)
        nll += backward(weight * token_nll(model, part, total, passes)) / (weight or 1.0)
        flops += 3 * passes.flops(model, part)
    return nll, flops


def aux_terms(model, aux: dict, rng, pad_id: int, passes: Passes
              ) -> Iterator[tuple[str, float, float]]:
    """Backward passes of the NLL of a batch from each auxiliary set: {name: (samples, weight,
    batch)} -> (name, nll, its passes' FLOPs), one set at a time, added to the policy loss's
    gradient in the same optimizer step; each micro-batch's backward runs before the next
    forward, so only one micro-batch's graph and logits are held at once."""
    for name, (samples, weight, batch) in aux.items():
        if samples and weight > 0:
            picks = rng.choice(len(samples), size=min(batch, len(samples)), replace=False)
            nll, flops = nll_backward(model, [samples[i] for i in picks],
                                      weight / dist.world_size(), pad_id, passes)
            yield name, nll, flops


def policy_backward(model, batch: dict, rows: torch.Tensor, tok_old: torch.Tensor,
                    whole: Whole, cfg: TrainConfig, k: int, share: float,
                    firsts: dict, pending: torch.Tensor) -> tuple[float, float]:
    """Accumulate the policy loss's gradient over minibatch `rows`, one micro-batch of at most
    `train.micro_batch_tokens` tokens at a time: each micro-batch's loss is its rows' share of
    the minibatch's (k2rl.step.loss.PolicyBatch), so the gradient is the one pass's. A
    micro-batch whose forward pass was taken already (`firsts`, by its first row) reuses it;
    `pending` rows take π_old from their own pass (pi_old). Returns (the loss, FLOPs)."""
    value, flops = 0.0, 0.0
    passes = passes_of(cfg)
    for micro in passes.plan(batch["input_ids"][rows], batch["attention_mask"][rows]):
        sel = rows[micro]
        part = cut(batch, sel)
        L = part["input_ids"].shape[1]
        tok = firsts.pop(int(sel[0]), None)
        if tok is None:
            tok = passes.logp(model, part)  # (n, L)
        need = pending[sel].cpu()  # (n,)
        if need.any():
            tok_old[sel[need], :L] = tok.detach()[need.to(tok.device)]
            pending[sel[need]] = False
        policy = PolicyBatch(tok, tok_old[sel, :L], part["loss_mask"],
                             batch["rewards"][sel], k, whole.take(micro))
        value += backward(share * LOSSES[cfg.loss](policy, cfg))
        flops += 3 * passes.flops(model, part)
    return value, flops


def update(model, optimizers, groups: list[Group], cfg: TrainConfig, pad_id: int,
           aux: dict | None = None, rng=None) -> dict:
    """One RL step's optimizer steps on `groups`.

    Each minibatch's forward and backward passes run in micro-batches of at most
    `train.micro_batch_tokens` tokens with the gradients accumulated (`policy_backward`), so
    memory does not grow with the batch. Data-parallel when torch.distributed is initialised
    (k2rl.device.distributed): `groups` is then this worker's share (possibly none). Each of
    the `minibatches` slices of every worker forms one global minibatch; a worker's loss is
    scaled by its share of it and gradients are summed, so all copies take the step one
    worker would take on the whole batch.
    """
    world = dist.world_size()
    params = trainable(model)
    k = group_size(groups)
    bounds = [round(m * len(groups) / cfg.minibatches) * k for m in range(cfg.minibatches + 1)]
    slices = [torch.arange(a, b) for a, b in zip(bounds, bounds[1:])]
    totals = dist.all_sum([len(rows) for rows in slices])  # global samples per minibatch
    losses, norms, aux_losses, checks = [], [], {}, {"logp_gap": 0.0}
    flops = 0.0  # matmul FLOPs of every pass over real tokens (k2rl.lm.flops)
    model.train()
    firsts = {}  # the first optimizer step's first forward pass, reused by its loss
    if groups:
        batch = batch_of(groups, pad_id, model.device)
        j = next(i for i, rows in enumerate(slices) if len(rows))
        reuse = j == next(i for i, total in enumerate(totals) if total)  # else: weights move first
        first = slices[j][passes_of(cfg).plan(batch["input_ids"][slices[j]],
                                          batch["attention_mask"][slices[j]])[0]]
        part = cut(batch, first)
        with torch.set_grad_enabled(reuse):
            tok = passes_of(cfg).logp(model, part)
        T = batch["input_ids"].shape[1]
        padded = F.pad(tok.detach(), (0, T - tok.shape[1]))
        later = slices[j][~torch.isin(slices[j], first)] if reuse else None
        tok_old, checks, pending = pi_old(model, batch, groups, first, padded, cfg, later)
        firsts = {int(first[0]): tok} if reuse else {}
        flops += passes_of(cfg).flops(model, part) * (not reuse)
        # the recomputed rows' pass, counted as their share of the batch's
        flops += checks["old_logp_extra_pass"] * passes_of(cfg).flops(model, batch)
        wholes = [Whole.of(batch["rewards"][rows], batch["loss_mask"][rows], k)
                  if len(rows) else None for rows in slices]
    for _ in range(cfg.inner_steps):
        for i, (rows, total) in enumerate(zip(slices, totals)):
            if total == 0:
                continue  # empty on every worker
            zero_grads(optimizers)
            value = 0.0  # this worker's minibatch loss, summed over its terms
            if len(rows):
                loss, passes = policy_backward(model, batch, rows, tok_old, wholes[i], cfg, k,
                                               len(rows) / total, firsts, pending)
                value += loss
                flops += passes
            for name, nll, aux_flops in aux_terms(model, aux or {}, rng, pad_id, passes_of(cfg)):
                aux_losses.setdefault(name, []).append(nll)
                value += aux[name][1] * nll / world
                flops += aux_flops
            norms.append(step_optimizers(params, optimizers, cfg.grad_clip))
            losses.append(value)
    model.eval()
    losses = dist.all_sum(losses)  # the global minibatch losses
    extra = {f"{name}_loss": sum(v) / len(v) for name, v in aux_losses.items()}
    return {"loss": sum(losses) / len(losses), "loss_first": losses[0], "loss_last": losses[-1],
            "grad_norm": sum(norms) / len(norms), "train_flops": flops, **checks, **extra}


def critic_step(model, optimizer: torch.optim.Optimizer, samples: list, pad_id: int,
                grad_clip: float, passes: Passes = Passes()) -> tuple[float, float]:
    """One optimizer step on the critic's verdict NLL (critic.lr), one pass (`passes`) at a
    time; returns the global loss and this worker's matmul FLOPs.

    Data-parallel like `update`: each worker's share of the critic examples, gradients summed,
    so every copy takes the same step.
    """
    params = trainable(model)
    model.train()
    zero_grads([optimizer])
    loss, flops = 0.0, 0.0
    if samples:
        loss, flops = nll_backward(model, samples, 1.0 / dist.world_size(), pad_id, passes)
        loss /= dist.world_size()
    step_optimizers(params, [optimizer], grad_clip)
    model.eval()
    return dist.all_sum([loss])[0], flops


def zero_grads(optimizers: list[torch.optim.Optimizer]) -> None:
    for opt in optimizers:
        opt.zero_grad(set_to_none=True)


def backward(loss: torch.Tensor) -> float:
    """Accumulate `loss`'s gradient (if it has a graph: an empty shard has none); its value."""
    if loss.requires_grad:
        loss.backward()
    return loss.item()


def step_optimizers(params: list, optimizers: list[torch.optim.Optimizer], grad_clip: float
                    ) -> float:
    """The accumulated gradients summed over data-parallel workers, clipped, one step of every
    optimizer; returns the gradient norm."""
    dist.all_reduce_grads(params)
    clip = grad_clip if grad_clip > 0 else float("inf")
    norm = torch.nn.utils.clip_grad_norm_(params, clip).item()
    for opt in optimizers:
        opt.step()
    return norm


def optimizer_step(params: list, optimizers: list[torch.optim.Optimizer], loss: torch.Tensor,
                   grad_clip: float) -> float:
    """One optimizer step on `loss`'s gradient; returns the gradient norm."""
    zero_grads(optimizers)
    backward(loss)
    return step_optimizers(params, optimizers, grad_clip)
