"""Models users bring (fixtures built here): checked before any service starts, and trained
by the same code as the default model whatever their layout, pad token or stop ids."""
import json

import pytest
import torch

from k2rl.chat import conversation_ids, pad_id, stop_ids
from k2rl.config import ConfigError
from k2rl.model import check_model_dir
from tests.k2rl.fixtures import llama3_dir, qwen2_dir


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return llama3_dir(tmp_path_factory.mktemp("llama3"))


@pytest.fixture(scope="module")
def qwen(tmp_path_factory):
    return qwen2_dir(tmp_path_factory.mktemp("qwen2"))


def test_fixture_models_pass_the_check(llama, qwen):
    check_model_dir(llama)
    check_model_dir(qwen)


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
    from k2rl.group import Group, Request, Status, Trajectory
    from k2rl.trainer import make_optimizer, update

    tok = AutoTokenizer.from_pretrained(llama)
    model = AutoModelForCausalLM.from_pretrained(llama).eval()
    assert tok.pad_token_id is None and pad_id(tok) == tok.eos_token_id
    assert stop_ids(tok, model.generation_config) == {
        tok.eos_token_id, tok.convert_tokens_to_ids("<|end_of_text|>")}
    group = Group(Request("k2rl/Arithmetic-v0", 0, k=2), 1)
    for i, reply in enumerate(["19", "The answer is 20."]):
        ids, mask = conversation_ids(tok, [{"role": "user", "content": "What is 12+7?"},
                                           {"role": "assistant", "content": reply}])
        group.trajectories.append(Trajectory(f"1:0:{i}", "k2rl/Arithmetic-v0", "arithmetic",
                                             "p", i, ids=ids, mask=mask, rewards={"task": 1.0 - i},
                                             status=Status.DONE))
    head = model.lm_head.weight.detach().clone()
    cfg = TrainConfig(lr=1e-2, inner_steps=2)
    metrics = update(model, make_optimizer(model, cfg), [group], cfg, pad_id(tok))
    assert torch.isfinite(torch.tensor(metrics["loss"])) and metrics["grad_norm"] > 0
    assert not torch.equal(head, model.lm_head.weight)  # the untied head is trained too
