"""train.shared_prefix: rows that share a prefix (a group's K samples share their prompt) packed
into one sequence under a mask that keeps them apart take the same loss and step as one pass a
row, on the embedded architecture and on SmolLM2's real layers, eager and SDPA."""
import copy

import numpy as np
import pytest
import torch

from k2rl.bootstrap.model import build_tokenizer
from k2rl.config import TrainConfig
from k2rl.lm.logprobs import Passes, collate, packed_size, shared_packs, token_logp
from k2rl.step import trainer
from k2rl.step.loss import LOSSES, Whole
from tests.k2rl.test_pi_old import small_model

PROMPTS = ["Question: what is 12 plus 7? Answer with the number.\n",
           "Question: what is 30 minus 4? Answer with the number.\n"]
REPLIES = ["19", "The sum is 19.", "19", "12+7=19 so 19", "20", ""]


def groups_with_prompts():
    """Two groups of six samples whose prompts (about 50 tokens) they share; two replies
    repeat, one is empty (the row is its prompt alone)."""
    from k2rl.step.group import Group, Request, Status, Trajectory

    tok = build_tokenizer()
    groups = []
    for g, prompt in enumerate(PROMPTS):
        p = tok.encode(prompt, add_special_tokens=False)
        group = Group(Request("k2rl/Arithmetic-v1", g, group=g, k=len(REPLIES)), 1)
        for i, reply in enumerate(REPLIES):
            r = tok.encode(reply, add_special_tokens=False) + [tok.eos_token_id]
            group.trajectories.append(Trajectory(
                f"1:{g}:{i}", "k2rl/Arithmetic-v1", "arithmetic", prompt, i, ids=p + r,
                mask=[0] * len(p) + [1] * len(r), rewards={"task": float(i % 2)},
                n_tokens=len(r), status=Status.DONE))
        groups.append(group)
    return groups


def test_packs_share_the_longest_common_prefix_and_hold_every_row_once():
    rows = [[1] * 30 + [2, 3], [5, 6, 7], [1] * 30 + [2, 4, 4], [1] * 30 + [2, 3], [1] * 10]
    packs = shared_packs(rows)
    assert sorted(i for members, _ in packs for i in members) == list(range(5))
    together = next(p for p in packs if 0 in p[0])
    assert sorted(together[0]) == [0, 2, 3] and together[1] == 31  # the repeat shares all of it
    assert packed_size(rows, together) == 31 + 1 + 3  # 1 + [3], [4, 4], []
    # a pack never grows past the budget; a row alone may
    assert all(packed_size(rows, p) <= 40 or len(p[0]) == 1 for p in shared_packs(rows, 40))


def test_passes_hold_at_most_their_tokens_and_every_row_once():
    batch = trainer.batch_of(groups_with_prompts(), build_tokenizer().pad_token_id)
    ids, mask = batch["input_ids"], batch["attention_mask"]
    runs = Passes(120, shared=True).plan(ids, mask)
    assert sorted(torch.cat(runs).tolist()) == list(range(len(ids)))
    rows = [ids[i, :n].tolist() for i, n in enumerate(mask.sum(-1).tolist())]
    for run in runs:
        packs = shared_packs([rows[i] for i in run.tolist()], 120)
        assert len(packs) * max(packed_size([rows[i] for i in run.tolist()], p)
                                for p in packs) <= 120
    # the prompt once a pack: well under the rows' own tokens
    assert sum(Passes(None, True).flops(small_model(), {"input_ids": ids, "attention_mask": mask})
               for _ in [0]) < 0.5 * Passes(None).flops(small_model(), batch)


def gradient(model, groups, cfg) -> dict[str, torch.Tensor]:
    """The policy loss's gradient over the whole batch, π_old off θ so the ratio terms count."""
    pad = build_tokenizer().pad_token_id
    model.zero_grad(set_to_none=True)
    model.train()
    batch = trainer.batch_of(groups, pad)
    _, tok_old = trainer.old_logp(model, batch, "sum", trainer.passes_of(cfg))
    rows = torch.arange(len(batch["input_ids"]))
    k = len(groups[0].trajectories)
    whole = Whole.of(batch["rewards"], batch["loss_mask"], k)
    old = tok_old + 0.01 * torch.arange(tok_old.shape[1]) * batch["loss_mask"]
    trainer.policy_backward(model, batch, rows, old, whole, cfg, k, 1.0, {},
                            torch.zeros(len(rows), dtype=torch.bool))
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_packed_rows_take_the_gradient_of_one_pass_a_row(loss):
    model, groups = small_model(), groups_with_prompts()
    apart = gradient(model, groups, TrainConfig(loss=loss, shared_prefix=False))
    packed = gradient(model, groups, TrainConfig(loss=loss, shared_prefix=True,
                                                 micro_batch_tokens=120))
    assert apart.keys() == packed.keys() and any(g.abs().max() > 1e-4 for g in apart.values())
    for name, g in apart.items():
        torch.testing.assert_close(packed[name], g, atol=1e-6, rtol=1e-5, msg=name)


def test_an_update_with_ptx_takes_the_same_steps_packed():
    base, groups = small_model(), groups_with_prompts()
    tok = build_tokenizer()
    prompt = tok.encode(PROMPTS[0], add_special_tokens=False)
    ptx = [(prompt + [5, 6, 2], [0] * len(prompt) + [1, 1, 1]),
           (prompt + [7, 2], [0] * len(prompt) + [1, 1])] * 2
    results = []
    for shared in (False, True):
        model = copy.deepcopy(base)
        cfg = TrainConfig(lr=1e-3, inner_steps=2, minibatches=2, optimizer="adamw",
                          shared_prefix=shared, micro_batch_tokens=150)
        metrics = trainer.update(model, trainer.make_optimizer(model, cfg), groups, cfg,
                                 tok.pad_token_id, aux={"ptx": (ptx, 0.5, 3)},
                                 rng=np.random.default_rng(0))
        results.append((metrics, model.state_dict()))
    (m1, w1), (m2, w2) = results
    for key in ("loss", "loss_first", "ptx_loss"):
        assert m2[key] == pytest.approx(m1[key], abs=1e-6)
    assert m2["train_flops"] < 0.6 * m1["train_flops"]  # the prompt computed once a pack
    for name, w in w1.items():
        torch.testing.assert_close(w2[name], w, atol=2e-6, rtol=1e-5)
    assert any((w1[n] != base.state_dict()[n]).any() for n in w1)


@pytest.mark.parametrize("attention", ["eager", "sdpa"])
def test_smollm2s_real_layers_give_the_same_log_probs_packed(attention, tmp_path):
    """SmolLM2-135M-Instruct's real first layers (Llama: RoPE from the positions, grouped KV
    heads), its real tokenizer and ChatML prompt: packed and apart agree, gradients too."""
    pytest.importorskip("gguf", reason="the gguf package reads GGUF files (make test installs it)")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from k2rl.lm import gguf

    folder = gguf.convert(gguf.named_gguf("smollm2"), tmp_path / "smollm2-2", num_layers=2)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32,
                                                 attn_implementation=attention)
    tok = AutoTokenizer.from_pretrained(folder)
    prompt = tok.apply_chat_template([{"role": "user", "content": "What is 23 plus 58?"}],
                                     add_generation_prompt=True, tokenize=False)
    p = tok(prompt)["input_ids"]
    replies = ["23 + 58 = 81", "The answer is 81.", "81", "Let me think: 20 + 50 = 70"]
    seqs = [(p + tok(r)["input_ids"], [0] * len(p) + [1] * len(tok(r)["input_ids"]))
            for r in replies]
    batch = collate(seqs, tok.pad_token_id)
    assert len(shared_packs([ids for ids, _ in seqs])) == 1  # one pack: the prompt once
    results = []
    for shared in (False, True):
        model.zero_grad(set_to_none=True)
        logp = token_logp(model, batch["input_ids"], batch["attention_mask"],
                          only=batch["loss_mask"] if shared else None, shared=shared)
        (-(logp * batch["loss_mask"]).sum()).backward()
        results.append((logp * batch["loss_mask"],
                        model.model.layers[1].mlp.down_proj.weight.grad.clone()))
    (a, ga), (b, gb) = results
    torch.testing.assert_close(b, a, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(gb, ga, atol=1e-5, rtol=1e-3)
