"""The embedded default policy: a small Qwen2 causal LM with a character-level tokenizer.

k2rl builds it itself (nothing is downloaded): a `tokenizers` character vocabulary with a chat
template, a Qwen2 config sized for a 2-core CPU, and a short supervised warm-start on
demonstrations played by the default environments' scripted experts (k2rl.bootstrap.sft), all as
the recipe that `model.default` names says (k2rl.bootstrap.recipe). The result is saved in HF
format under `model.cache_dir/<recipe hash>` and reused while the recipe (every field of it)
stays the same. Deterministic given the recipe's `seed`.

A recipe whose weights ship with k2rl (`PREBUILT`: the small default's, whose judging phase
takes hours on a CPU and minutes on a GPU) is not built: its folder is made from the shipped
weights and the tokenizer and config built here (unless `model.prebuilt` is false).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import string
import sys
from pathlib import Path

import torch

from critic.rubrics import load_rubrics
from k2rl.bootstrap.int8 import unpack
from k2rl.bootstrap.sft import instruction_scripts, judging_phase, warm_start
from k2rl.bootstrap.recipe import Recipe, recipe_for
from k2rl.config import ModelConfig
from k2rl.lm.chat import load_tokenizer

RECIPE_VERSION = 11  # bump when the build below changes meaning (8: scripted judgments;
#                    9: byte-level character names, the critic's own answer as its working;
#                    10: checks compare results a digit at a time and list a reply's words;
#                    11: warm-start batches cut by padded tokens: the same gradient, summed in
#                        another order, 35% fewer padded tokens. The recipe's copy_demo_rate
#                        (copying drills) is named in the recipe only where it is not 0;
#                        its judge_* (the judging phase) likewise, where judge_steps
#                        is not 0: a build without the phase keeps its folder and is the
#                        phase's start. Its instr_bounds, instr_misspell_rate and
#                        instr_compare, the instruction scripts' options, likewise where set)
# The instruction scripts' options (the recipe's instr_*), each with its value when off: a
# recipe names them only where set (recipe 11's builds, made before they existed, name none).
INSTRUCTION_SCRIPTS = {"instr_bounds": False, "instr_misspell_rate": 0.0, "instr_compare": False}
# <|critic|> opens the critic's verdict (k2rl.step.critic_ids.open_ids), never a policy reply.
SPECIAL_TOKENS = ["<|pad|>", "<|eos|>", "<|user|>", "<|assistant|>", "<|tool|>", "<|unk|>",
                  "<|critic|>"]
# Weights shipped for a recipe: <folder name>.safetensors, and <folder name>.json saying how
# they were built (its recipe, the phases' losses, the device, the sha256 of the weights).
PREBUILT = Path(__file__).with_name("prebuilt")
CHARS = [c for c in string.printable if c not in "\x0b\x0c\r"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|eos|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def byte_level(char: str) -> str:
    """GPT-2's byte-level name of a one-byte character: itself if printable, else a stand-in
    ("Ġ" for a space, "Ċ" for a newline), as every byte-level BPE vocabulary spells it.

    >>> byte_level("a"), byte_level(" "), byte_level("\\n")
    ('a', 'Ġ', 'Ċ')
    """
    code = ord(char)
    if code > 255:
        raise ValueError(f"{char!r} is not one byte")
    kept = [*range(33, 127), *range(161, 173), *range(174, 256)]
    return char if code in kept else chr(256 + sorted(set(range(256)) - set(kept)).index(code))


def build_tokenizer():
    """A character-level tokenizer in byte-level BPE form: no merges, so one token per
    character, with each character under its byte-level name (`byte_level`).

    The byte-level form is what lets a plain `AutoTokenizer` load a k2rl checkpoint:
    transformers 5 loads any `qwen2` folder's tokenizer as `Qwen2Tokenizer`, which rebuilds a
    byte-level pipeline from the vocabulary, and a vocabulary with a literal " " lost every
    space there (`load_tokenizer` still reads such older folders correctly).
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS + [byte_level(c) for c in CHARS])}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<|unk|>"))
    core.add_special_tokens(SPECIAL_TOKENS)
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|eos|>", pad_token="<|pad|>", unk_token="<|unk|>",
        additional_special_tokens=["<|user|>", "<|assistant|>", "<|tool|>", "<|critic|>"],
        chat_template=CHAT_TEMPLATE, model_max_length=1024)


def build_config(cfg: Recipe, tokenizer):
    from transformers import Qwen2Config

    vocab = -(-len(tokenizer) // 8) * 8  # round up to a multiple of 8 for the matmuls
    return Qwen2Config(
        vocab_size=vocab, hidden_size=cfg.hidden_size, intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.num_layers, num_attention_heads=cfg.num_heads,
        num_key_value_heads=cfg.num_heads, max_position_embeddings=1024, rope_theta=10000.0,
        tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=None, torch_dtype="float32")


def recipe_fields(cfg: Recipe) -> dict:
    """What the build depends on: the recipe's fields (less those that are off, as the builds
    made before they existed named none), under the build's version. Where the model is kept
    and whether its weights are the shipped ones (model.cache_dir, model.prebuilt), and how a
    model is loaded and trained (model.dtype, autocast, attention, lora), lie outside the
    recipe, and the warm-start is always fp32 (see build_model), so none of it is named here."""
    fields = dataclasses.asdict(cfg)
    if not cfg.copy_demo_rate:  # off: the same build as before the drills existed
        fields.pop("copy_demo_rate")
    for name in INSTRUCTION_SCRIPTS:  # off: as before they existed
        if not fields[name]:
            fields.pop(name)
    if not cfg.judge_steps:  # off: the same build as before the phase existed (its start)
        for name in ("judge_steps", "judge_share", "judge_lr"):
            fields.pop(name)
    if cfg.critic_demo_rate > 0:  # the critic's warm-start examples quote the rubric texts
        fields["rubrics"] = [r.text for r in load_rubrics()]
    return {"version": RECIPE_VERSION, **fields}


def recipe_dir(cfg: Recipe, cache_dir: str) -> Path:
    """The folder under `cache_dir` (model.cache_dir) that a build of `cfg` is kept in."""
    key = hashlib.sha256(json.dumps(recipe_fields(cfg), sort_keys=True).encode()).hexdigest()[:12]
    return Path(cache_dir).expanduser() / f"qwen2-char-{key}"


def critic_scripts(built: dict | None, default: Recipe) -> dict:
    """The instruction scripts' options (k2rl.bootstrap.sft.instruction_scripts) a model was
    taught to judge with: those its recipe names (a recipe names them only where set, so an
    absent one is off), or those of `default` (the run's model.default recipe) for a model k2rl
    did not build."""
    if built is not None:
        default = dataclasses.replace(default, **{
            name: built.get(name, off) for name, off in INSTRUCTION_SCRIPTS.items()})
    return instruction_scripts(default)


# Seconds a judging-phase step of the default size took (bench/archive/notebook.md, "The judge's
# build"; "The prebuilt default"): an H200, and 2 CPU cores (2.5 s on the AMD EPYC, 5.3 on the
# Xeon).
JUDGING_STEP_SECONDS = {"cuda": 0.06, "cpu": 2.5}
# Seconds a warm-start step of the default size took: 42 s for 800 on the H200, 12.6 to 29
# minutes for 800 on 2 CPU cores (bench/archive/notebook.md, "Finding the quoted word", "The
# judging phase").
WARM_STEP_SECONDS = {"cuda": 0.06, "cpu": 1.5}


def build_device() -> str:
    """Where the default model is built: "cuda" where torch sees a GPU, else "cpu"."""
    return "cuda" if torch.cuda.is_available() else "cpu"


def default_model(cfg: ModelConfig, progress: bool = True) -> Path:
    """Path of the run's model: `model.path`, or the default model of the recipe that
    `model.default` names, built on first use (`build_model`)."""
    if cfg.path:
        return Path(cfg.path)
    return build_model(recipe_for(cfg), cfg.cache_dir, cfg.prebuilt, progress)


def build_model(recipe: Recipe, cache_dir: str, prebuilt: bool = True,
                progress: bool = True) -> Path:
    """Path of the default model of `recipe` under `cache_dir`, made from the weights shipped
    for it (where `prebuilt` and there are any) or built and warm-started, on first use.

    The warm-start computes in fp32 whatever `model.autocast` says: a bf16 warm-start of the default
    recipe ended at loss 0.212 against 0.199 and started RL weaker (held-out arithmetic 68% against
    82%, all 63.0% against 64.1%, n=738), for 3.6 minutes against 4.6. It runs on a GPU where torch
    sees one (`build_device`): there a judging-phase step of the default recipe took 43 ms on an
    H200 against 3.1 s on 2 CPU cores (bench/archive/notebook.md, "The judge's build"). A GPU build
    is not bit-identical to a CPU build of the same recipe, and the cache does not tell them apart.
    """
    out = recipe_dir(recipe, cache_dir)
    shipped = PREBUILT / f"{out.name}.safetensors"
    use_shipped = prebuilt and shipped.exists()
    if (out / "recipe.json").exists():
        if not (use_shipped and replaced(out, shipped)):
            return out
        if progress:
            print(f"k2rl: the default model's shipped weights changed since {out} was made; "
                  "making it again from them", file=sys.stderr, flush=True)
    from transformers import Qwen2ForCausalLM

    torch.manual_seed(recipe.seed)
    if use_shipped:
        tokenizer = build_tokenizer()
        model, stats = prebuilt_model(shipped, recipe, tokenizer)
    elif recipe.judge_steps:  # the judging phase continues the build without it (cached too)
        if progress:
            print(f"k2rl: building the default model in {out} (no weights ship for this recipe; "
                  f"model.prebuilt={prebuilt}): the warm-start, then a judging "
                  f"phase of {recipe.judge_steps} steps on {build_device()}, about "
                  f"{JUDGING_STEP_SECONDS[build_device()] * recipe.judge_steps / 60:.0f} minutes "
                  f"for the phase at the default size", file=sys.stderr, flush=True)
        start = build_model(dataclasses.replace(recipe, judge_steps=0), cache_dir, prebuilt,
                            progress)
        tokenizer = load_tokenizer(start)
        model = Qwen2ForCausalLM.from_pretrained(start, dtype=torch.float32).to(build_device())
        stats = json.loads((start / "recipe.json").read_text())["warm_start"]
        stats = {"warm_start": stats, "judging_phase": judging_phase(
            model, tokenizer, recipe, progress=progress)}
    else:
        if progress:
            print(f"k2rl: building the default model's warm-start in {out} "
                  f"({recipe.sft_steps} steps on {build_device()}, about "
                  f"{WARM_STEP_SECONDS[build_device()] * recipe.sft_steps / 60:.0f} minutes at "
                  "the default size)", file=sys.stderr, flush=True)
        tokenizer = build_tokenizer()
        model = Qwen2ForCausalLM(build_config(recipe, tokenizer)).to(build_device())
        stats = {"warm_start": warm_start(model, tokenizer, recipe, progress=progress)}
    model.to("cpu")
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)  # left by a build that was interrupted
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    (tmp / "recipe.json").write_text(json.dumps({**recipe_fields(recipe), **stats}, indent=1))
    shutil.rmtree(out, ignore_errors=True)  # a folder made from weights shipped before
    tmp.rename(out)  # atomic: a half-built model is never taken for a finished one
    return out


def replaced(folder: Path, weights: Path) -> bool:
    """Whether `folder` was made from shipped weights other than `weights` (an older k2rl's)."""
    made_from = json.loads((folder / "recipe.json").read_text()).get("sha256")
    return made_from is not None and made_from != json.loads(
        weights.with_suffix(".json").read_text())["sha256"]


def prebuilt_model(weights: Path, recipe: Recipe, tokenizer):
    """The default recipe's model from the weights shipped for it (`PREBUILT`, stored in int8:
    k2rl.bootstrap.int8), and how they were built (their .json beside them). Raises ValueError
    where the weights are not the ones the .json names (a Git LFS pointer, a partial checkout)
    or were built for another recipe."""
    from safetensors.torch import load_file
    from transformers import Qwen2ForCausalLM

    about = json.loads(weights.with_suffix(".json").read_text())
    fix = "set model.prebuilt=false to build the default model here"
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    if digest != about["sha256"]:
        raise ValueError(f"{weights} is not the file its .json names (sha256 {digest[:12]}, "
                         f"not {about['sha256'][:12]}): check it out again, or {fix}")
    if about["recipe"] != recipe_fields(recipe):
        raise ValueError(f"{weights} was built for another recipe than model.default's: {fix}")
    model = Qwen2ForCausalLM(build_config(recipe, tokenizer))
    missing, unexpected = model.load_state_dict(unpack(load_file(weights)), strict=False)
    if unexpected or set(missing) - {"lm_head.weight"}:  # the tied lm_head is not saved
        raise ValueError(f"{weights} does not hold this recipe's Qwen2 weights "
                         f"(missing {missing}, unexpected {unexpected}): {fix}")
    model.tie_weights()
    return model.eval(), {k: v for k, v in about.items() if k != "recipe"}
