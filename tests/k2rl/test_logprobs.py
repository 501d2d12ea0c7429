"""Token log-probs: the chunked path for large vocabularies equals the one-shot path."""
import pytest
import torch

from k2rl.lm.logprobs import token_logp, token_logp_sorted


@pytest.mark.parametrize("arch", ["qwen2", "llama"])
def test_chunked_log_probs_match_the_one_shot_values_and_gradients(arch, monkeypatch):
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    from k2rl.lm import logprobs

    config, cls = {"qwen2": (Qwen2Config, Qwen2ForCausalLM),
                   "llama": (LlamaConfig, LlamaForCausalLM)}[arch]
    torch.manual_seed(0)
    model = cls(config(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=2,
                       tie_word_embeddings=arch == "qwen2"))
    ids = torch.randint(0, 300, (3, 23))
    mask = torch.ones_like(ids)
    mask[2, 15:] = 0  # a right-padded row
    monkeypatch.setattr(logprobs, "CHUNK_HEAD", 5 * 300)  # 2 x 22 + 14 real tokens: chunks of 5
    grads = []
    values = []
    for max_logits in (10 ** 9, 0):  # one shot, then chunked
        model.zero_grad()
        logp = token_logp(model, ids, mask, max_logits=max_logits)
        (logp * mask).sum().backward()
        values.append(logp.detach())
        grads.append([p.grad.clone() for p in model.parameters()])
    torch.testing.assert_close(values[1], values[0], atol=1e-5, rtol=1e-5)
    for a, b in zip(grads[1], grads[0]):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)
    assert values[0].shape == (3, 23) and (values[0][:, 0] == 0).all()
    assert (values[0][2, 15:] == 0).all() and (values[0][2, 1:15] != 0).all()  # padding: 0


def test_sorted_chunks_give_the_padded_batch_s_log_probs():
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=50, hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=1, num_attention_heads=2,
                                         num_key_value_heads=2))
    ids = torch.randint(0, 50, (5, 9))
    mask = torch.ones_like(ids)
    for i, n in enumerate([9, 3, 7, 5, 2]):
        mask[i, n:] = 0
    whole = token_logp(model, ids, mask) * mask
    torch.testing.assert_close(token_logp_sorted(model, ids, mask, chunk=2) * mask, whole,
                               atol=1e-5, rtol=1e-5)


def test_gradient_checkpointing_takes_the_same_update():
    """train.gradient_checkpointing trades time for memory, not the step."""
    from transformers import Qwen2ForCausalLM

    from k2rl.bootstrap.model import build_config, build_tokenizer
    from k2rl.bootstrap.recipe import Recipe
    from k2rl.config import TrainConfig
    from k2rl.step.trainer import make_optimizer, update
    from tests.k2rl.test_distributed import batch

    tok = build_tokenizer()
    cfg = TrainConfig(lr=1e-3, inner_steps=2)
    weights = []
    for checkpointing in (False, True):
        torch.manual_seed(0)
        mcfg = Recipe(hidden_size=32, num_layers=2, num_heads=2, intermediate_size=64)
        model = Qwen2ForCausalLM(build_config(mcfg, tok)).eval()
        if checkpointing:
            model.gradient_checkpointing_enable(
                gradient_checkpointing_kwargs={"use_reentrant": False})
        update(model, make_optimizer(model, cfg), batch(), cfg, tok.pad_token_id)
        weights.append(model.state_dict())
    for name, w in weights[0].items():
        torch.testing.assert_close(weights[1][name], w, atol=1e-6, rtol=1e-5)
