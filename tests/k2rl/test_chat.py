"""The chat layout from the model's own template: the default's ids, and deltas that rebuild
the full rendering for a ChatML and a Llama-3 layout."""
import copy

import pytest

from k2rl.bootstrap.model import build_tokenizer
from k2rl.lm.chat import (conversation_ids, observation_ids, prompt_ids, reply_text, render,
                          stop_ids, text_ids)
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
    from tests.k2rl.fixtures import FAMILIES, chatml_tokenizer, llama3_tokenizer

    return {"chatml": chatml_tokenizer(), "llama3": llama3_tokenizer(),
            **{name: make() for name, (make, _) in FAMILIES.items()}}


FAMILY_NAMES = ["qwen2.5", "llama3.1", "mistral-v0.3", "gemma2", "phi3", "phi3-jul2024"]


def test_the_template_probe_finds_what_each_family_lays_out():
    from k2rl.lm.chat import layout_of

    toks = _families()
    got = {name: layout_of(t) for name, t in toks.items()}
    seen = {name: (got[name].system, got[name].calls, got[name].several, got[name].tool_role,
                   toks[name].convert_ids_to_tokens(got[name].turn_end)) for name in toks}
    assert seen == {
        "chatml": (True, False, False, "tool", "<|im_end|>"),
        "llama3": (True, False, False, "tool", "<|eot_id|>"),
        "qwen2.5": (True, True, True, "tool", "<|im_end|>"),
        "llama3.1": (True, True, False, "tool", "<|eot_id|>"),  # one call a turn
        # shows the system prompt only while a user turn is last; a result must answer a call
        "mistral-v0.3": (False, True, True, "user", "</s>"),
        # Gemma-2 raises on a system message and on a tool turn breaking the alternation
        "gemma2": (False, False, False, "user", "<end_of_turn>"),
        # Phi-3 (April 2024) drops both silently: the probe looks for their text
        "phi3": (False, False, False, "user", "<|end|>"),
        # Phi-3 (July 2024) has a system role, drops a tool turn, and ends a finished
        # conversation with its EOS (not a prefix of its continuation)
        "phi3-jul2024": (True, False, False, "user", "<|end|>")}
    assert {name: got[name].closing for name in toks if got[name].closing} == {
        "phi3-jul2024": "<|endoftext|>"}  # ends a finished conversation, not a continued one
    assert got["gemma2"].notes("m") == [
        "m: its chat template has no system role; a system prompt is folded into the first user turn",
        "m: its chat template has no tool role; tool results are sent as user turns"]
    assert [name for name in toks if not got[name].listed] == ["mistral-v0.3"]
    assert got["mistral-v0.3"].notes("m")[2] == (
        "m: with tools listed, its chat template continues a conversation only after a call in "
        "its own form (a user turn moves its tool list, rewriting the past), so a turn with a "
        "malformed call ends the episode as a wrong answer, counted in malformed_calls")


EPISODE = [{"role": "system", "content": "Use the calculator."},
           {"role": "user", "content": "What is 12*13?"},
           {"role": "assistant", "content": "calc(12*13)"},
           {"role": "tool", "content": "156"},
           {"role": "assistant", "content": "The answer is 156."}]

# A call as each family's model writes it (its template's own rendering of the call)
CALLS = {"qwen2.5": '<tool_call>\n{"name": "calc", "arguments": {"expression": "12*13"}}\n</tool_call>',
         "llama3.1": '{"name": "calc", "parameters": {"expression": "12*13"}}',
         "mistral-v0.3": '[TOOL_CALLS] [{"name": "calc", "arguments": {"expression": "12*13"}, '
                         '"id": "k2Tq9ZmX1"}]',
         "gemma2": "calc(12*13)", "phi3": "calc(12*13)", "phi3-jul2024": "calc(12*13)"}


def _until_turn_end(tok, ids: list[int]) -> list[int]:
    from k2rl.lm.chat import turn_end_id

    return ids[:ids.index(turn_end_id(tok)) + 1]


def _rendered_ids(tok, convo, tools=None) -> list[int]:
    """The tokenised rendering of a conversation through its last assistant turn's end."""
    from k2rl.lm.chat import turn_end_id

    full = text_ids(tok, render(tok, convo, False, tools))
    return full[:len(full) - full[::-1].index(turn_end_id(tok))]


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_a_two_turn_tool_episode_grown_by_deltas_is_the_template_s_rendering(family):
    """Token-in/token-out with a model that writes its family's call: the prompt, the reply
    it samples (the template's own ids for it, in context: Mistral's SentencePiece gives a
    reply after "[/INST] " a "▁" it has not alone), the tool delta, the final reply, equal the
    tokenised rendering of the conversation; the call reaches the template as `tool_calls`
    with its id, the result as a tool message answering it."""
    from envs.calculator import CalculatorEnv
    from k2rl.lm.chat import adapt, layout_of

    tok, tools = _families()[family], CalculatorEnv.tools
    convo = EPISODE[:2]
    ids = prompt_ids(tok, convo, tools)
    for reply, result in ((CALLS[family], "156"), ("The answer is 156.", None)):
        whole = text_ids(tok, render(tok, convo + [{"role": "assistant", "content": reply}],
                                     False, tools))
        assert whole[:len(ids)] == ids
        sampled = _until_turn_end(tok, whole[len(ids):])  # what the engine samples
        ids += sampled
        convo = convo + [{"role": "assistant", "content": reply_text(tok, sampled)}]
        assert convo[-1]["content"] == reply  # the call markers are kept, the stop dropped
        if result is not None:
            ids += observation_ids(tok, convo, result, sampled[-1], tools)
            convo = convo + [{"role": "tool", "content": result}]
    assert ids == _rendered_ids(tok, convo, tools)
    assert conversation_ids(tok, convo, tools)[0] == ids
    shown = adapt(tok, convo, tools)
    if layout_of(tok).calls:
        call = shown[-3]["tool_calls"][0]
        assert call["function"] == {"name": "calc", "arguments": {"expression": "12*13"}}
        assert shown[-2] == {"role": "tool", "content": "156", "tool_call_id": call["id"],
                             "name": "calc"}
        assert len(call["id"]) == 9 and call["id"].isalnum()
    if family == "mistral-v0.3":
        assert call["id"] == "k2Tq9ZmX1"  # the model's own id, as its template writes it back
        pieces = tok.convert_ids_to_tokens(ids)
        assert pieces[pieces.index("[/TOOL_RESULTS]") + 1] == "▁The"


# Mistral-7B-Instruct-v0.1's published template: a reply follows "[/INST]" with no space
MISTRAL_V01 = (
    "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != "
    "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/"
    "assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}"
    "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}"
    "{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant "
    "roles are supported!') }}{% endif %}{% endfor %}")


def test_sentencepiece_replies_are_encoded_in_context():
    """A SentencePiece tokenizer (as transformers 5 loads one) gives a text's first word a
    "▁" it has not after "[/INST]": a reply, a PTX sample and a delta take their ids from the
    rendering of the whole conversation, never from the reply encoded alone."""
    import copy

    from tests.k2rl.fixtures import mistral_tokenizer

    tok = copy.deepcopy(mistral_tokenizer())
    tok.chat_template = MISTRAL_V01
    convo = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello there"},
             {"role": "tool", "content": "ok"}, {"role": "assistant", "content": "Done"}]
    ids, mask = conversation_ids(tok, convo)
    assert ids == _rendered_ids(tok, convo)
    pieces = tok.convert_ids_to_tokens(ids)
    assert pieces[pieces.index("[/INST]") + 1] == "Hello"  # no "▁": what the model samples
    assert tok.convert_ids_to_tokens(text_ids(tok, "Hello there"))[0] == "▁Hello"  # alone
    assert _trained_turns(tok, ids, mask) == ["Hello there</s>", "Done</s>"]
    from k2rl.step.critic_ids import verdict_ids

    assert tok.convert_ids_to_tokens(verdict_ids(tok)) == ["A", "B"]  # not "▁A": in context
    delta = observation_ids(tok, convo[:2], "ok", tok.eos_token_id)
    assert prompt_ids(tok, convo[:1]) + ids[len(prompt_ids(tok, convo[:1])):][:3] + delta == \
        prompt_ids(tok, convo[:2] + [{"role": "user", "content": "ok"}])


@pytest.mark.parametrize("family, stop, delta", [
    ("qwen2.5", "<|endoftext|>", "\n<|im_start|>user\n<tool_response>\n156\n</tool_response>"
                                 "<|im_end|>\n<|im_start|>assistant\n"),
    ("phi3", "<|assistant|>", "\n<|user|>\n156<|end|>\n<|assistant|>\n")])
def test_a_reply_ended_by_another_stop_id_is_followed_from_its_turn_end(family, stop, delta):
    """Qwen2.5's generation config stops at <|endoftext|> too, Phi-3's at <|assistant|>: the
    delta starts where the rendering of the reply ends (after the template's turn end), not
    after the stop id's text, so the next turn keeps its newline and the reply is not copied
    twice."""
    tok = _families()[family]
    msgs = EPISODE[1:3]
    got = observation_ids(tok, msgs, "156", tok.convert_tokens_to_ids(stop))
    assert tok.decode(got) == delta


def test_two_calls_in_a_turn_stay_text_for_a_template_that_takes_one():
    """Llama-3.1's template raises on a turn of two calls: such a turn reaches it as the text
    the model wrote, its result as a tool turn; Qwen2.5's lays both calls out."""
    from envs.calculator import CalculatorEnv
    from k2rl.lm.chat import adapt

    two = ('<tool_call>{"name": "calc", "arguments": {"expression": "1+1"}}</tool_call>\n'
           '<tool_call>{"name": "calc", "arguments": {"expression": "2+2"}}</tool_call>')
    convo = EPISODE[1:2] + [{"role": "assistant", "content": two}, {"role": "tool", "content": "2\n4"},
                            {"role": "assistant", "content": "4"}]
    toks, tools = _families(), CalculatorEnv.tools
    assert adapt(toks["llama3.1"], convo, tools)[1] == convo[1]
    assert two in render(toks["llama3.1"], convo, False, tools)
    assert len(adapt(toks["qwen2.5"], convo, tools)[1]["tool_calls"]) == 2
    for name in ("llama3.1", "qwen2.5"):
        assert conversation_ids(toks[name], convo, tools)[0] == _rendered_ids(toks[name], convo, tools)


def test_an_openai_form_conversation_renders_as_the_model_wrote_it():
    """A PTX sample or dataset conversation in the OpenAI/HF form (`tool_calls` with ids,
    `tool_call_id`) lays out as the raw text a model writes; for a template with no
    structured calls the call is written into the turn's text."""
    from k2rl.lm.chat import call_id

    structured = [EPISODE[1], {"role": "assistant", "content": None, "tool_calls": [
        {"id": "k2Tq9ZmX1", "type": "function",
         "function": {"name": "calc", "arguments": {"expression": "12*13"}}}]},
        {"role": "tool", "tool_call_id": "k2Tq9ZmX1", "name": "calc", "content": "156"},
        EPISODE[4]]
    toks = _families()
    raw = structured[:1] + [{"role": "assistant", "content": CALLS["mistral-v0.3"]}] + [
        {"role": "tool", "content": "156"}, EPISODE[4]]
    assert render(toks["mistral-v0.3"], structured, False) == render(toks["mistral-v0.3"], raw, False)
    del structured[1]["tool_calls"][0]["id"]  # no id given: one of the form templates take
    assert f'"id": "{call_id(1, 0)}"' in render(toks["mistral-v0.3"], structured, False)
    assert '<tool_call>{"name": "calc", "arguments": {"expression": "12*13"}}</tool_call>' in \
        render(toks["gemma2"], structured, False)


def _trained_turns(tok, ids, mask) -> list[str]:
    """The text of each run of trained tokens, its turn end included."""
    runs, run = [], []
    for i, m in zip(ids + [None], mask + [0]):
        if m:
            run.append(i)
        elif run:
            runs.append(tok.decode(run).strip())
            run = []
    return runs


@pytest.mark.parametrize("family", ["chatml", "llama3"] + FAMILY_NAMES)
def test_a_ptx_sample_s_ids_are_the_template_s_rendering_with_every_text_in_it(family):
    """The ids k2rl trains on (PTX samples, warm-start demonstrations) are the family's full
    rendering of the conversation, the system prompt and the tool result included, and each
    assistant turn ends with the template's own turn end, trained."""
    from k2rl.lm.chat import adapt, turn_end_id

    tok = _families()[family]
    ids, mask = conversation_ids(tok, EPISODE)
    assert ids == _rendered_ids(tok, EPISODE)
    shown = tok.decode(ids)
    assert all(m["content"] in shown for m in EPISODE)
    end = tok.convert_ids_to_tokens(turn_end_id(tok))
    assert _trained_turns(tok, ids, mask) == [f"calc(12*13){end}", f"The answer is 156.{end}"]
    roles = [m["role"] for m in adapt(tok, EPISODE)]
    folded = ["user", "assistant", "user", "assistant"]
    assert roles == {"mistral-v0.3": folded, "gemma2": folded, "phi3": folded,
                     "phi3-jul2024": ["system", "user", "assistant", "user", "assistant"]}.get(
        family, ["system", "user", "assistant", "tool", "assistant"])


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_a_critic_example_s_ids_are_the_template_s_rendering(family):
    """A judgment trained on (critic.layout.example_messages) in the assistant's role: the
    family's rendering of the whole judgment, the loss on the critic's checks and verdict."""
    from critic.layout import CRITIC, example_messages
    from critic.rubrics import Rubric
    from k2rl.lm.chat import turn_end_id
    from k2rl.step.critic_ids import example_ids, critic_role, verdict_ids

    tok = _families()[family]
    assert critic_role(tok) == "assistant"
    msgs = example_messages("What is 12*13?", [Rubric("r", "core", "Correct.")], "calc(12*13)",
                            "156", "156 vs 156: yes", "146", "146 vs 156: no", "A")
    ids, mask = example_ids(tok, msgs)
    as_policy = [{**m, "role": "assistant"} if m["role"] == CRITIC else m for m in msgs]
    assert ids == _rendered_ids(tok, as_policy)
    end = tok.convert_ids_to_tokens(turn_end_id(tok))
    assert _trained_turns(tok, ids, mask) == [f"156 vs 156: yes{end}", f"146 vs 156: no{end}",
                                              f"A{end}"]
    assert ids[-2] == verdict_ids(tok)[0]  # the verdict read is the one trained, in context


def test_a_template_that_cannot_lay_out_a_reply_is_one_sentence():
    from k2rl.lm.chat import TemplateError, layout_of
    from tests.k2rl.fixtures import chatml_tokenizer

    tok = copy.deepcopy(chatml_tokenizer())
    tok.chat_template = "{% for m in messages %}{% if m['role'] == 'user' %}{{ m['content'] }}{% endif %}{% endfor %}"
    tok.name_or_path = "odd-model"
    with pytest.raises(TemplateError, match="chat template of odd-model cannot lay out a user "
                                            "turn and an assistant reply"):
        layout_of(tok)


@pytest.mark.parametrize("family, marker", [("qwen2.5", "<tool_response>"),
                                            ("mistral-v0.3", "[TOOL_RESULTS]")])
def test_each_of_two_calls_in_a_turn_gets_its_own_result_turn(family, marker):
    """A turn of two calls is answered by two tool messages (k2rl.rollout, one a call): each
    is laid out as the template lays out the result of its call (Mistral's with that call's
    id), and the delta after the reply is exactly the template's."""
    from envs.calculator import CalculatorEnv
    from k2rl.lm.chat import adapt

    tok, tools = _families()[family], CalculatorEnv.tools
    two = {"qwen2.5": CALLS["qwen2.5"] + "\n" + CALLS["qwen2.5"].replace("12*13", "2*3"),
           "mistral-v0.3": '[TOOL_CALLS] [{"name": "calc", "arguments": {"expression": "12*13"}},'
                           ' {"name": "calc", "arguments": {"expression": "2*3"}}]'}[family]
    convo = EPISODE[1:2] + [{"role": "assistant", "content": two}, {"role": "tool", "content": "156"},
                            {"role": "tool", "content": "6"}, {"role": "assistant", "content": "156"}]
    adapted = adapt(tok, convo, tools)
    ids = [c["id"] for c in adapted[1]["tool_calls"]]
    assert len(set(ids)) == 2 and [m["tool_call_id"] for m in adapted[2:4]] == ids
    text = render(tok, convo, False, tools)
    assert text.count(marker) == 2 and text.index("156", text.index(marker)) < text.rindex("6")
    assert conversation_ids(tok, convo, tools)[0] == _rendered_ids(tok, convo, tools)
    delta = observation_ids(tok, convo[:2], ["156", "6"], None, tools)
    prompt = prompt_ids(tok, convo[:3] + convo[3:4], tools)
    assert tok.decode(delta).count(marker) == 2 and tok.decode(prompt).endswith(tok.decode(delta))


def test_the_mistral_layout_is_token_for_token_mistral_common_s_own_encoding():
    """Mistral's reference encoder (mistral_common, a vLLM dependency) and k2rl's rendering of
    a tool episode through the published v0.3 template agree on every id: the call with its
    9-character id, the result answering it, the tools listed before the last user turn."""
    import json

    from mistral_common.protocol.instruct.messages import AssistantMessage, ToolMessage, UserMessage
    from mistral_common.protocol.instruct.request import ChatCompletionRequest
    from mistral_common.protocol.instruct.tool_calls import Function, FunctionCall, Tool, ToolCall
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    from envs.calculator import CalculatorEnv
    from k2rl.lm.chat import call_id

    cid = call_id(1, 0)
    reference = MistralTokenizer.v3().encode_chat_completion(ChatCompletionRequest(
        messages=[UserMessage(content="What is 12*13?"),
                  AssistantMessage(content=None, tool_calls=[ToolCall(id=cid, function=FunctionCall(
                      name="calc", arguments=json.dumps({"expression": "12*13"})))]),
                  ToolMessage(tool_call_id=cid, name="calc", content="156"),
                  AssistantMessage(content="The answer is 156."),
                  UserMessage(content="And 2*3?")],
        tools=[Tool(function=Function(**t["function"])) for t in CalculatorEnv.tools]))
    tok = _families()["mistral-v0.3"]
    convo = [EPISODE[1], {"role": "assistant", "content": CALLS["mistral-v0.3"].replace(
        ', "id": "k2Tq9ZmX1"', "")}, EPISODE[3], EPISODE[4], {"role": "user", "content": "And 2*3?"}]
    ours = text_ids(tok, render(tok, convo, True, CalculatorEnv.tools))
    assert tok.convert_ids_to_tokens(ours) == tok.convert_ids_to_tokens(reference.tokens)
