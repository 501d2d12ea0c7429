"""Token log-probs and NLL of right-padded (ids, mask) batches: what the trainer, the PTX and
critic losses and the warm-start all score with.

A mask is 1 on the tokens a loss counts (the model's own replies), 0 on prompts, tool
observations and padding.

Shared prefixes: a group's K samples begin with the same prompt (on a chat model, tens of
tokens of template and system prompt before a reply of a few tens). With `shared=True` rows
that share a prefix are packed into one sequence, the prefix once and each row's own tokens
after it, under a mask that lets each row's tokens see the prefix and themselves only and
positions that continue the prefix's (`shared_packs`, `packed_logp`): the same log-probs and
gradients, with the prefix computed once a pack instead of once a row.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from k2rl.lm.flops import sequence_flops
from k2rl.lm.precision import attention_for, autocast


def collate(seqs: list[tuple[list[int], list[int]]], pad_id: int,
            device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    """Right-pad (ids, mask) pairs into tensors of shape (B, T) on `device`."""
    T = max(len(ids) for ids, _ in seqs)
    input_ids = torch.full((len(seqs), T), pad_id, dtype=torch.long)
    loss_mask = torch.zeros((len(seqs), T), dtype=torch.float32)
    attention = torch.zeros((len(seqs), T), dtype=torch.long)
    for i, (ids, mask) in enumerate(seqs):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        loss_mask[i, : len(ids)] = torch.tensor(mask, dtype=torch.float32)
        attention[i, : len(ids)] = 1
    batch = {"input_ids": input_ids, "loss_mask": loss_mask, "attention_mask": attention}
    return {name: t.to(device) for name, t in batch.items()}


# Above this many logits in a batch (B·T·V), log-probs are computed chunk by chunk over the
# tokens (a 151,936-token vocabulary makes 0.6 GB of fp32 logits per 1,000 tokens).
CHUNK_LOGITS = 2 ** 26
# Logits in one chunk of the output head: 2^24 (64 MB in fp32) is 110 tokens of a 151,936-word
# vocabulary. The backward pass of a chunk holds its logits in the matmul's dtype, an fp32 copy
# and the fp32 softmax and gradient at once, about 4x that; chunks of whole rows (the earlier
# layout, 256 positions x every row: 16 rows of a 0.5B step were one 97 M-logit chunk) held
# 1.5 GB at once there.
CHUNK_HEAD = 2 ** 24


def token_logp(model, input_ids: torch.Tensor, attention_mask: torch.Tensor,
               max_logits: int = CHUNK_LOGITS, only: torch.Tensor | None = None,
               shared: bool = False, max_tokens: int | None = None) -> torch.Tensor:
    """Log-prob of each token given its prefix, shape (B, T); position 0 and padding get 0.
    With `only` (B, T), just the tokens where it is nonzero get theirs (the others 0), and the
    output head runs on those alone: a critic's verdict is a few tokens of a long prompt.

    A batch with more than `max_logits` logits never holds them all: the decoder's hidden
    states of the real (unpadded) tokens, flattened over the batch, go through the output head
    `chunk_tokens` tokens at a time, each chunk recomputed in the backward pass (activation
    checkpointing), so peak memory is one chunk of fp32 logits, and padding costs no head
    matmul. The values and gradients are those of the one-shot path.

    The model's matmuls run in the dtype `k2rl.lm.precision.enable` set (bf16 autocast by
    default where the hardware has it); the log-softmax is always fp32.
    """
    if shared:
        return packed_logp(model, input_ids, attention_mask, only, max_tokens)
    B, T = input_ids.shape
    head = model.get_output_embeddings()
    real = attention_mask[:, 1:] > 0  # (B, T-1): positions whose token is not padding
    if only is not None:
        real = real & (only[:, 1:] > 0)
    elif B * T * head.weight.shape[0] <= max_logits:
        with autocast(model), attention_for(model, T):
            logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1]
        logp = torch.log_softmax(logits.float(), dim=-1)  # (B, T-1, V)
        picked = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)  # (B, T-1)
        return F.pad(picked * real, (1, 0))
    with autocast(model), attention_for(model, T):
        hidden = model.get_decoder()(input_ids=input_ids,
                                     attention_mask=attention_mask).last_hidden_state  # (B, T, H)
    return _head_logp(model, hidden[:, :-1][real], input_ids[:, 1:][real], real)


def _head_logp(model, hidden: torch.Tensor, targets: torch.Tensor, where: torch.Tensor
               ) -> torch.Tensor:
    """(B, T) log-probs from the hidden states (N, H) that predict `targets` (N,), the
    positions `where` (B, T-1) picks: the output head `chunk_tokens` tokens at a time, each
    chunk recomputed in the backward pass."""
    step = chunk_tokens(model.get_output_embeddings().weight.shape[0])
    parts = [checkpoint(_picked_logp, model, hidden[s:s + step], targets[s:s + step],
                        use_reentrant=False) for s in range(0, len(targets), step)]
    picked = hidden.new_zeros(where.shape, dtype=torch.float32)
    picked = picked.masked_scatter(where, torch.cat(parts)) if parts else picked
    return F.pad(picked, (1, 0))


# Packing rows under a shared prefix pays where it saves at least this many tokens: a pack is
# one longer sequence, and attention over it costs the square of its length.
MIN_SAVED = 16


def shared_packs(rows: list[list[int]], max_tokens: int | None = None
                 ) -> list[tuple[list[int], int]]:
    """Rows (token lists) grouped under shared prefixes: [(row indices, shared tokens)].

    Rows are taken in sorted order, so rows with a common prefix are neighbours; a row joins
    the last pack where that saves at least MIN_SAVED tokens and keeps the pack's size (the
    prefix once, then each row's own tokens) within `max_tokens`. A pack of one row shares
    all of it.

    >>> shared_packs([[1] * 20 + [2], [3, 4], [1] * 20 + [5, 6]])
    [([0, 2], 20), ([1], 2)]
    """
    packs: list[list] = []  # [row indices, shared, their tokens in all]
    last = None
    for i in sorted(range(len(rows)), key=rows.__getitem__):
        row = rows[i]
        if packs:
            members, shared, total = packs[-1]
            common = min(shared, _common_prefix(rows[last], row))
            size = total - (len(members) - 1) * shared
            grown = total + len(row) - len(members) * common
            if size + len(row) - grown >= MIN_SAVED and (max_tokens is None
                                                         or grown <= max_tokens):
                packs[-1] = [members + [i], common, total + len(row)]
                last = i
                continue
        packs.append([[i], len(row), len(row)])
        last = i
    return [(members, shared) for members, shared, _ in packs]


def packed_size(rows: list[list[int]], pack: tuple[list[int], int]) -> int:
    """Tokens of a pack: its shared prefix once, then each row's own tokens."""
    members, shared = pack
    return sum(len(rows[i]) for i in members) - (len(members) - 1) * shared


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def packed_logp(model, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                only: torch.Tensor | None = None, max_tokens: int | None = None
                ) -> torch.Tensor:
    """`token_logp` of right-padded rows with shared prefixes computed once (`shared_packs`).

    Each pack is one sequence: its prefix, then each row's own tokens, whose positions go on
    from the prefix's and whose attention sees the prefix and the row's earlier tokens, never
    another row's. A row's token is predicted by the hidden state of its predecessor in that
    row, so values and gradients are those of one pass per row. With `only`, the output head
    runs on the tokens it picks alone (the others get 0). Where no rows share a prefix, this is
    `token_logp`'s own pass.
    """
    B, T = input_ids.shape
    lengths = attention_mask.sum(-1).tolist()
    rows = [input_ids[i, :n].tolist() for i, n in enumerate(lengths)]
    packs = shared_packs(rows, max_tokens)
    if len(packs) == B:  # nothing shared
        return token_logp(model, input_ids, attention_mask)
    width = max(packed_size(rows, p) for p in packs)
    ids = torch.zeros((len(packs), width), dtype=torch.long)
    pos = torch.zeros((len(packs), width), dtype=torch.long)
    seg = torch.full((len(packs), width), -1, dtype=torch.long)  # 0 prefix, b the b-th row
    where = torch.zeros((B, T), dtype=torch.long)  # each row token's flat index in the packs
    for m, (members, shared) in enumerate(packs):
        ids[m, :shared] = torch.tensor(rows[members[0]][:shared], dtype=torch.long)
        pos[m, :shared] = torch.arange(shared)
        seg[m, :shared] = 0
        where[members, :shared] = m * width + torch.arange(shared)
        at = shared
        for b, r in enumerate(members, 1):
            n = lengths[r] - shared
            ids[m, at:at + n] = torch.tensor(rows[r][shared:], dtype=torch.long)
            pos[m, at:at + n] = torch.arange(shared, shared + n)
            seg[m, at:at + n] = b
            where[r, shared:shared + n] = m * width + torch.arange(at, at + n)
            at += n
    # a query sees earlier keys of its own segment and the prefix; padding sees padding
    order = torch.arange(width)
    sees = ((seg[:, None, :] == seg[:, :, None]) | ((seg[:, None, :] == 0) & (seg[:, :, None] > 0)))
    sees = (sees & (order[None, :] <= order[:, None])[None])[:, None]  # (M, 1, L, L)
    device = input_ids.device
    ids, pos, sees, where = ids.to(device), pos.to(device), sees.to(device), where.to(device)
    with autocast(model), attention_for(model, width):
        if model.config._attn_implementation == "eager":  # an additive mask
            mask = torch.zeros(sees.shape, dtype=torch.float32, device=device)
            mask = mask.masked_fill(~sees, torch.finfo(torch.float32).min)
        else:
            mask = sees
        hidden = model.get_decoder()(input_ids=ids, attention_mask=mask,
                                     position_ids=pos).last_hidden_state  # (M, L, H)
    need = attention_mask[:, 1:] > 0
    if only is not None:
        need = need & (only[:, 1:] > 0)
    hidden = hidden.reshape(-1, hidden.shape[-1])[where[:, :-1][need]]  # predecessors' states
    return _head_logp(model, hidden, input_ids[:, 1:][need], need)


def chunk_tokens(vocab: int) -> int:
    """Tokens per chunk of the output head: CHUNK_HEAD logits, at least 1.

    >>> chunk_tokens(151_936), chunk_tokens(100)
    (110, 167772)
    """
    return max(1, CHUNK_HEAD // vocab)


def _picked_logp(model, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log p(target) for each token of a chunk: (N, H), (N,) -> (N,), as logit(target) minus
    the fp32 log-sum-exp, so no (N, V) log-softmax is kept beside the logits."""
    with autocast(model):
        logits = model.get_output_embeddings()(hidden).float()  # (N, V)
    return logits.gather(-1, targets[:, None]).squeeze(-1) - torch.logsumexp(logits, dim=-1)


@dataclass(frozen=True)
class Passes:
    """How a batch is cut into forward passes: at most `max_tokens` tokens a pass (rows x the
    pass's longest row; None: one pass of at most `max_rows` rows), and with `shared`, rows
    that share a prefix packed into one sequence (`shared_packs`), so a pass holds more rows.
    The trainer's setting is `k2rl.step.trainer.passes_of` (train.micro_batch_tokens,
    train.shared_prefix)."""
    max_tokens: int | None = None
    shared: bool = False

    def plan(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, max_rows: int = 64
             ) -> list[torch.Tensor]:
        """Row indices of each pass over a right-padded batch: `micro_batches`, over packs
        where `shared`.

        >>> ids = torch.tensor([[1] * 20 + [2], [3, 4] + [0] * 19, [1] * 20 + [5]])
        >>> [r.tolist() for r in Passes(22, True).plan(ids, (ids > 0).long())]
        [[1], [0, 2]]
        """
        lengths = attention_mask.sum(-1)
        if not self.shared:
            return micro_batches(lengths, self.max_tokens, max_rows)
        rows = [input_ids[i, :n].tolist() for i, n in enumerate(lengths.tolist())]
        packs = shared_packs(rows, self.max_tokens)
        sizes = torch.tensor([packed_size(rows, p) for p in packs])
        return [torch.tensor([i for p in run.tolist() for i in packs[p][0]], dtype=torch.long)
                for run in micro_batches(sizes, self.max_tokens, max_rows)]

    def logp(self, model, part: dict[str, torch.Tensor]) -> torch.Tensor:
        """Token log-probs (n, L) of one pass's rows (`cut`); with `shared`, the output head
        runs on the loss's tokens alone (the others get 0)."""
        if not self.shared:
            return token_logp(model, part["input_ids"], part["attention_mask"])
        return packed_logp(model, part["input_ids"], part["attention_mask"],
                           part.get("loss_mask"), self.max_tokens)

    def flops(self, model, part: dict[str, torch.Tensor]) -> float:
        """Matmul FLOPs of one pass's forward over the tokens it computes: a shared prefix
        once a pack (k2rl.lm.flops)."""
        lengths = part["attention_mask"].sum(-1)
        if self.shared:
            rows = [part["input_ids"][i, :n].tolist() for i, n in enumerate(lengths.tolist())]
            lengths = torch.tensor([packed_size(rows, p)
                                    for p in shared_packs(rows, self.max_tokens)])
        return sequence_flops(model, lengths)


def micro_batches(lengths: torch.Tensor, max_tokens: int | None = None, max_rows: int = 64
                  ) -> list[torch.Tensor]:
    """Row indices (on the CPU) sorted by length, cut into runs of at most `max_rows` rows
    whose padded size (rows x the run's longest row) is at most `max_tokens` (a longer row
    goes alone).

    >>> [r.tolist() for r in micro_batches(torch.tensor([5, 1, 4, 2]), max_tokens=8)]
    [[1, 3], [2], [0]]
    """
    lengths = lengths.cpu()
    order = torch.argsort(lengths, stable=True)
    runs, run = [], []
    for i in order.tolist():
        longest = int(lengths[i])  # sorted: the newcomer is the run's longest
        if run and (len(run) == max_rows
                    or (max_tokens is not None and (len(run) + 1) * longest > max_tokens)):
            runs.append(run)
            run = []
        run.append(i)
    return [torch.tensor(r, dtype=torch.long) for r in runs + [run] if r]


def cut(batch: dict[str, torch.Tensor], rows: torch.Tensor) -> dict[str, torch.Tensor]:
    """Rows `rows` of a right-padded batch, (B, T) tensors cut to their own longest row (at
    least 2 tokens); per-row values (B,) such as rewards come along."""
    L = max(2, int(batch["attention_mask"][rows].sum(-1).max()))
    return {name: t[rows, :L] if t.dim() > 1 else t[rows] for name, t in batch.items()}


def token_logp_sorted(model, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                      chunk: int = 64, max_tokens: int | None = None,
                      loss_mask: torch.Tensor | None = None, shared: bool = False
                      ) -> torch.Tensor:
    """`token_logp` computed in micro-batches of similar length (`micro_batches`, or packs of
    rows that share a prefix with `shared`: `Passes`), each cut to its own longest row.

    The same values (and gradients) as one padded forward, for right-padded rows, without
    running a batch of mixed tasks at the length of its longest episode. With `shared`, only
    the tokens of `loss_mask` get theirs.
    """
    T = input_ids.shape[1]
    passes = Passes(max_tokens, shared)
    batch = {"input_ids": input_ids, "attention_mask": attention_mask}
    if loss_mask is not None:
        batch["loss_mask"] = loss_mask
    parts, index = [], []
    for rows in passes.plan(input_ids, attention_mask, chunk):
        part = cut(batch, rows)
        parts.append(F.pad(passes.logp(model, part), (0, T - part["input_ids"].shape[1])))
        index.append(rows)
    if not parts:  # no rows
        return torch.zeros(input_ids.shape, dtype=torch.float32, device=input_ids.device)
    order = torch.cat(index)
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(len(order), device=order.device)
    return torch.cat(parts)[inverse]


def token_nll(model, batch: dict[str, torch.Tensor], total: float | None = None,
              passes: Passes = Passes()) -> torch.Tensor:
    """Mean negative log-likelihood over the masked (assistant) tokens; with `total`, their
    summed NLL over `total` (a micro-batch's share of a larger batch's mean), computed as
    `passes` computes a pass."""
    logp = passes.logp(model, batch)
    mask = batch["loss_mask"]
    return -(logp * mask).sum() / (total or mask.sum().clamp(min=1))
