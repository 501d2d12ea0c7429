"""Tool calls in the two forms a model may write them, brought to one.

The tool environments read a call in their plain form, ``calc(12*13)`` or ``get(Avon,pop)``.
Chat models trained on tool use emit the JSON form their chat templates teach (Hermes / Qwen
style), ``<tool_call>{"name": "calc", "arguments": {"expression": "12*13"}}</tool_call>``;
`plain_call` turns that into the plain form (the argument values in order, joined by commas),
so both forms reach the same tool. Anything else comes back unchanged: a final answer, or a
malformed call the environment then treats as it treats any other malformed call.
"""
from __future__ import annotations

import json
import re

JSON_CALL = re.compile(r"^\s*<tool_call>\s*(\{.*\})\s*</tool_call>\s*$", re.DOTALL)


def plain_call(action: str) -> str:
    """The plain form of a JSON tool call; any other action unchanged.

    >>> plain_call('<tool_call>{"name": "calc", "arguments": {"expression": "12*13"}}</tool_call>')
    'calc(12*13)'
    >>> plain_call('<tool_call>{"name": "get", "arguments": {"city": "Avon", "field": "pop"}}</tool_call>')
    'get(Avon,pop)'
    >>> plain_call('<tool_call>{"name": "calc", "arguments": "{\\\\"x\\\\": \\\\"2+2\\\\"}"}</tool_call>')
    'calc(2+2)'
    >>> plain_call("156"), plain_call("<tool_call>not json</tool_call>")
    ('156', '<tool_call>not json</tool_call>')
    """
    match = JSON_CALL.match(action)
    if match is None:
        return action
    try:
        call = json.loads(match.group(1))
        args = call.get("arguments", {})
        if isinstance(args, str):  # some templates send the arguments as a JSON string
            args = json.loads(args)
        name = call["name"]
    except (json.JSONDecodeError, KeyError, AttributeError, TypeError):
        return action
    if not isinstance(name, str) or not isinstance(args, dict):
        return action
    return f"{name}({','.join(str(v) for v in args.values())})"


def schema(name: str, description: str, **params: str) -> dict:
    """An OpenAI-style function schema (what `apply_chat_template(tools=...)` takes), with
    string parameters, all required."""
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "required": list(params),
                       "properties": {p: {"type": "string", "description": d}
                                      for p, d in params.items()}}}}
