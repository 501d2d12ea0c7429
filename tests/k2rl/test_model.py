"""The embedded default model: tokenizer, recipe-keyed cache, determinism."""
from pathlib import Path

from critic.layout import CRITIC
from k2rl.bootstrap.model import build_model, build_tokenizer, default_model, recipe_dir
from k2rl.bootstrap.recipe import RECIPES, Recipe, recipe_for
from k2rl.config import ConfigError, ModelConfig, load_config
from k2rl.lm.chat import load_tokenizer
from k2rl.lm.chat import prompt_ids

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
TINY = dict(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64, sft_steps=5, sft_batch=4,
            judge_steps=0)


def tiny(**changes) -> Recipe:
    """TINY, with `changes`."""
    return Recipe(**{**TINY, **changes})


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
    folder = build_model(tiny(), str(tmp_path), progress=False)
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
    a = build_model(tiny(), str(tmp_path / "a"), progress=False)
    b = build_model(tiny(), str(tmp_path / "b"), progress=False)
    weights = lambda d: (Path(d) / "model.safetensors").read_bytes()  # noqa: E731
    assert weights(a) == weights(b)  # same seed, same recipe: same bytes
    stamp = (Path(a) / "model.safetensors").stat().st_mtime_ns
    assert build_model(tiny(), str(tmp_path / "a")) == a  # reused
    assert (Path(a) / "model.safetensors").stat().st_mtime_ns == stamp
    assert recipe_dir(tiny(seed=1), str(tmp_path / "a")) != a
    assert (Path(a) / "recipe.json").exists() and (Path(a) / "tokenizer.json").exists()


def test_the_critic_has_turns_of_its_own_and_falls_back_to_the_assistant_s():
    from k2rl.step.critic_ids import critic_role, open_ids

    tok = build_tokenizer()
    assert critic_role(tok) == "critic"
    msgs = [{"role": "user", "content": "Q: 1+1="}, {"role": CRITIC, "content": "1+1=2"},
            {"role": "user", "content": "2"}]
    ids = open_ids(tok, msgs)
    assert tok.decode(ids) == "<|user|>Q: 1+1=<|eos|><|critic|>1+1=2<|eos|><|user|>2<|eos|><|critic|>"
    assert tok.convert_tokens_to_ids("<|assistant|>") not in ids  # a policy reply never starts here


def test_a_tokenizer_without_the_critic_role_judges_as_the_assistant():
    from k2rl.step.critic_ids import critic_role, open_ids

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
    assert critic_role(other) == "assistant"
    msgs = [{"role": "user", "content": "x"}, {"role": CRITIC, "content": "w"}]
    assert tok.decode(open_ids(other, msgs)) == (
        "<|user|>x<|eos|><|assistant|>w<|eos|><|assistant|>")


def test_the_recipe_names_the_rubrics_only_when_the_warm_start_quotes_them():
    from k2rl.bootstrap.model import recipe_fields

    assert "rubrics" not in recipe_fields(tiny(critic_demo_rate=0.0))
    quoted = recipe_fields(tiny(critic_demo_rate=0.1))["rubrics"]
    assert "No praise of the question." in quoted  # editing a rubric makes a new model


def test_copying_drills_are_named_in_the_recipe_only_when_on():
    from k2rl.bootstrap.model import recipe_fields

    assert "copy_demo_rate" not in recipe_fields(tiny())  # off: the older build
    assert recipe_fields(tiny(copy_demo_rate=0.2))["copy_demo_rate"] == 0.2


def test_the_default_recipe_keeps_its_cache_folders():
    """Recipe 11's builds keep the folders they had (a cached build is reused): without the
    judging phase it hashes as before the recipe fields moved under model.default and the
    phase existed, and the 200-step phase, the instruction scripts' options being named only
    where set. The default (3000 steps, all three options) has its own folder, the name of its
    shipped weights; each configs/ file's recipe keeps the folder it had when the file set the
    recipe's fields itself. A change here would rebuild every user's cached default model."""
    import dataclasses

    from k2rl.bootstrap.model import RECIPE_VERSION, recipe_fields

    assert RECIPE_VERSION == 11  # bump both together when the build changes meaning
    default = recipe_for(ModelConfig())
    off = dict(instr_bounds=False, instr_misspell_rate=0.0, instr_compare=False)
    recipe11 = dataclasses.replace(default, judge_steps=200, **off)
    start = dataclasses.replace(recipe11, judge_steps=0)
    folder = lambda recipe: recipe_dir(recipe, "~/.cache/k2rl/models").name  # noqa: E731
    assert folder(start) == "qwen2-char-3b0a00d8ebfe"
    assert folder(recipe11) == "qwen2-char-c4f39acce3d9" == folder(RECIPES["recipe11"])
    assert folder(default) == "qwen2-char-4ef550fc5550"
    named = {name: folder(recipe_for(load_config(CONFIGS / f"{name}.yaml").model))
             for name in ("default", "tiny", "recipe11", "critic", "gym-mix")}
    assert named == {"default": "qwen2-char-4ef550fc5550", "tiny": "qwen2-char-fc1c0c88ff4b",
                     "recipe11": "qwen2-char-c4f39acce3d9", "critic": "qwen2-char-fe7b7ca8bdda",
                     "gym-mix": "qwen2-char-82c75e6a8321"}
    base = {"version", "hidden_size", "num_layers", "num_heads", "intermediate_size", "sft_steps",
            "sft_batch", "sft_lr", "tool_rate", "word_demos", "demo_tasks", "critic_demo_rate",
            "seed", "rubrics"}
    assert set(recipe_fields(start)) == base
    assert set(recipe_fields(recipe11)) == base | {"judge_steps", "judge_share", "judge_lr"}
    assert set(recipe_fields(default)) == set(recipe_fields(recipe11)) | set(off)


def test_the_shipped_weights_are_the_default_recipe_s():
    """k2rl/bootstrap/prebuilt holds the default recipe's weights, named by its folder, with
    the recipe they were built for and their sha256: a change of the default recipe without
    new weights fails here, as a clone that holds a Git LFS pointer would."""
    import hashlib
    import json

    from k2rl.bootstrap.model import PREBUILT, recipe_fields

    default = recipe_for(ModelConfig())
    weights = PREBUILT / f"{recipe_dir(default, ModelConfig().cache_dir).name}.safetensors"
    about = json.loads(weights.with_suffix(".json").read_text())
    assert about["recipe"] == recipe_fields(default)
    assert about["sha256"] == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert about["judging_phase"]["steps"] == default.judge_steps == 3000
    assert sorted(p.suffix for p in PREBUILT.iterdir()) == [".json", ".safetensors"]
    assert weights.stat().st_size < 5e6 and about["storage"].startswith("int8")


def test_the_default_model_is_made_from_its_shipped_weights(tmp_path):
    """With model.prebuilt (the default) nothing is trained: the folder holds the
    shipped weights, the tokenizer and config built here, and how the weights were built."""
    import json

    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    from k2rl.bootstrap.int8 import unpack
    from k2rl.bootstrap.model import PREBUILT

    folder = default_model(ModelConfig(cache_dir=str(tmp_path)), progress=False)
    shipped = unpack(load_file(PREBUILT / f"{folder.name}.safetensors"))
    model = AutoModelForCausalLM.from_pretrained(folder)
    assert all(torch.equal(model.state_dict()[k], v) for k, v in shipped.items())
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    built = json.loads((folder / "recipe.json").read_text())
    assert built["instr_compare"] is True and "NVIDIA" in built["built"]["device"]
    assert load_tokenizer(folder).decode(load_tokenizer(folder).encode("a b")) == "a b"
    from k2rl.cli import default_model_line  # what `k2rl train` says of it
    assert "weights shipped for its recipe (int8, widened to fp32), built on NVIDIA" in \
        default_model_line(folder) and "prebuilt=false" in default_model_line(folder)
    tiny_folder = build_model(tiny(), str(tmp_path), progress=False)
    assert default_model_line(tiny_folder).endswith("built on this machine")


def test_a_folder_made_from_weights_shipped_before_is_made_again(tmp_path, monkeypatch, capsys):
    """A k2rl that ships new weights for the same recipe (the fp32 file before the int8 one)
    replaces the cached folder made from the old ones, and says so; a folder made from the
    current weights, or built here, is reused as it is."""
    import json
    import shutil

    import pytest

    from k2rl.bootstrap import model as built

    cfg = ModelConfig(cache_dir=str(tmp_path / "c"))
    name = recipe_dir(recipe_for(cfg), cfg.cache_dir).name
    for suffix in (".json", ".safetensors"):
        shutil.copy(built.PREBUILT / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    monkeypatch.setattr(built, "PREBUILT", tmp_path)
    folder = default_model(cfg, progress=False)
    made = (folder / "model.safetensors").stat().st_mtime_ns
    capsys.readouterr()
    assert default_model(cfg) == folder and capsys.readouterr().err == ""
    assert (folder / "model.safetensors").stat().st_mtime_ns == made
    about = json.loads((tmp_path / f"{name}.json").read_text())
    (tmp_path / f"{name}.json").write_text(json.dumps({**about, "sha256": "0" * 64}))
    (folder / "marker").write_text("")
    with pytest.raises(ValueError, match="prebuilt=false"):  # the new file is checked first
        default_model(cfg)
    assert "shipped weights changed" in capsys.readouterr().err and (folder / "marker").exists()
    (tmp_path / f"{name}.json").write_text(json.dumps(about))
    recipe_json = json.loads((folder / "recipe.json").read_text())
    (folder / "recipe.json").write_text(json.dumps({**recipe_json, "sha256": "1" * 64}))
    assert default_model(cfg, progress=False) == folder and not (folder / "marker").exists()
    assert json.loads((folder / "recipe.json").read_text())["sha256"] == about["sha256"]


def test_shipped_weights_that_are_not_the_named_file_get_a_clear_error(tmp_path, monkeypatch):
    """A truncated or LFS-pointer weights file is refused with the fix, before any run."""
    import shutil

    import pytest

    from k2rl.bootstrap import model as built

    name = recipe_dir(RECIPES["small"], ModelConfig().cache_dir).name
    shutil.copy(built.PREBUILT / f"{name}.json", tmp_path / f"{name}.json")
    (tmp_path / f"{name}.safetensors").write_text("version https://git-lfs.github.com/spec/v1\n")
    monkeypatch.setattr(built, "PREBUILT", tmp_path)
    with pytest.raises(ValueError, match="prebuilt=false"):
        default_model(ModelConfig(cache_dir=str(tmp_path / "c")), progress=False)


def test_the_judging_phase_continues_the_cached_build_without_it(tmp_path):
    """A recipe with judge_steps builds (and caches) its start, the same recipe without the
    phase, then trains the phase from it: two folders, different weights, both reused."""
    import json

    with_phase = tiny(judge_steps=2)
    folder = build_model(with_phase, str(tmp_path), progress=False)
    start = recipe_dir(tiny(), str(tmp_path))
    assert folder != start and (start / "recipe.json").exists()
    weights = lambda d: (Path(d) / "model.safetensors").read_bytes()  # noqa: E731
    assert weights(folder) != weights(start)
    stats = json.loads((folder / "recipe.json").read_text())
    assert stats["judging_phase"]["steps"] == 2 and stats["warm_start"]["steps"] == 5
    assert stats["judge_steps"] == 2
    assert build_model(with_phase, str(tmp_path), progress=False) == folder  # reused


def test_the_recipe_s_demo_envs_follow_its_demonstration_fields():
    from k2rl.bootstrap.sft import make_demo_envs

    by_id = {type(e).__name__: e for e in make_demo_envs(Recipe(tool_rate=0.2))}
    assert by_id["CalculatorEnv"].tool_rate == 0.2
    assert by_id["TopicInstructionsEnv"].word_constraint is True  # the default recipe's
    plain = make_demo_envs(Recipe(word_demos=False, demo_tasks=["k2rl/Instructions-v1"]))
    assert plain[0].word_constraint is False


def test_a_built_model_loads_the_standard_way_to_k2rl_s_ids_and_greedy_text(tmp_path):
    """What TRL, lm-eval or a transformers pipeline do with a k2rl folder: plain AutoTokenizer
    and AutoModelForCausalLM give the ids and the greedy continuation k2rl's loader gives
    (before recipe 9, the plain tokenizer dropped every space: held-out instructions 67.5%
    through k2rl, 49.0% through plain HF or vLLM)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = build_model(tiny(), str(tmp_path), progress=False)
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


def test_a_build_without_shipped_weights_says_what_it_will_take(tmp_path, capsys):
    """A recipe no weights ship for (another seed, say) is built here, and says so first: how
    many judging-phase steps on which device, and about how long."""
    build_model(tiny(judge_steps=1), str(tmp_path), progress=True)
    said = capsys.readouterr().err
    assert "k2rl: building the default model" in said and "judging phase of 1 steps" in said
    assert "no weights ship for this recipe" in said
    # its start, the recipe without the phase, is built first and says so too
    assert said.index("judging phase of 1 steps") < said.index(
        "k2rl: building the default model's warm-start in ") and f"({TINY['sft_steps']} steps on " \
        in said
    build_model(tiny(judge_steps=1), str(tmp_path), progress=True)
    assert "building" not in capsys.readouterr().err  # cached: nothing to say


def test_model_default_names_a_recipe_and_a_recipe_checks_its_fields(tmp_path):
    """model.default names a recipe of k2rl/bootstrap/recipe.py: another name is one sentence
    with the choices, before anything is built; a recipe with a bad field is refused."""
    import pytest

    with pytest.raises(ConfigError, match=r"^config key model.default must name a recipe of "
                                          r"k2rl/bootstrap/recipe.py \(small, tiny, .*not 'huge'$"):
        default_model(ModelConfig(default="huge", cache_dir=str(tmp_path)))
    assert not any(tmp_path.iterdir())
    assert default_model(ModelConfig(path="/some/model", default="huge")) == Path("/some/model")
    with pytest.raises(ValueError, match="recipe field hidden_size must be divisible by num_heads"):
        tiny(num_heads=3)
