"""Post-training controls as pure logic: length reward, PTX data, learning-rate schedule."""
import json

import pytest
import torch

from k2rl.bootstrap.model import build_tokenizer
from k2rl.bootstrap.ptx import curated_judgments, load_ptx, read_ptx, write_curated
from k2rl.config import ConfigError, TrainConfig
from k2rl.step.reward import length_reward
from k2rl.step.trainer import lr_at


def test_length_reward_worked_example():
    # One group of 4: lengths 10, 20, 30, 10; correct, correct, wrong, wrong.
    # λ = 0.5 − (len − 10) / (30 − 10) = 0.5, 0, −0.5, 0.5
    # correct keep λ; wrong get min(0, λ): 0.5, 0.0, −0.5, 0.0
    lam = length_reward(torch.tensor([10, 20, 30, 10]), torch.tensor([1.0, 1.0, 0.0, 0.0]), 4)
    assert lam.tolist() == pytest.approx([0.5, 0.0, -0.5, 0.0])


def test_length_reward_is_zero_when_lengths_are_equal_and_per_group():
    lam = length_reward(torch.tensor([5, 5, 1, 3]), torch.tensor([1.0, 0.0, 1.0, 1.0]), 2)
    assert lam.tolist() == pytest.approx([0.0, 0.0, 0.5, -0.5])


def test_ptx_reads_both_formats_and_masks_assistant_tokens(tmp_path):
    path = tmp_path / "cur.jsonl"
    rows = [{"prompt": "1+1=", "response": "2"},
            {"messages": [{"role": "user", "content": "3*4="}, {"role": "assistant", "content": "calc(3*4)"},
                          {"role": "tool", "content": "12"}, {"role": "assistant", "content": "12"}]}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    tok = build_tokenizer()
    (ids, mask), (ids2, mask2) = load_ptx(path, tok)
    assert tok.decode([i for i, m in zip(ids, mask) if m]) == "2<|eos|>"
    assert tok.decode([i for i, m in zip(ids2, mask2) if m], skip_special_tokens=True) == "calc(3*4)12"


@pytest.mark.parametrize("line, why", [
    ("{not json", "not valid JSON"),
    ('{"prompt": "x"}', "needs prompt and response"),
    ('{"messages": [{"role": "user", "content": "hi"}]}', "at least one assistant turn"),
    ('{"messages": [{"role": "bot", "content": "hi"}]}', "needs prompt and response"),
])
def test_malformed_ptx_line_names_file_and_line(tmp_path, line, why):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"prompt": "a", "response": "b"}\n' + line + "\n")
    with pytest.raises(ConfigError, match=f"line 2 of .*bad.jsonl.*{why}"):
        read_ptx(path)


def test_ptx_takes_a_system_prompt_and_openai_form_calls_and_names_a_line_its_template_rejects(
        tmp_path):
    """A sample with a system prompt and a call in the OpenAI/HF form lays out in the model's
    own form (Mistral-v0.3: system folded, `[TOOL_CALLS]` with the id, `[TOOL_RESULTS]`); one
    its template cannot lay out is one sentence naming the line."""
    from tests.k2rl.fixtures import mistral_tokenizer

    call = {"id": "a1B2c3D4e", "type": "function",
            "function": {"name": "calc", "arguments": {"expression": "3*4"}}}
    good = {"messages": [{"role": "system", "content": "Use the tool."},
                         {"role": "user", "content": "3*4="},
                         {"role": "assistant", "content": None, "tool_calls": [call]},
                         {"role": "tool", "tool_call_id": "a1B2c3D4e", "name": "calc",
                          "content": "12"},
                         {"role": "assistant", "content": "12"}]}
    bad = {"messages": [{"role": "assistant", "content": "hi"}, {"role": "assistant", "content": "x"}]}
    path = tmp_path / "cur.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    tok = mistral_tokenizer()
    with pytest.raises(ConfigError, match=r"^line 2 of .*cur.jsonl: the chat template of .* "
                                          r"cannot lay out its messages .*must alternate"):
        load_ptx(path, tok)
    path.write_text(json.dumps(good) + "\n")
    [(ids, mask)] = load_ptx(path, tok)
    assert tok.decode(ids) == ('<s>[INST] Use the tool.\n\n3*4=[/INST][TOOL_CALLS] [{"name": "calc", '
                               '"arguments": {"expression": "3*4"}, "id": "a1B2c3D4e"}]</s>'
                               '[TOOL_RESULTS] {"content": 12, "call_id": "a1B2c3D4e"}'
                               '[/TOOL_RESULTS] 12</s>')
    assert tok.decode([i for i, m in zip(ids, mask) if m]).startswith('[TOOL_CALLS] [{"name"')


def test_empty_or_missing_ptx_file_is_an_error(tmp_path):
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(ConfigError, match="has no samples"):
        read_ptx(tmp_path / "empty.jsonl")
    with pytest.raises(ConfigError, match="does not exist"):
        read_ptx(tmp_path / "none.jsonl")


def test_curated_set_is_generated_from_experts(tmp_path):
    rows = read_ptx(write_curated(tmp_path / "c.jsonl", n=20))
    assert len(rows) == 20
    tool_rows = [r for r in rows if "*" in r[0]["content"]]
    assert tool_rows and all(r[1]["content"].startswith("calc(") for r in tool_rows)


def test_the_curated_set_comes_from_the_run_s_own_tasks(tmp_path):
    import gymnasium

    from envs.base import Problem, TextEnv

    rows = read_ptx(write_curated(tmp_path / "a.jsonl", ["k2rl/Arithmetic-v2"], n=30))
    assert len(rows) == 30 and all("|" in r[1]["content"] for r in rows)  # worked answers

    class NoExpert(TextEnv):
        task, budget, max_turns, reward_name = "x", 8, 1, "exact_int"

        def _draw(self):
            return Problem(key="x:1", prompt="1+1=", answer=2)

    if "test/NoExpert-v0" not in gymnasium.registry:
        gymnasium.register("test/NoExpert-v0", entry_point=NoExpert)
    mixed = read_ptx(write_curated(tmp_path / "m.jsonl", ["test/NoExpert-v0",
                                                           "k2rl/Arithmetic-v2"], n=10))
    assert len(mixed) == 10 and all(r[0]["content"] != "1+1=" for r in mixed)  # left out
    with pytest.raises(ConfigError, match="none of test/NoExpert-v0 has one"):
        write_curated(tmp_path / "n.jsonl", ["test/NoExpert-v0"])


def test_curated_chat_replies_state_the_fact_without_flattery(tmp_path):
    from rewards.chat import flattery

    rows = read_ptx(write_curated(tmp_path / "c.jsonl", n=200))
    chat = [r[-1]["content"] for r in rows if r[0]["content"].endswith(("word", "number")) or
            " the word " in r[0]["content"] or " the number " in r[0]["content"]]
    assert len(chat) >= 40  # a quarter of the set (the chat expert flatters half the time)
    assert not [reply for reply in chat if flattery(reply)]


def test_curated_judgments_are_scripted_judgments_of_the_run_s_judging_tasks():
    """train.ptx_judgments: judgments of training-split prompts, the loss on the critic's turns
    only (its checks and verdict, never the question or the answers), from the tasks whose env
    teaches judging, taken in turn; a task mix with none of them gives none."""
    tok = build_tokenizer()
    tasks = ["k2rl/Arithmetic-v2", "k2rl/Lookup-v1", "k2rl/Chat-v1"]
    got = curated_judgments(tok, tasks, 4, seed=3)
    assert len(got) == 4 and got == curated_judgments(tok, tasks, 4, seed=3)
    texts = [tok.decode(ids) for ids, _ in got]
    assert sum(" vs " in t for t in texts) == 2  # arithmetic's checks, every other one
    for ids, mask in got:
        judged = tok.decode([i for i, m in zip(ids, mask) if m])
        assert judged.count(": yes") + judged.count(": no") >= 2  # both checks carry the loss
        assert "Better:" not in judged and "Answer:" not in judged  # the user turns do not
    assert curated_judgments(tok, ["k2rl/Lookup-v1"], 4) == []
    assert curated_judgments(tok, tasks, 0) == []
    with pytest.raises(ConfigError, match="train.ptx_judgments"):
        TrainConfig(ptx_judgments=-1)


def test_curated_judgments_keep_the_instruction_layout_the_model_was_built_with(tmp_path):
    """A build with the instruction scripts' options (the recipe's instr_bounds) judges with
    counts beside their bounds; its PTX judgments must keep that layout, read from the recipe
    the build (or a checkpoint trained from it) carries, not fall back to the env's default."""
    from k2rl.bootstrap.model import critic_scripts
    from k2rl.lm.hf import built_recipe
    from k2rl.bootstrap.recipe import Recipe

    tok = build_tokenizer()
    tasks = ["k2rl/Instructions-v1"]
    assert critic_scripts(None, Recipe()) == {  # the default's: all three on
        "misspell_rate": 0.5, "bounds_in_checks": True, "compare_quoted": True}
    default = Recipe(instr_bounds=False, instr_misspell_rate=0.0, instr_compare=False)
    assert built_recipe(tmp_path) is None  # not built by k2rl: model.default's recipe's options
    assert critic_scripts(None, default) == {"misspell_rate": 0.0, "bounds_in_checks": False,
                                             "compare_quoted": False}
    (tmp_path / "recipe.json").write_text(json.dumps({"instr_bounds": True}))
    scripts = critic_scripts(built_recipe(tmp_path), default)
    assert scripts == {"misspell_rate": 0.0, "bounds_in_checks": True, "compare_quoted": False}
    def judged(got):  # the critic's turns alone: the question names its bounds too
        return [tok.decode([i for i, m in zip(ids, mask) if m]) for ids, mask in got]

    plain = judged(curated_judgments(tok, tasks, 40, seed=1))
    bounded = judged(curated_judgments(tok, tasks, 40, seed=1, scripts=scripts))
    bound = (", max ", ", min ", ", want ")
    assert not any(b in t for t in plain for b in bound)
    assert sum(any(b in t for b in bound) for t in bounded) >= 5


def test_learning_rate_warmup_and_decay():
    cfg = TrainConfig(lr=1.0, warmup_steps=4, lr_decay="linear", lr_min_ratio=0.1)
    assert [lr_at(s, cfg, 14) for s in (1, 2, 4)] == pytest.approx([0.25, 0.5, 1.0])
    assert lr_at(5, cfg, 14) == pytest.approx(1.0) and lr_at(14, cfg, 14) == pytest.approx(0.1)
    assert lr_at(9, TrainConfig(lr=2.0), 40) == 2.0


@pytest.mark.parametrize("optimizer", ["muon", "adamw"])
def test_a_short_run_decreases_the_kimi_loss(optimizer):
    """8 optimizer steps on one batch (π_old fixed at the start) lower the policy loss, with
    Muon on the matrices (and AdamW on the rest) as with plain AdamW."""
    from transformers import Qwen2ForCausalLM

    from k2rl.bootstrap.model import build_config
    from k2rl.bootstrap.recipe import Recipe
    from k2rl.step.group import Group, Request, Status, Trajectory
    from k2rl.step.trainer import make_optimizer, update

    torch.manual_seed(0)
    tok = build_tokenizer()
    mcfg = Recipe(hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128)
    model = Qwen2ForCausalLM(build_config(mcfg, tok)).eval()
    groups = []
    for g, prompt in enumerate(["12+7=", "30-4=", "6*7=", "9+9="]):
        p = tok.encode(prompt, add_special_tokens=False)
        group = Group(Request("k2rl/Arithmetic-v1", g, k=4), 1)
        for i, reply in enumerate(["19", "26", "42", "18"]):
            r = tok.encode(reply, add_special_tokens=False) + [tok.eos_token_id]
            group.trajectories.append(Trajectory(
                f"1:{g}:{i}", "k2rl/Arithmetic-v1", "arithmetic", prompt, i, ids=p + r,
                mask=[0] * len(p) + [1] * len(r), rewards={"task": float(i == g)},
                n_tokens=len(r), correct=i == g, status=Status.DONE))
        groups.append(group)
    cfg = TrainConfig(optimizer=optimizer, lr=2e-3, inner_steps=8, grad_clip=0.0)
    metrics = update(model, make_optimizer(model, cfg), groups, cfg, tok.pad_token_id)
    assert metrics["loss_last"] < 0.9 * metrics["loss_first"]
