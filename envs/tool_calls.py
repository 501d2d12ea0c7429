"""Tool calls in the forms model families write them, brought to one.

The tool environments read a call in their plain form, ``calc(12*13)`` or ``get(Avon,pop)``.
Chat models trained on tool use emit the form their chat templates teach; `parse_calls` reads
each of them, as vLLM's tool parsers of the same names do:

- Hermes / Qwen2.5: ``<tool_call>{"name": "calc", "arguments": {...}}</tool_call>``, text
  before the first call allowed, several calls in one turn;
- Mistral (v0.3): ``[TOOL_CALLS] [{"name": "calc", "arguments": {...}}, ...]``;
- Llama-3.1 (JSON, "custom tool calling"): ``{"name": "calc", "parameters": {...}}``, after an
  optional ``<|python_tag|>``.

`plain_calls` turns the calls into plain forms (the argument values in order, joined by
commas), so every form reaches the same tool. An action that is none of these is not a call
(a final answer). One that opens a call but cannot be read (bad JSON, no name, an unclosed
``<tool_call>``) raises `MalformedCall`: the environments answer it with an error observation
the model sees, and count it (`info["malformed_call"]`), rather than score it as a wrong
final answer.
"""
from __future__ import annotations

import json
import re

HERMES_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
HERMES_OPEN = "<tool_call>"
MISTRAL_OPEN = "[TOOL_CALLS]"
LLAMA_TAG = "<|python_tag|>"
MALFORMED = "error: malformed tool call"  # the observation a malformed call gets


class MalformedCall(ValueError):
    """An action that opens a tool call in a known form but cannot be read as one."""


def _call(obj, form: str) -> tuple[str, dict]:
    """(name, arguments) of one decoded call object; arguments may be a JSON string."""
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        raise MalformedCall(f"a {form} tool call needs a JSON object with a string \"name\"")
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):  # some templates send the arguments as a JSON string
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            raise MalformedCall(f"a {form} tool call's arguments are not JSON") from None
    if not isinstance(args, dict):
        raise MalformedCall(f"a {form} tool call's arguments are not an object")
    return obj["name"], args


def _json(text: str, form: str):
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise MalformedCall(f"a {form} tool call is not valid JSON") from None


def parse_calls(action: str) -> list[tuple[str, dict]] | None:
    """The (name, arguments) of every call in `action`, or None if it is not a call.

    >>> parse_calls('Let me compute. <tool_call>{"name": "calc", "arguments": {"e": "2*3"}}</tool_call>')
    [('calc', {'e': '2*3'})]
    >>> parse_calls('[TOOL_CALLS] [{"name": "calc", "arguments": {"e": "2*3"}}]')
    [('calc', {'e': '2*3'})]
    >>> parse_calls('<|python_tag|>{"name": "calc", "parameters": {"e": "2*3"}}')
    [('calc', {'e': '2*3'})]
    >>> parse_calls("156"), parse_calls('{"answer": 3}')
    (None, None)
    """
    text = action.strip()
    if HERMES_OPEN in text:
        blocks = HERMES_BLOCK.findall(text)
        if not blocks or text.count(HERMES_OPEN) != len(blocks):
            raise MalformedCall("a <tool_call> is not closed by </tool_call>")
        if HERMES_BLOCK.sub("", text[text.index(HERMES_OPEN):]).strip():
            raise MalformedCall("text after a <tool_call> block")
        return [_call(_json(b, "Hermes"), "Hermes") for b in blocks]
    if text.startswith(MISTRAL_OPEN):
        calls = _json(text[len(MISTRAL_OPEN):].strip(), "Mistral")
        calls = calls if isinstance(calls, list) else [calls]
        if not calls:
            raise MalformedCall("[TOOL_CALLS] with no call")
        return [_call(c, "Mistral") for c in calls]
    tagged = text.startswith(LLAMA_TAG)
    body = text.removeprefix(LLAMA_TAG).strip()
    if body.startswith("{") and body.endswith("}"):
        try:
            obj = json.loads(body)
        except (json.JSONDecodeError, RecursionError):
            if tagged:
                raise MalformedCall("a Llama tool call is not valid JSON") from None
            return None  # braces in a final answer
        if isinstance(obj, dict) and "name" in obj and ({"parameters", "arguments"} & set(obj)):
            return [_call(obj, "Llama")]
        if tagged:
            raise MalformedCall("a Llama tool call needs \"name\" and \"parameters\"")
    elif tagged:
        raise MalformedCall("<|python_tag|> without a JSON call")
    return None


PLAIN_CALL = re.compile(r"^\s*(\w+)\((.*)\)\s*$", re.DOTALL)


def _plain_call(action: str, tools) -> dict | None:
    """A plain-form call ``name(a,b)`` of one of `tools` (JSON schemas) as a call object, its
    values given to the schema's parameters in order; None if it is no such call."""
    match = PLAIN_CALL.match(action)
    spec = next((t["function"] for t in tools if match and t["function"]["name"] == match[1]),
                None)
    if spec is None:
        return None
    params = list(spec.get("parameters", {}).get("properties", {}))
    values = [match[2]] if len(params) == 1 else match[2].split(",")
    if len(values) != len(params):
        return None
    return {"name": match[1], "arguments": dict(zip(params, (v.strip() for v in values)))}


def read_calls(action: str, tools=()) -> tuple[str, list[dict]] | None:
    """(the text before the calls, the calls as {"name", "arguments"[, "id"]}) of an action
    that is a readable call in a family's form (`parse_calls`) or, given the env's `tools`, in
    plain form; None for anything else (a final answer, a malformed call).

    Chat templates lay a call out from this structure (an assistant message's ``tool_calls``),
    so it keeps what the model wrote: the text before a Hermes call and a Mistral call's id.

    >>> read_calls('Let me see. <tool_call>{"name": "calc", "arguments": {"e": "2*3"}}</tool_call>')
    ('Let me see.', [{'name': 'calc', 'arguments': {'e': '2*3'}}])
    >>> read_calls('[TOOL_CALLS] [{"name": "calc", "arguments": {"e": "1"}, "id": "a1b2c3d4e"}]')
    ('', [{'name': 'calc', 'arguments': {'e': '1'}, 'id': 'a1b2c3d4e'}])
    >>> read_calls("get(Avon,pop)", [schema("get", "a fact", city="c", field="f")])
    ('', [{'name': 'get', 'arguments': {'city': 'Avon', 'field': 'pop'}}])
    >>> read_calls("156"), read_calls("<tool_call>oops</tool_call>")
    (None, None)
    """
    try:
        calls = parse_calls(action)
    except MalformedCall:
        return None
    if calls is None:
        plain = _plain_call(action, tools)
        return None if plain is None else ("", [plain])
    text = action.strip()
    before = text[:text.index(HERMES_OPEN)].strip() if HERMES_OPEN in text else ""
    ids = _mistral_ids(text) if text.startswith(MISTRAL_OPEN) else [None] * len(calls)
    return before, [{"name": n, "arguments": a} | ({"id": i} if isinstance(i, str) else {})
                    for (n, a), i in zip(calls, ids)]


def _mistral_ids(text: str) -> list:
    """The "id" of each call of a readable Mistral ``[TOOL_CALLS]`` action (None where none)."""
    calls = json.loads(text[len(MISTRAL_OPEN):].strip())
    return [c.get("id") for c in (calls if isinstance(calls, list) else [calls])]


def plain_calls(action: str) -> list[str] | None:
    """The plain forms of the calls in `action` (`parse_calls`), or None for a final answer
    or an action already in plain form; raises MalformedCall.

    >>> plain_calls('<tool_call>{"name": "get", "arguments": {"city": "Avon", "field": "pop"}}</tool_call>')
    ['get(Avon,pop)']
    >>> plain_calls('<tool_call>{"name": "calc", "arguments": {"e": "1+1"}}</tool_call>\\n'
    ...             '<tool_call>{"name": "calc", "arguments": "{\\\\"e\\\\": \\\\"2+2\\\\"}"}</tool_call>')
    ['calc(1+1)', 'calc(2+2)']
    """
    calls = parse_calls(action)
    if calls is None:
        return None
    return [f"{name}({','.join(str(v) for v in args.values())})" for name, args in calls]


def plain_call(action: str) -> str:
    """The plain form of a one-call action; any other action unchanged (a final answer, a
    plain call, several calls, or a malformed one).

    >>> plain_call('<tool_call>{"name": "calc", "arguments": {"expression": "12*13"}}</tool_call>')
    'calc(12*13)'
    >>> plain_call("156"), plain_call("<tool_call>not json</tool_call>")
    ('156', '<tool_call>not json</tool_call>')
    """
    try:
        calls = plain_calls(action)
    except MalformedCall:
        return action
    return calls[0] if calls and len(calls) == 1 else action


def schema(name: str, description: str, **params: str) -> dict:
    """An OpenAI-style function schema (what `apply_chat_template(tools=...)` takes), with
    string parameters, all required."""
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "required": list(params),
                       "properties": {p: {"type": "string", "description": d}
                                      for p, d in params.items()}}}}
