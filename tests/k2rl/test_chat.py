"""The chat layout from the model's own template: the default's ids, and deltas that rebuild
the full rendering for a ChatML and a Llama-3 layout."""
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
