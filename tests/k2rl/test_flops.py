"""The training step's FLOP count (k2rl.lm.flops) against torch's own counter."""
import torch
from torch.utils.flop_counter import FlopCounterMode

from k2rl.lm.flops import forward_flops, matmul_params
from tests.k2rl.test_pi_old import small_model


def counted(model, ids) -> int:
    """torch's count of the matmuls (mm, addmm, bmm) of one forward pass."""
    with FlopCounterMode(display=False) as counter:
        model(input_ids=ids, attention_mask=torch.ones_like(ids))
    return sum(v for op, v in counter.get_flop_counts()["Global"].items()
               if str(op).split(".")[-1] in ("mm", "addmm", "bmm"))


def attention(model, n: int) -> float:
    cfg = model.config
    return 2.0 * cfg.num_hidden_layers * cfg.hidden_size * n * (n + 1)


def test_dense_flops_match_torch_s_counter_and_padding_is_not_counted():
    model = small_model()
    torch.manual_seed(1)
    rows = [torch.randint(0, 50, (1, n)) for n in (7, 12, 3)]
    padded = torch.zeros(3, 12, dtype=torch.long)
    for i, r in enumerate(rows):
        padded[i, : r.shape[1]] = 1
    want = sum(counted(model, r) + attention(model, r.shape[1]) for r in rows)
    assert forward_flops(model, padded) == want
    assert sum(counted(model, r) for r in rows) == 2 * matmul_params(model) * 22


def test_a_tied_head_counts_once():
    model = small_model()
    assert model.lm_head.weight is model.model.embed_tokens.weight
    linear = [m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert matmul_params(model) == sum(linear)
    embed = model.model.embed_tokens.weight.numel()
    assert matmul_params(model) == sum(p.numel() for p in model.parameters() if p.ndim == 2)
    assert matmul_params(model) > embed  # the head is in, as a matmul
