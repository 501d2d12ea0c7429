"""The chat layout from the model's own template: the default's ids, and deltas that rebuild
the full rendering for a ChatML and a Llama-3 layout."""
import copy

import pytest

from k2rl.chat import (conversation_ids, observation_ids, prompt_ids, reply_text, render,
                       stop_ids, text_ids)
from k2rl.model import build_tokenizer
from tests.k2rl.fixtures import chatml_tokenizer, llama3_tokenizer

TOK = build_tokenizer()


def role(name):
    return TOK.convert_tokens_to_ids(f"<|{name}|>")


def test_the_default_layout_is_its_template_s():
    """The default model's ids are the ones k2rl laid out by hand before templates drove it."""
    eos = TOK.eos_token_id
    want = [role("user")] + text_ids(TOK, "12*13=") + [eos, role("assistant")]
    assert prompt_ids(TOK, "12*13=") == want
    msgs = [{"role": "user", "content": "12*13="}, {"role": "assistant", "content": "calc(12*13)"}]
    tail = [role("tool")] + text_ids(TOK, "156") + [eos, role("assistant")]
    assert observation_ids(TOK, msgs, "156", eos) == tail
    assert observation_ids(TOK, msgs, "156", None) == [eos] + tail  # a reply cut at its budget
    ids, mask = conversation_ids(TOK, msgs + [{"role": "tool", "content": "156"},
                                              {"role": "assistant", "content": "156"}])
    want = (prompt_ids(TOK, "12*13=") + text_ids(TOK, "calc(12*13)") + [eos] + tail
            + text_ids(TOK, "156") + [eos])
    assert ids == want
    model_ids = text_ids(TOK, "calc(12*13)") + [eos] + text_ids(TOK, "156") + [eos]
    assert [i for i, m in zip(ids, mask) if m] == model_ids  # the loss falls on the replies


@pytest.mark.parametrize("make", [chatml_tokenizer, llama3_tokenizer], ids=["chatml", "llama3"])
def test_ids_grown_by_deltas_equal_the_full_rendering(make):
    """Token-in/token-out: prompt, sampled reply, tool delta, sampled reply... equals the
    tokenised rendering of the final conversation (through the last end-of-turn token)."""
    tok = make()
    eos = tok.eos_token_id
    convo = [{"role": "system", "content": "You are a helpful assistant."},
             {"role": "user", "content": "What is 12+7?"}]
    ids = prompt_ids(tok, convo)
    turns = [("calc(12+7)", "19"), ('<tool_call>{"name": "calc"}</tool_call>', "err"),
             ("The answer is 19.", None)]
    for reply, tool in turns:
        ids += text_ids(tok, reply) + [eos]  # what the engine would have sampled
        convo.append({"role": "assistant", "content": reply_text(tok, text_ids(tok, reply))})
        if tool is not None:
            ids += observation_ids(tok, convo, tool, eos)
            convo.append({"role": "tool", "content": tool})
    full = text_ids(tok, render(tok, convo, False))
    last_end = len(full) - full[::-1].index(eos)
    assert ids == full[:last_end]
    if make is llama3_tokenizer:
        assert ids[0] == tok.bos_token_id and ids.count(tok.bos_token_id) == 1  # BOS once
    assert conversation_ids(tok, convo)[0] == ids


def test_stop_ids_come_from_the_tokenizer_and_the_generation_config():
    from transformers import GenerationConfig

    tok = llama3_tokenizer()
    assert stop_ids(tok) == {tok.eos_token_id}
    end = tok.convert_tokens_to_ids("<|end_of_text|>")
    both = GenerationConfig(eos_token_id=[end, tok.eos_token_id])
    assert stop_ids(tok, both) == {end, tok.eos_token_id}
    assert stop_ids(tok, GenerationConfig(eos_token_id=end)) == {end, tok.eos_token_id}


def test_a_template_whose_continuation_rewrites_the_past_is_a_clear_error():
    tok = chatml_tokenizer()
    reverse = "{% for m in messages|reverse %}{{ m['content'] }}{% endfor %}"
    bad = tok.__class__(tokenizer_object=tok.backend_tokenizer, eos_token="<|im_end|>",
                        chat_template=reverse)
    msgs = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    with pytest.raises(ValueError, match="prefix of its continuation"):
        observation_ids(bad, msgs, "c", bad.eos_token_id)


TOOLS_TEMPLATE = (  # a ChatML template that lists the tools in a system turn, as Qwen2.5's does
    "{% if tools %}<|im_start|>system\nTools: {{ tools | map(attribute='function.name') | join(',') }}"
    "<|im_end|>\n{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_an_environment_s_tools_reach_a_template_that_lists_them():
    from envs.calculator import CalculatorEnv

    tok = chatml_tokenizer()
    tok = tok.__class__(tokenizer_object=tok.backend_tokenizer, eos_token="<|im_end|>",
                        chat_template=TOOLS_TEMPLATE)
    ids = prompt_ids(tok, "37*48=", CalculatorEnv.tools)
    assert reply_text(tok, ids).startswith("system\nTools: calc")
    msgs = [{"role": "user", "content": "37*48="}, {"role": "assistant", "content": "calc(37*48)"}]
    delta = observation_ids(tok, msgs, "1776", tok.eos_token_id, CalculatorEnv.tools)
    assert reply_text(tok, delta) == "\ntool\n1776\nassistant\n"  # the tools block is not repeated
    assert prompt_ids(TOK, "37*48=", CalculatorEnv.tools) == prompt_ids(TOK, "37*48=")  # ignored


# ---------------------------------------------------------------- other families' layouts

def _families():
    from tests.k2rl.fixtures import (chatml_tokenizer, gemma2_tokenizer, llama3_tokenizer,
                                     phi3_tokenizer)

    return {"chatml": chatml_tokenizer(), "llama3": llama3_tokenizer(),
            "gemma2": gemma2_tokenizer(), "phi3": phi3_tokenizer()}


def test_the_template_probe_finds_what_each_family_lays_out():
    from k2rl.chat import layout_of

    toks = _families()
    got = {name: layout_of(t) for name, t in toks.items()}
    end = {name: toks[name].convert_ids_to_tokens(got[name].turn_end) for name in toks}
    assert (got["chatml"].system, got["chatml"].tool_role, end["chatml"]) == (True, "tool", "<|im_end|>")
    assert (got["llama3"].system, got["llama3"].tool_role, end["llama3"]) == (True, "tool", "<|eot_id|>")
    # Gemma-2 raises on a system message and on a tool turn breaking the alternation
    assert (got["gemma2"].system, got["gemma2"].tool_role, end["gemma2"]) == (False, "user", "<end_of_turn>")
    # Phi-3 (April 2024) drops both silently: the probe looks for their text in the rendering
    assert (got["phi3"].system, got["phi3"].tool_role, end["phi3"]) == (False, "user", "<|end|>")
    assert got["gemma2"].notes("m") == [
        "m: its chat template has no system role; a system prompt is folded into the first user turn",
        "m: its chat template has no tool role; tool results are sent as user turns"]


EPISODE = [{"role": "system", "content": "Use the calculator."},
           {"role": "user", "content": "What is 12*13?"},
           {"role": "assistant", "content": "calc(12*13)"},
           {"role": "tool", "content": "156"},
           {"role": "assistant", "content": "The answer is 156."}]


@pytest.mark.parametrize("family", ["chatml", "llama3", "gemma2", "phi3"])
def test_a_tool_episode_s_ids_are_the_template_s_rendering_with_every_text_in_it(family):
    """The ids k2rl trains on (PTX, critic examples and rollouts build them the same way) are
    the family's full rendering of the conversation, the system prompt and the tool result
    included, and each assistant turn ends with the template's own turn end, trained."""
    from k2rl.chat import adapt, conversation_ids, render, text_ids, turn_end_id

    tok = _families()[family]
    ids, mask = conversation_ids(tok, EPISODE)
    full = text_ids(tok, render(tok, EPISODE, False))  # ids end at the last turn's stop token
    assert full[:len(ids)] == ids and tok.decode(full[len(ids):]).strip() == ""
    shown = tok.decode(ids)
    assert all(m["content"] in shown for m in EPISODE)
    trained = [i for i, m in zip(ids, mask) if m]
    assert trained.count(turn_end_id(tok)) == 2
    assert tok.decode(trained).replace(tok.convert_ids_to_tokens(turn_end_id(tok)), "|") == \
        "calc(12*13)|The answer is 156.|"
    roles = [m["role"] for m in adapt(tok, EPISODE)]
    assert roles == {"chatml": ["system", "user", "assistant", "tool", "assistant"],
                     "llama3": ["system", "user", "assistant", "tool", "assistant"],
                     "gemma2": ["user", "assistant", "user", "assistant"],
                     "phi3": ["user", "assistant", "user", "assistant"]}[family]


def test_a_template_that_cannot_lay_out_a_reply_is_one_sentence():
    from k2rl.chat import TemplateError, layout_of
    from tests.k2rl.fixtures import chatml_tokenizer

    tok = copy.deepcopy(chatml_tokenizer())
    tok.chat_template = "{% for m in messages %}{% if m['role'] == 'user' %}{{ m['content'] }}{% endif %}{% endfor %}"
    tok.name_or_path = "odd-model"
    with pytest.raises(TemplateError, match="chat template of odd-model cannot lay out a user "
                                            "turn and an assistant reply"):
        layout_of(tok)
