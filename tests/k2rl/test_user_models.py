"""Models users bring (fixtures built here): checked before any service starts, and trained
by the same code as the default model whatever their layout, pad token or stop ids."""
import json

import pytest
import torch

from k2rl.config import ConfigError
from k2rl.lm.chat import conversation_ids, pad_id, stop_ids
from k2rl.lm.hf import check_model_dir
from tests.k2rl.fixtures import llama3_dir, qwen2_dir


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return llama3_dir(tmp_path_factory.mktemp("llama3"))


@pytest.fixture(scope="module")
def qwen(tmp_path_factory):
    return qwen2_dir(tmp_path_factory.mktemp("qwen2"))


def test_fixture_models_pass_the_check(llama, qwen):
    assert check_model_dir(llama) == check_model_dir(qwen) == []  # nothing laid out differently


def test_bad_model_folders_are_one_sentence_each(tmp_path, llama):
    with pytest.raises(ConfigError, match=r"^model.path /nonexistent does not exist"):
        check_model_dir("/nonexistent")
    with pytest.raises(ConfigError, match="not a Hugging Face model folder"):
        check_model_dir(tmp_path)
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "config.json").write_text(json.dumps({"architectures": ["FooForCausalLM"]}))
    with pytest.raises(ConfigError, match="FooForCausalLM model, which vLLM cannot load"):
        check_model_dir(odd)
    plain = tmp_path / "plain"
    import shutil

    shutil.copytree(llama, plain)
    cfg = json.loads((plain / "tokenizer_config.json").read_text())
    cfg.pop("chat_template", None)
    (plain / "tokenizer_config.json").write_text(json.dumps(cfg))
    (plain / "chat_template.jinja").unlink(missing_ok=True)
    with pytest.raises(ConfigError, match="has no chat template: add one"):
        check_model_dir(plain)


def test_train_with_a_missing_model_fails_before_any_service(capsys):
    import ray

    from k2rl import cli

    assert cli.main(["train", "model.path=/nonexistent"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "k2rl: error: model.path /nonexistent does not exist (or is not a folder)"
    assert not ray.is_initialized()


def test_a_model_without_a_pad_token_trains_with_its_own_stop_ids(llama):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from k2rl.config import TrainConfig
    from k2rl.step.group import Group, Request, Status, Trajectory
    from k2rl.step.trainer import make_optimizer, update

    tok = AutoTokenizer.from_pretrained(llama)
    model = AutoModelForCausalLM.from_pretrained(llama).eval()
    assert tok.pad_token_id is None and pad_id(tok) == tok.eos_token_id
    assert stop_ids(tok, model.generation_config) == {
        tok.eos_token_id, tok.convert_tokens_to_ids("<|end_of_text|>")}
    group = Group(Request("k2rl/Arithmetic-v1", 0, k=2), 1)
    for i, reply in enumerate(["19", "The answer is 20."]):
        ids, mask = conversation_ids(tok, [{"role": "user", "content": "What is 12+7?"},
                                           {"role": "assistant", "content": reply}])
        group.trajectories.append(Trajectory(f"1:0:{i}", "k2rl/Arithmetic-v1", "arithmetic",
                                             "p", i, ids=ids, mask=mask, rewards={"task": 1.0 - i},
                                             status=Status.DONE))
    head = model.lm_head.weight.detach().clone()
    cfg = TrainConfig(lr=1e-2, inner_steps=2)
    metrics = update(model, make_optimizer(model, cfg), [group], cfg, pad_id(tok))
    assert torch.isfinite(torch.tensor(metrics["loss"])) and metrics["grad_norm"] > 0
    assert not torch.equal(head, model.lm_head.weight)  # the untied head is trained too


@pytest.mark.slow
@pytest.mark.parametrize("family", ["qwen2.5", "mistral-v0.3"])
def test_k2rl_train_and_critic_eval_run_on_a_user_model(family, tmp_path):
    """`k2rl train` on a tool-use task and a JSONL dataset of chat messages (a system prompt,
    one prompt too long for the engine, skipped) with PTX from the calculator's expert (tool
    turns), in the model's own layout (Qwen2.5's; Mistral-v0.3's: system folded, its real
    SentencePiece vocabulary), storing what the template rendered, engine and trainer
    log-probs agreeing after every weight push; then `k2rl critic eval --model` on its
    checkpoint. The other families run in bench/template_families.py (a minute each)."""
    import subprocess
    import sys

    from transformers import AutoTokenizer, GenerationConfig

    from envs.calculator import CalculatorEnv
    from k2rl.lm.chat import prompt_ids, stop_ids
    from tests.k2rl.fixtures import FAMILIES, stored_as_rendered
    from tests.k2rl.test_train import ROOT, k2rl, read_store

    model = FAMILIES[family][1](tmp_path / "model")
    system = {"role": "system", "content": "Answer with a number."}
    for name in ("train", "eval"):  # the example's sums as chat messages, one far too long
        rows = [json.loads(x) for x in (ROOT / f"examples/dataset/{name}.jsonl").open()]
        rows += [{"question": f"Add 1 and {len(name)}. " * 300, "answer": str(1 + len(name))}]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(
            {"messages": [system, {"role": "user", "content": r["question"]}],
             "answer": r["answer"]}) + "\n" for r in rows))
    proc = k2rl("train", "configs/tiny.yaml", f"model.path={model}", "train.steps=2",
                "eval.prompts_per_task=4", "train.ptx_beta=0.1",
                "tasks=[{id: k2rl/Calculator-v1}, {id: k2rl/Dataset-v0, kwargs: {files: "
                f"{tmp_path}/train.jsonl, eval_files: {tmp_path}/eval.jsonl, "
                "prompt_field: messages, verifier: math_equiv, budget: 8, task: sums}}]",
                f"log.run_dir={tmp_path}", "log.run_name=u")
    assert "tasks[1] (k2rl/Dataset-v0): skipped 1 train and 1 eval prompts longer than" \
        in proc.stdout
    rows = [json.loads(x) for x in (tmp_path / "u" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [0, 1, 2]
    assert all(r["logp_gap"] < 1e-4 and r["sync_bytes"] > 0 and r["ptx_loss"] > 0
               for r in rows[1:])
    trajs, _, _ = read_store(tmp_path / "u")
    tok = AutoTokenizer.from_pretrained(model)
    stops = stop_ids(tok, GenerationConfig.from_pretrained(model))
    assert {t.task for t in trajs} == {"tool_use", "sums"}  # a tool env and a JSONL dataset
    for t in trajs:
        tools = CalculatorEnv.tools if t.task == "tool_use" else ()
        if t.task == "sums":
            assert t.messages[0] == {"role": "system", "content": "Answer with a number."}
            start = prompt_ids(tok, t.messages[:2])
            assert "Answer with a number." in tok.decode(start)  # folded in where no system role
        else:
            start = prompt_ids(tok, t.messages[0]["content"], tools)
        assert t.ids[:len(start)] == start and t.mask[:len(start)] == [0] * len(start)
        assert stored_as_rendered(tok, t, tools, stops)
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"prompt": "2+2=", "chosen": "4", "rejected": "5"}) + "\n")
    proc = subprocess.run([sys.executable, "-m", "k2rl", "critic", "eval", "--model",
                           str(tmp_path / "u" / "checkpoints" / "step-00002"), "--pairs",
                           str(pairs), "--json", "--show", "1", "--log", str(tmp_path / "e.log")],
                          cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout[proc.stdout.index("{"):proc.stdout.index("\n\n[1]")])
    assert result["n"] == 1 and 0.0 <= result["accuracy"] <= 1.0
    # a model k2rl did not build is judged in the chat layout: it reasons in its own turn
    assert "critic, chosen shown as A:" in proc.stdout


@pytest.mark.slow
def test_a_model_the_engine_cannot_run_is_one_sentence_at_start(tmp_path):
    """vLLM loads a model with 16-wide attention heads but its CPU kernels cannot run it: the
    workers' one-token probe at start turns that into one sentence naming the model."""
    from tests.k2rl.fixtures import chatml_tokenizer, save_model
    from tests.k2rl.test_train import k2rl

    model = save_model(tmp_path / "narrow", chatml_tokenizer(), "qwen2", True,
                       chatml_tokenizer().eos_token_id, hidden=32)
    proc = k2rl("train", "configs/tiny.yaml", f"model.path={model}", f"log.run_dir={tmp_path}",
                check=False)
    assert proc.returncode == 2
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith(f"k2rl: error: the hybrid workers could not start on model {model}: ")
    assert "head_dim=16" in line


def test_a_model_without_system_or_tool_roles_is_said_in_one_line_each(tmp_path):
    from k2rl.lm.hf import check_model_dir
    from tests.k2rl.fixtures import gemma2_dir

    folder = gemma2_dir(tmp_path / "gemma2")
    assert check_model_dir(folder) == [
        f"model.path {folder}: its chat template has no system role; a system prompt is folded "
        "into the first user turn",
        f"model.path {folder}: its chat template has no tool role; tool results are sent as user "
        "turns"]
