"""Critic SFT from preference pairs (k2rl.step.critic_sft, `k2rl critic train`) on two layers of
SmolLM2-135M-Instruct's real GGUF: its real tokenizer and ChatML template."""
import json

import pytest
import torch

from critic.layout import chat_messages
from critic.pairs import Pair, PairsError, pair_rubrics, parse_pair
from critic.rubrics import load_rubrics
from k2rl.lm import gguf
from k2rl.lm.chat import turn_end_id
from k2rl.lm.logprobs import collate, token_logp
from k2rl.step import critic_sft
from k2rl.step.critic_ids import chat_prompt_ids, chat_verdict_ids, chat_verdict_prompt

pytest.importorskip("gguf", reason="the gguf package reads GGUF files (make test installs it)")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return gguf.convert(gguf.named_gguf("smollm2"), tmp_path_factory.mktemp("smollm2") / "hf",
                        num_layers=2)


@pytest.fixture(scope="module")
def tok(folder):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder)


def model_of(folder):
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    return AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()


PAIR = Pair("What is 47 plus 38?", "47 + 38 = 85.", "47 + 38 = 84.", "word_sums")


def test_a_training_judgment_is_what_the_chat_critic_reads(tok):
    rubrics = load_rubrics()
    rules = pair_rubrics(PAIR, rubrics)  # the rubrics of its task, as the critic is shown them
    _, (a, b) = chat_verdict_ids(tok)
    for first, letter, shown in ((True, a, (PAIR.chosen, PAIR.rejected)),
                                 (False, b, (PAIR.rejected, PAIR.chosen))):
        ids, mask = critic_sft.judgment_ids(tok, 1024, PAIR, rubrics, first)
        opened = chat_prompt_ids(tok, chat_messages(PAIR.prompt, rules, *shown))
        # The critic reads its verdict right after "Verdict:" (no reasoning of its own here).
        assert ids[:-2] == chat_verdict_prompt(tok, opened, "")
        assert ids[-2:] == [letter, turn_end_id(tok)]
        assert mask == [0] * len(opened) + [1] * (len(ids) - len(opened))


def test_a_rationale_is_learned_before_the_verdict(tok):
    pair = Pair(PAIR.prompt, PAIR.chosen, PAIR.rejected, rationale="47 + 38 = 85.")
    ids, mask = critic_sft.judgment_ids(tok, 1024, pair, [], False)
    reply = tok.decode([i for i, m in zip(ids, mask) if m])
    assert reply == "47 + 38 = 85.\nVerdict: B<|im_end|>"


def test_pairs_files_carry_a_rationale():
    row = {"prompt": "q", "chosen": "a", "rejected": "b", "rationale": "a is right"}
    pair = parse_pair(json.dumps(row), "line 1 of p.jsonl")
    assert pair.rationale == "a is right" and pair.to_json() == row
    with pytest.raises(PairsError, match="line 1 of p.jsonl needs rationale"):
        parse_pair(json.dumps({**row, "rationale": 3}), "line 1 of p.jsonl")


def test_the_head_on_the_loss_tokens_alone_gives_the_same_log_probs_and_gradients(folder, tok):
    model = model_of(folder)
    seqs = [critic_sft.judgment_ids(tok, 1024, PAIR, [], first) for first in (True, False)]
    batch = collate(seqs, tok.pad_token_id or 0)
    grads = []
    for only in (None, batch["loss_mask"]):
        model.zero_grad()
        logp = token_logp(model, batch["input_ids"], batch["attention_mask"], only=only)
        picked = logp * batch["loss_mask"]
        picked.sum().backward()
        grads.append((picked.detach(), model.model.layers[0].mlp.up_proj.weight.grad.clone()))
    assert torch.allclose(grads[0][0], grads[1][0], atol=1e-5)
    assert torch.allclose(grads[0][1], grads[1][1], atol=1e-5)


def _margin(model, tok, pairs) -> float:
    """Mean log P(the chosen's letter) - log P(the other) over both orders of `pairs`."""
    _, (a, b) = chat_verdict_ids(tok)
    total = 0.0
    with torch.no_grad():
        for pair in pairs:
            for first in (True, False):
                ids, _ = critic_sft.judgment_ids(tok, 1024, pair, [], first)
                logits = model(input_ids=torch.tensor([ids[:-2]])).logits[0, -1]
                right, wrong = (a, b) if first else (b, a)
                total += float(logits[right] - logits[wrong])
    return total / (2 * len(pairs))


def test_sft_moves_the_verdict_to_the_chosen_response_in_both_orders(folder, tok):
    # Two layers of SmolLM2 cannot learn to judge in a test's time, but they can learn one
    # pair in both orders: only if each order's label names the chosen response's position.
    pairs = [Pair("What is 12 plus 30?", "12 + 30 = 42.", "We compute 12 + 30.")]
    model = model_of(folder)
    before = _margin(model, tok, pairs)
    seqs = critic_sft.examples(tok, 1024, pairs, [])
    fit = critic_sft.train(model, tok, seqs, tok.pad_token_id or 0, epochs=40, batch=2, lr=1e-3,
                           progress=False)
    after = _margin(model, tok, pairs)
    assert fit["last_loss"] < fit["first_loss"]
    # A critic that learned "always A" (or "always B") gains nothing here: the margin averages
    # both orders, so only preferring the chosen response raises it.
    assert after > before + 2.0, (before, after)


def test_critic_train_refuses_leaked_or_one_sided_pairs_and_a_used_folder(tmp_path):
    from k2rl.cli import critic_split, main

    rows = [{"prompt": f"q{i}", "chosen": "a", "rejected": "b"} for i in range(40)]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    held = tmp_path / "held.jsonl"
    held.write_text(json.dumps(rows[3]) + "\n")
    with pytest.raises(PairsError, match="1 held-out prompts are also in the training pairs"):
        critic_split(str(pairs), str(held))
    train, heldout = critic_split(str(pairs), None)  # the pairs' own held-out share, by prompt
    assert train and heldout and not {p.prompt for p in train} & {p.prompt for p in heldout}
    used = tmp_path / "out"
    used.mkdir()
    (used / "x").write_text("")
    code = main(["critic", "train", "--model", "nowhere", "--pairs", str(pairs), "--out", str(used)])
    assert code == 2


def test_critic_train_writes_a_model_the_critic_loads(folder, tmp_path):
    from transformers import AutoModelForCausalLM

    from k2rl.cli import main

    rows = [{"prompt": f"What is {x} plus 10?", "chosen": f"{x} + 10 = {x + 10}.",
             "rejected": f"{x} + 10 = {x + 11}."} for x in range(10, 40)]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "critic"
    assert main(["critic", "train", "--model", str(folder), "--pairs", str(pairs), "--out",
                 str(out), "--no-eval", "--batch", "8"]) == 0
    summary = json.loads((out / "critic_sft.json").read_text())
    assert summary["train_pairs"] + summary["heldout_pairs"] == 30
    assert summary["steps"] == -(-2 * summary["train_pairs"] // 8)
    AutoModelForCausalLM.from_pretrained(out)  # a plain HF folder
    assert (out / "heldout_pairs.jsonl").exists() and (out / "tokenizer.json").exists()
