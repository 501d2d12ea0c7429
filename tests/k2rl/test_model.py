"""The embedded default model: tokenizer, recipe-keyed cache, determinism."""
from pathlib import Path

from k2rl.bootstrap.model import build_tokenizer, default_model, recipe_dir
from k2rl.config import Config, DefaultModelConfig, ModelConfig
from k2rl.lm.chat import load_tokenizer
from k2rl.lm.chat import prompt_ids

TINY = dict(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64, sft_steps=5, sft_batch=4,
            judge_steps=0)


def tiny(**changes) -> ModelConfig:
    """A model config whose default model is TINY, with `changes` to its recipe."""
    return ModelConfig(default=DefaultModelConfig(**{**TINY, **changes}))


def test_char_tokenizer_round_trips_and_has_a_chat_template():
    tok = build_tokenizer()
    text = "calc(37*48)\n ok"
    ids = tok.encode(text, add_special_tokens=False)
    assert len(ids) == len(text) and tok.decode(ids) == text
    chat = tok.apply_chat_template([{"role": "user", "content": "1+1="}], tokenize=False,
                                   add_generation_prompt=True)
    assert chat == "<|user|>1+1=<|eos|><|assistant|>"


def test_a_built_model_folder_loads_the_tokenizer_it_was_trained_with(tmp_path):
    """The folder's tokenizer encodes as the warm-start's did: spaces included (transformers 5
    loads a qwen2 folder's tokenizer as Qwen2Tokenizer, whose byte-level pipeline dropped every
    space of the character vocabulary, so RL saw "Tellmeaboutthenumber12.")."""
    folder = default_model(tiny(cache_dir=str(tmp_path)), progress=False)
    built, loaded = build_tokenizer(), load_tokenizer(folder)
    text = "Tell me about the number 12.\nList fruits. lowercase, max 3 words."
    for conversation in (text, [{"role": "user", "content": text}]):
        assert prompt_ids(loaded, conversation) == prompt_ids(built, conversation)
    assert loaded.decode(loaded.encode(text, add_special_tokens=False)) == text
    assert (loaded.eos_token_id, loaded.pad_token_id) == (built.eos_token_id, built.pad_token_id)


def test_a_plain_auto_tokenizer_reads_a_k2rl_checkpoint_as_trained():
    """transformers' own loader (Qwen2Tokenizer for a qwen2 folder, a byte-level pipeline
    rebuilt from the vocabulary) gives the ids and text the warm-start used, spaces, newlines
    and tabs included, and the same special tokens."""
    import tempfile

    from transformers import AutoTokenizer, Qwen2Config

    built = build_tokenizer()
    with tempfile.TemporaryDirectory() as folder:
        built.save_pretrained(folder)
        Qwen2Config(vocab_size=len(built)).save_pretrained(folder)
        plain = AutoTokenizer.from_pretrained(folder)
    text = "Tell me about the number 12.\n- a b: calc(3*4)\tx ~`{}|"
    conversation = [{"role": "user", "content": text}, {"role": "assistant", "content": text},
                    {"role": "critic", "content": "12 vs 12: yes"}]
    for tokenizer in (built, plain):
        assert tokenizer.decode(tokenizer.encode(text, add_special_tokens=False)) == text
    assert prompt_ids(plain, conversation) == prompt_ids(built, conversation)
    assert len(built.encode(text, add_special_tokens=False)) == len(text)  # one id a character
    for token in ("<|eos|>", "<|pad|>", "<|critic|>", "<|user|>"):
        assert plain.convert_tokens_to_ids(token) == built.convert_tokens_to_ids(token)


def test_build_is_cached_by_recipe_and_deterministic(tmp_path):
    a = default_model(tiny(cache_dir=str(tmp_path / "a")), progress=False)
    b = default_model(tiny(cache_dir=str(tmp_path / "b")), progress=False)
    weights = lambda d: (Path(d) / "model.safetensors").read_bytes()  # noqa: E731
    assert weights(a) == weights(b)  # same seed, same recipe: same bytes
    stamp = (Path(a) / "model.safetensors").stat().st_mtime_ns
    assert default_model(tiny(cache_dir=str(tmp_path / "a"))) == a  # reused
    assert (Path(a) / "model.safetensors").stat().st_mtime_ns == stamp
    other = DefaultModelConfig(**{**TINY, "seed": 1}, cache_dir=str(tmp_path / "a"))
    assert recipe_dir(other) != a
    assert (Path(a) / "recipe.json").exists() and (Path(a) / "tokenizer.json").exists()


def test_the_judge_has_turns_of_its_own_and_falls_back_to_the_assistant_s():
    from k2rl.step.judge_ids import judge_role, open_ids

    tok = build_tokenizer()
    assert judge_role(tok) == "critic"
    msgs = [{"role": "user", "content": "Q: 1+1="}, {"role": "judge", "content": "1+1=2"},
            {"role": "user", "content": "2"}]
    ids = open_ids(tok, msgs)
    assert tok.decode(ids) == "<|user|>Q: 1+1=<|eos|><|critic|>1+1=2<|eos|><|user|>2<|eos|><|critic|>"
    assert tok.convert_tokens_to_ids("<|assistant|>") not in ids  # a policy reply never starts here


def test_a_tokenizer_without_the_critic_role_judges_as_the_assistant():
    from k2rl.step.judge_ids import judge_role, open_ids

    tok = build_tokenizer()
    old = tok.convert_tokens_to_ids

    class NoCritic:
        unk_token_id = tok.unk_token_id
        eos_token_id = tok.eos_token_id

        def convert_tokens_to_ids(self, t):
            return tok.unk_token_id if t == "<|critic|>" else old(t)

        def encode(self, text, add_special_tokens=False):
            return tok.encode(text, add_special_tokens=add_special_tokens)

        def apply_chat_template(self, *args, **kwargs):
            return tok.apply_chat_template(*args, **kwargs)

    other = NoCritic()
    assert judge_role(other) == "assistant"
    msgs = [{"role": "user", "content": "x"}, {"role": "judge", "content": "w"}]
    assert tok.decode(open_ids(other, msgs)) == (
        "<|user|>x<|eos|><|assistant|>w<|eos|><|assistant|>")


def test_the_recipe_names_the_rubrics_only_when_the_warm_start_quotes_them():
    from k2rl.bootstrap.model import recipe

    assert "rubrics" not in recipe(DefaultModelConfig(**{**TINY, "critic_demo_rate": 0.0}))
    quoted = recipe(DefaultModelConfig(**TINY, critic_demo_rate=0.1))["rubrics"]
    assert "No praise of the question." in quoted  # editing a rubric makes a new model


def test_copying_drills_are_named_in_the_recipe_only_when_on():
    from k2rl.bootstrap.model import recipe

    assert "copy_demo_rate" not in recipe(DefaultModelConfig(**TINY))  # off: the older build
    assert recipe(DefaultModelConfig(**TINY, copy_demo_rate=0.2))["copy_demo_rate"] == 0.2


def test_the_default_recipe_keeps_its_cache_folders():
    """The default's build without the judging phase hashes as recipe 11 did before the recipe
    fields moved under model.default and the phase existed (it is the phase's start, so a
    cached recipe-11 build is reused); the default with the phase has a folder of its own; the
    instruction scripts' options are named only where set. A change here would rebuild every
    user's cached default model."""
    import dataclasses

    from k2rl.bootstrap.model import RECIPE_VERSION, recipe

    assert RECIPE_VERSION == 11  # bump both together when the build changes meaning
    default = Config().model.default
    start = dataclasses.replace(default, judge_steps=0)
    assert recipe_dir(start).name == "qwen2-char-3b0a00d8ebfe"
    assert recipe_dir(default).name == "qwen2-char-c4f39acce3d9"
    base = {"version", "hidden_size", "num_layers", "num_heads", "intermediate_size", "sft_steps",
            "sft_batch", "sft_lr", "tool_rate", "word_demos", "demo_tasks", "critic_demo_rate",
            "seed", "rubrics"}
    assert set(recipe(start)) == base
    assert set(recipe(default)) == base | {"judge_steps", "judge_share", "judge_lr"}
    scripts = dataclasses.replace(default, instr_bounds=True, instr_misspell_rate=0.5,
                                  instr_compare=True)
    assert set(recipe(scripts)) == set(recipe(default)) | {"instr_bounds", "instr_misspell_rate",
                                                           "instr_compare"}
    assert recipe_dir(scripts) != recipe_dir(default)


def test_the_judging_phase_continues_the_cached_build_without_it(tmp_path):
    """A recipe with judge_steps builds (and caches) its start, the same recipe without the
    phase, then trains the phase from it: two folders, different weights, both reused."""
    import json

    with_phase = tiny(cache_dir=str(tmp_path), judge_steps=2)
    folder = default_model(with_phase, progress=False)
    start = recipe_dir(DefaultModelConfig(**TINY, cache_dir=str(tmp_path)))
    assert folder != start and (start / "recipe.json").exists()
    weights = lambda d: (Path(d) / "model.safetensors").read_bytes()  # noqa: E731
    assert weights(folder) != weights(start)
    stats = json.loads((folder / "recipe.json").read_text())
    assert stats["judging_phase"]["steps"] == 2 and stats["warm_start"]["steps"] == 5
    assert stats["judge_steps"] == 2
    assert default_model(with_phase, progress=False) == folder  # reused


def test_the_recipe_s_demo_envs_follow_its_demonstration_fields():
    from k2rl.bootstrap.sft import make_demo_envs

    by_id = {type(e).__name__: e for e in make_demo_envs(DefaultModelConfig(tool_rate=0.2))}
    assert by_id["CalculatorEnv"].tool_rate == 0.2
    assert by_id["TopicInstructionsEnv"].word_constraint is True  # the default recipe's
    plain = make_demo_envs(DefaultModelConfig(word_demos=False,
                                              demo_tasks=["k2rl/Instructions-v1"]))
    assert plain[0].word_constraint is False


def test_a_built_model_loads_the_standard_way_to_k2rl_s_ids_and_greedy_text(tmp_path):
    """What TRL, lm-eval or a transformers pipeline do with a k2rl folder: plain AutoTokenizer
    and AutoModelForCausalLM give the ids and the greedy continuation k2rl's loader gives
    (before recipe 9, the plain tokenizer dropped every space: held-out instructions 67.5%
    through k2rl, 49.0% through plain HF or vLLM)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = default_model(tiny(cache_dir=str(tmp_path)), progress=False)
    plain, ours = AutoTokenizer.from_pretrained(folder), load_tokenizer(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    conversation = [{"role": "user", "content": "List colors. lowercase, max 3 words."}]
    ids = prompt_ids(ours, conversation)
    assert plain.apply_chat_template(conversation, add_generation_prompt=True,
                                     tokenize=True, return_dict=False) == ids
    assert "List colors." in plain.decode(ids)
    with torch.no_grad():
        out = model.generate(torch.tensor([ids]), max_new_tokens=8, do_sample=False,
                             pad_token_id=plain.pad_token_id)[0, len(ids):].tolist()
    assert plain.decode(out) == ours.decode(out)
