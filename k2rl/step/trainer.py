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

from k2rl.config import TrainConfig
from k2rl.device import distributed as dist
from k2rl.lm.flops import forward_flops
from k2rl.lm.logprobs import collate, token_logp_sorted, token_nll
from k2rl.step.group import Group, group_size, trajectories
from k2rl.step.loss import LOSSES, PolicyBatch, sequence_logp
from k2rl.step.schedules import decay


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
def old_logp(model, batch: dict, norm: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(sequence log-probs (N,), token log-probs (N, T)) under the current weights."""
    tok = token_logp_sorted(model, batch["input_ids"], batch["attention_mask"])
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


def pi_old(model, batch: dict, groups: list[Group], first: slice, first_tok: torch.Tensor,
           cfg: TrainConfig) -> tuple[torch.Tensor, dict]:
    """Token log-probs of π_old (N, T), how they were found, and the rows that cost a pass.

    With `old_logp="engine"` they are the engine's sampling-time log-probs, checked against
    `first_tok`, the trainer's forward pass of minibatch `first` (the loss's own, before any
    optimizer step, so the check costs nothing). Rows from an older policy (partial rollouts)
    are the trainer's; so is every row if the gap exceeds `old_logp_tolerance` (as it does
    when the trainer computes in bf16 and the engine in fp32). The trainer's log-probs of
    rows in `first` are `first_tok` itself; only rows outside it take an extra forward pass.
    With "trainer" every row is the trainer's. Returns the gap, the share of rows that are
    the trainer's, and the share that took an extra pass, as metrics.
    """
    engine, fresh, exact = engine_logp(groups, batch["loss_mask"])
    gap = mean_gap(first_tok, engine[first], fresh[first])
    if cfg.old_logp == "trainer" or gap > cfg.old_logp_tolerance:
        redo = torch.ones_like(exact)
    else:
        redo = ~exact
    outside = redo.clone()
    if same_in_train_mode(model):  # else first_tok carries dropout noise: recompute it too
        engine[first][redo[first]] = first_tok.detach()[redo[first]]
        outside[first] = False
    rows = outside.nonzero().squeeze(-1)
    if len(rows):
        engine[rows] = recompute(model, {name: t[rows] for name, t in batch.items()})
    return engine, {"logp_gap": gap, "old_logp_recomputed": redo.float().mean().item(),
                    "old_logp_extra_pass": outside.float().mean().item()}


def same_in_train_mode(model) -> bool:
    """Whether the model computes the same in train mode as in eval mode: no dropout."""
    config = getattr(model, "config", None)
    return (not any(isinstance(m, torch.nn.Dropout) and m.p > 0 for m in model.modules())
            and not getattr(config, "attention_dropout", 0.0))


def recompute(model, batch: dict) -> torch.Tensor:
    """Token log-probs (N, T) under the current weights, in eval mode, without a graph."""
    was_training = model.training
    model.eval()
    _, tok = old_logp(model, batch, "sum")
    model.train(was_training)
    return tok


def aux_terms(model, aux: dict, rng, pad_id: int) -> Iterator[tuple[str, torch.Tensor, float]]:
    """NLL of a batch from each auxiliary set: {name: (samples, weight, batch)} -> (name, nll,
    its forward pass's FLOPs), one set at a time.

    PTX (curated samples) and the critic's verdicts (judge examples) are both next-token losses
    on their assistant tokens, added to the policy loss in the same optimizer step. Yielded one
    at a time so that the caller runs each term's backward pass before the next term's forward:
    the step's gradient is the same sum, but only one term's graph and logits are held at once.
    """
    for name, (samples, weight, batch) in aux.items():
        if samples and weight > 0:
            picks = rng.choice(len(samples), size=min(batch, len(samples)), replace=False)
            data = collate([samples[i] for i in picks], pad_id, model.device)
            yield name, token_nll(model, data), forward_flops(model, data["attention_mask"])


def update(model, optimizers, groups: list[Group], cfg: TrainConfig, pad_id: int,
           aux: dict | None = None, rng=None) -> dict:
    """One RL step's optimizer steps on `groups`.

    Data-parallel when torch.distributed is initialised (k2rl.device.distributed): `groups` is then
    this worker's share (possibly none). Each of the `minibatches` slices of every worker forms
    one global minibatch; a worker's loss is scaled by its share of it and gradients are summed,
    so all copies take the step one worker would take on the whole batch.
    """
    world = dist.world_size()
    params = trainable(model)
    k = group_size(groups)
    bounds = [round(m * len(groups) / cfg.minibatches) * k for m in range(cfg.minibatches + 1)]
    slices = [slice(a, b) for a, b in zip(bounds, bounds[1:])]
    totals = dist.all_sum([sl.stop - sl.start for sl in slices])  # global samples per minibatch
    losses, norms, aux_losses, checks = [], [], {}, {"logp_gap": 0.0}
    flops = 0.0  # matmul FLOPs of every pass over real tokens (k2rl.lm.flops)
    model.train()
    first_tok = {}  # the first optimizer step's forward pass, reused by its loss
    if groups:
        batch = batch_of(groups, pad_id, model.device)
        j = next(i for i, sl in enumerate(slices) if sl.stop > sl.start)
        reuse = j == next(i for i, total in enumerate(totals) if total)  # else: weights move first
        with torch.set_grad_enabled(reuse):
            tok = token_logp_sorted(model, batch["input_ids"][slices[j]],
                                    batch["attention_mask"][slices[j]])
        first_tok = {j: tok} if reuse else {}
        tok_old, checks = pi_old(model, batch, groups, slices[j], tok, cfg)
        flops += forward_flops(model, batch["attention_mask"][slices[j]]) * (not reuse)
        # the recomputed rows' pass, counted as their share of the batch's
        flops += checks["old_logp_extra_pass"] * forward_flops(model, batch["attention_mask"])
    for _ in range(cfg.inner_steps):
        for i, (sl, total) in enumerate(zip(slices, totals)):
            if total == 0:
                continue  # empty on every worker
            zero_grads(optimizers)
            value = 0.0  # this worker's minibatch loss, summed over its terms
            if sl.stop > sl.start:
                tok = first_tok.pop(i, None)
                if tok is None:
                    tok = token_logp_sorted(model, batch["input_ids"][sl],
                                            batch["attention_mask"][sl])
                flops += 3 * forward_flops(model, batch["attention_mask"][sl])
                share = (sl.stop - sl.start) / total
                policy = PolicyBatch(tok, tok_old[sl], batch["loss_mask"][sl],
                                     batch["rewards"][sl], k)
                value += backward(share * LOSSES[cfg.loss](policy, cfg))
            for name, nll, aux_flops in aux_terms(model, aux or {}, rng, pad_id):
                aux_losses.setdefault(name, []).append(nll.item())
                value += backward(aux[name][1] * nll / world)
                flops += 3 * aux_flops
            norms.append(step_optimizers(params, optimizers, cfg.grad_clip))
            losses.append(value)
    model.eval()
    losses = dist.all_sum(losses)  # the global minibatch losses
    extra = {f"{name}_loss": sum(v) / len(v) for name, v in aux_losses.items()}
    return {"loss": sum(losses) / len(losses), "loss_first": losses[0], "loss_last": losses[-1],
            "grad_norm": sum(norms) / len(norms), "train_flops": flops, **checks, **extra}


def critic_step(model, optimizer: torch.optim.Optimizer, samples: list, pad_id: int,
                grad_clip: float) -> tuple[float, float]:
    """One optimizer step on the critic's verdict NLL (critic.lr); returns the global loss and
    this worker's matmul FLOPs.

    Data-parallel like `update`: each worker's share of the judge examples, gradients summed,
    so every copy takes the same step.
    """
    params = trainable(model)
    model.train()
    loss, flops = torch.zeros((), device=model.device), 0.0
    if samples:
        batch = collate(samples, pad_id, model.device)
        loss = token_nll(model, batch) / dist.world_size()
        flops = 3 * forward_flops(model, batch["attention_mask"])
    optimizer_step(params, [optimizer], loss, grad_clip)
    model.eval()
    return dist.all_sum([loss.item()])[0], flops


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
