"""Chat layout as token ids, from the model's own chat template.

Every model lays out a conversation with its tokenizer's chat template (`apply_chat_template`);
k2rl assumes no special tokens of its own. A prompt is the template's rendering of the
conversation with the generation prompt. Multi-turn rollouts stay token-in / token-out: after a
tool result, the ids appended to the exact ids the engine sampled are the template's rendering
of the conversation with the tool message minus its rendering without it (the "delta"), counted
from the end of the model's own turn, so nothing the model produced is re-tokenised. The ids
of a whole conversation built this way equal the tokenised full rendering (tested with the
ChatML/Qwen2.5, Llama-3.1, Mistral-v0.3, Gemma-2 and Phi-3 layouts). A turn ends with a stop
token: the tokenizer's EOS or any of `generation_config.eos_token_id` (`stop_ids`).

Tool calls reach the template in the structured form templates take (an assistant message's
`tool_calls`, a tool message's `tool_call_id` and `name`) wherever it lays them out (`adapt`),
so a model that writes a call in its family's own form sees it rendered exactly so. Text is
always tokenised in the context of the whole rendering, never a reply alone: SentencePiece-style
tokenizers give a word at the start of a text a leading "▁" it does not have after a marker.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from envs.tool_calls import HERMES_OPEN, LLAMA_TAG, MISTRAL_OPEN, read_calls, schema

Messages = list[dict]


def text_ids(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False)


def _template(tokenizer, messages: Messages, generation_prompt: bool, tools=None) -> str:
    return tokenizer.apply_chat_template(messages, tools=list(tools) if tools else None,
                                         tokenize=False, add_generation_prompt=generation_prompt)


def render(tokenizer, messages: Messages, generation_prompt: bool, tools=None) -> str:
    """The template's text of `messages` as its layout can take them (`adapt`); `tools` (JSON
    schemas) for templates that list them, and to read plain calls as structured ones."""
    return _template(tokenizer, adapt(tokenizer, messages, tools or ()), generation_prompt, tools)


# ---------------------------------------------------------------- what a template can lay out

MARK = "k2rl-probe-7f3a"  # text no template writes by itself


class TemplateError(ValueError):
    """A chat template that cannot lay out what k2rl sends it; one sentence naming the model."""


class NoContinuation(ValueError):
    """A conversation the template cannot continue: a tool result after a turn with no call in
    its form, where, with tools listed, it has no role for one (`Layout.listed`); the rollout
    ends the episode there, as a wrong answer."""


@dataclass(frozen=True)
class Layout:
    """What a model's chat template does with k2rl's conversations (`layout_of`).

    system: it renders a system message in every turn's rendering (else the system prompt is
    folded into the first user turn, as Mistral's and Llama-2's own templates do; Mistral-v0.3's
    shows it only while a user turn is last, which breaks the growth of a conversation);
    calls: it lays out an assistant's `tool_calls` and a tool message's `tool_call_id` and
    `name` (Qwen2.5's `<tool_call>`, Mistral's `[TOOL_CALLS]`, Llama-3.1's JSON); tool_role: the
    role a tool result is sent as after any other turn (a malformed call's error, a plain-text
    call's result): "tool" where the template renders one there, else "user" (Gemma's
    layout; Mistral's, whose tool messages must answer a call in its form); listed: that
    still holds with tools listed (Mistral-v0.3's moves `[AVAILABLE_TOOLS]` to the last user
    turn, rewriting the past, so there only a call in its form can be answered:
    `NoContinuation`); turn_end: the id the template writes right after an assistant turn's text,
    which the model must learn to write (`<end_of_turn>` for Gemma, `<|end|>` for Phi-3, not
    the tokenizer's EOS); several: it lays out several calls in one turn (Llama-3.1's takes
    one: a turn of several calls stays text there); closing: text the template writes after a
    finished conversation only (no generation prompt), which a continuation does not have
    (Phi-3's July 2024 template ends one with its EOS), so it is left off wherever a rendering
    must be a prefix of its continuation."""

    system: bool
    tool_role: str
    turn_end: int
    calls: bool = False
    several: bool = False
    closing: str = ""
    listed: bool = True

    def notes(self, name: str) -> list[str]:
        """One line per way k2rl lays out this model's conversations differently."""
        out = []
        if not self.system:
            out.append(f"{name}: its chat template has no system role; a system prompt is "
                       "folded into the first user turn")
        if self.tool_role != "tool" and not self.calls:
            out.append(f"{name}: its chat template has no tool role; tool results are sent as "
                       f"{self.tool_role} turns")
        elif self.tool_role != "tool":
            out.append(f"{name}: its chat template lays out a tool result only after a call in "
                       f"its own form; the results of other calls are sent as {self.tool_role} "
                       "turns")
        if not self.listed:
            out.append(f"{name}: with tools listed, its chat template continues a conversation "
                       "only after a call in its own form (a user turn moves its tool list, "
                       "rewriting the past), so a turn with a malformed call ends the episode as "
                       "a wrong answer, counted in malformed_calls")
        return out


def _shows(tokenizer, messages: Messages, generation_prompt: bool = False,
           tools=None) -> str | None:
    """The template's text of `messages` as they are, or None where it raises."""
    try:
        return _template(tokenizer, messages, generation_prompt, tools)
    except Exception:  # noqa: BLE001  (jinja's TemplateError, or a template's raise_exception)
        return None


def _lays_out(tokenizer, messages: Messages, marks: tuple[str, ...], tools=None,
              closing: str = "") -> bool:
    """Whether the template renders `messages` with every mark in it, each conversation so far
    (with the generation prompt before a reply; without its `closing`) a prefix of the next."""
    whole = _shows(tokenizer, messages, False, tools)
    if whole is None or not all(mark in whole for mark in marks):
        return False
    for k in range(1, len(messages)):
        prompt = messages[k]["role"] == "assistant"
        head = _shows(tokenizer, messages[:k], prompt, tools)
        grown = _shows(tokenizer, messages[:k + 1], False, tools)
        if head is None or grown is None or not grown.startswith(
                head if prompt else unclosed(head, closing)):
            return False
    return True


def unclosed(text: str, closing: str) -> str:
    """`text` without the `closing` a template writes after a finished conversation.

    >>> unclosed("<|user|>hi<|end|><|endoftext|>", "<|endoftext|>")
    '<|user|>hi<|end|>'
    """
    return text[:-len(closing)] if closing and text.endswith(closing) else text


def _closing(tokenizer, done: str, user: dict, reply: dict) -> str:
    """The text the template writes only after a finished conversation: its EOS where the
    rendering of [user, reply] ends with it and the rendering of one more user turn continues
    from just before it (Phi-3's July 2024 template); else ""."""
    more = _shows(tokenizer, [user, reply, {"role": "user", "content": MARK + "u"}])
    eos = getattr(tokenizer, "eos_token", None) or ""
    if more is None or more.startswith(done) or not eos or not done.endswith(eos):
        return ""
    return eos if more.startswith(done[:-len(eos)]) else ""


PROBE_TOOLS = [schema("probe", "A probe of the chat template.", text="any text")]


def _probe_calls(user: dict, n: int = 1) -> Messages:
    """`n` structured calls in a turn, in the form Hugging Face templates take, and one tool
    message with their results (an environment answers a turn's calls in one observation)."""
    calls = [{"id": call_id(1, k), "type": "function",
              "function": {"name": "probe", "arguments": {"text": f"{MARK}c{k}"}}}
             for k in range(n)]
    return [user, {"role": "assistant", "content": "", "tool_calls": calls},
            {"role": "tool", "tool_call_id": calls[0]["id"], "name": "probe", "content": MARK},
            {"role": "assistant", "content": "done"}]


def layout_of(tokenizer) -> Layout:
    """Probe the template once per tokenizer: a system message, a structured tool call and its
    result, a tool result after a plain turn, the end of an assistant turn; a template that
    cannot render a user turn and an assistant reply is a TemplateError naming the model."""
    template = getattr(tokenizer, "chat_template", None)
    known = getattr(tokenizer, "_k2rl_layout", None)
    if known is not None and known[0] == template:
        return known[1]
    name = getattr(tokenizer, "name_or_path", "") or "this model"
    user, reply = {"role": "user", "content": "hi"}, {"role": "assistant", "content": MARK}
    plain = _shows(tokenizer, [user, reply])
    if plain is None or MARK not in plain:
        raise TemplateError(f"the chat template of {name} cannot lay out a user turn and an "
                            "assistant reply")
    closing = _closing(tokenizer, plain, user, reply)
    system = _lays_out(tokenizer, [{"role": "system", "content": MARK}, user,
                                   {"role": "assistant", "content": "done"}], (MARK,),
                       closing=closing)
    calls = _lays_out(tokenizer, _probe_calls(user), (MARK, MARK + "c0"), PROBE_TOOLS, closing)
    several = calls and _lays_out(tokenizer, _probe_calls(user, 2), (MARK + "c1",), PROBE_TOOLS,
                                  closing)
    def result_after_plain(role: str, tools=None) -> bool:
        return _lays_out(tokenizer, [user, {"role": "assistant", "content": "call"},
                                     {"role": role, "content": MARK},
                                     {"role": "assistant", "content": "done"}],
                         (MARK,), tools, closing)

    tool_role = next((role for role in ("tool", "user") if result_after_plain(role)), None)
    listed = tool_role is not None and result_after_plain(tool_role, PROBE_TOOLS)
    if tool_role is None:
        raise TemplateError(f"the chat template of {name} cannot lay out a tool result after an "
                            "assistant turn, as a tool turn or as a user turn, with each "
                            "conversation rendered as a prefix of its continuation")
    tail = text_ids(tokenizer, plain[plain.rindex(MARK) + len(MARK):])
    special = (set(getattr(tokenizer, "all_special_ids", ()))
               | set(getattr(tokenizer, "added_tokens_decoder", {})))
    turn_end = tail[0] if tail and tail[0] in special else tokenizer.eos_token_id
    layout = Layout(system, tool_role, turn_end, calls, several, closing, listed)
    tokenizer._k2rl_layout = (template, layout)  # probed once per tokenizer and template
    return layout


def call_id(message: int, k: int) -> str:
    """The id of the k-th call in message `message` of a conversation where the model wrote
    none: 9 alphanumerics, the form Mistral's template requires and every other takes.

    >>> call_id(3, 0)
    'call00300'
    """
    return f"call{message:03d}{k:02d}"


def adapt(tokenizer, messages: Messages, tools=()) -> Messages:
    """`messages` as the template can take them (`Layout`): the system prompt folded into the
    first user turn where it has no system role; a call (in a family's form, or in plain form
    naming one of `tools`) as the assistant's `tool_calls` where it lays them out, its result
    as a tool message with `tool_call_id` and `name`; other tool results in the role it has
    for them."""
    layout = layout_of(tokenizer)
    out: Messages = []
    system = None
    for i, m in enumerate(messages):
        if m["role"] == "system" and not layout.system:
            system = m["content"]
            continue
        if m["role"] == "assistant":
            m = _assistant(layout, m, i, tools)
        elif m["role"] == "tool":
            m = _tool_result(layout, m, out, tools)
        if system is not None and m["role"] == "user":
            m, system = {**m, "content": f"{system}\n\n{m['content']}"}, None
        out.append(m)
    return out


def _assistant(layout: Layout, m: dict, i: int, tools) -> dict:
    """An assistant message as the layout takes it: its calls structured, with ids, where the
    template lays them out, else written into its text (as Hermes calls)."""
    calls = m.get("tool_calls")
    if not layout.calls or (calls and len(calls) > 1 and not layout.several):
        return m if not calls else {"role": "assistant", "content": _calls_as_text(m)}
    if calls:
        return {**m, "content": m.get("content") or "", "tool_calls": [
            {**c, "id": c.get("id") or call_id(i, k)} for k, c in enumerate(calls)]}
    read = read_calls(m.get("content") or "", tools)
    if read is None or (len(read[1]) > 1 and not layout.several):
        return m
    before, found = read
    return {"role": "assistant", "content": before, "tool_calls": [
        {"id": c.get("id") or call_id(i, k), "type": "function",
         "function": {"name": c["name"], "arguments": c["arguments"]}}
        for k, c in enumerate(found)]}


def _calls_as_text(m: dict) -> str:
    """The text of an assistant message with its `tool_calls` written as Hermes calls, for a
    template that lays out no structured call."""
    calls = [json.dumps({"name": c["function"]["name"], "arguments": c["function"]["arguments"]})
             for c in m["tool_calls"]]
    return "\n".join([m.get("content") or ""] * bool(m.get("content"))
                     + [f"<tool_call>{c}</tool_call>" for c in calls])


def _tool_result(layout: Layout, m: dict, out: Messages, tools=()) -> dict:
    """A tool message as the layout takes it: answering the structured call before it (the
    k-th tool message after a turn of several calls answers the k-th), else in the layout's
    tool role."""
    last = next((j for j in range(len(out) - 1, -1, -1) if out[j]["role"] != "tool"), None)
    calls = out[last].get("tool_calls") if last is not None else None
    if layout.calls and calls:
        call = calls[min(len(out) - 1 - last, len(calls) - 1)]
        return {"role": "tool", "content": m["content"], "tool_call_id": call["id"],
                "name": call["function"]["name"]}
    if tools and not layout.listed:
        raise NoContinuation("with tools listed, its chat template lays out a tool result "
                             "only after a call in its own form, and this one follows a turn "
                             "without one")
    if layout.tool_role == "tool":
        return m
    return {"role": layout.tool_role, "content": m["content"]}


def turn_end_id(tokenizer) -> int:
    """The id that ends an assistant turn in the model's own layout (`Layout.turn_end`)."""
    return layout_of(tokenizer).turn_end


def as_messages(conversation: str | Messages) -> Messages:
    """A user text is a conversation of one user message."""
    if isinstance(conversation, str):
        return [{"role": "user", "content": conversation}]
    return conversation


def prompt_ids(tokenizer, conversation: str | Messages, tools=None) -> list[int]:
    """Token ids of the conversation so far, ending where the assistant's reply begins."""
    return text_ids(tokenizer, render(tokenizer, as_messages(conversation), True, tools))


def turn_ids(tokenizer, conversation: str | Messages) -> list[int]:
    """Token ids of the conversation so far, without a generation prompt."""
    return text_ids(tokenizer, render(tokenizer, as_messages(conversation), False))


def stop_ids(tokenizer, generation_config=None) -> set[int]:
    """The ids that end a reply: the tokenizer's EOS, the model's `eos_token_id` (one id or
    a list, from generation_config.json or config.json) and the template's turn end."""
    ids = {tokenizer.eos_token_id} - {None}
    eos = getattr(generation_config, "eos_token_id", None)
    ids |= set(eos) if isinstance(eos, (list, tuple)) else {eos} - {None}
    if getattr(tokenizer, "chat_template", None):
        ids.add(turn_end_id(tokenizer))  # Gemma ends a turn with <end_of_turn>, not its EOS
    return ids


def observation_ids(tokenizer, messages: Messages, observation: str | list[str],
                    end: int | None, tools=None) -> list[int]:
    """Ids that follow the model's last reply: a tool message (one a result, where the reply
    made several calls) and the next reply's opening.

    `messages` is the conversation up to and including that reply; `end` is the stop token
    that closed it, or None if it was cut at the token budget (then the template's turn end is
    added, so the layout stays well-formed).
    """
    results = [observation] if isinstance(observation, str) else observation
    return delta_ids(tokenizer, messages, [{"role": "tool", "content": r} for r in results],
                     end, tools)


def delta_ids(tokenizer, messages: Messages, new: Messages, end: int | None,
              tools=None) -> list[int]:
    """The template's rendering of `messages + new` with the generation prompt, from where the
    last reply's rendering ends (its turn end, whichever stop token `end` closed it; None: cut at
    its budget, so the turn end is added), tokenised in the context of that whole rendering."""
    name = tokenizer.name_or_path or "this model"
    head = render(tokenizer, messages[:-1], True, tools)
    before = unclosed(render(tokenizer, messages, False, tools), layout_of(tokenizer).closing)
    after = render(tokenizer, messages + new, True, tools)
    if not (before.startswith(head) and after.startswith(before)):
        raise ValueError(f"the chat template of {name} does not render a conversation as a "
                         "prefix of its continuation, so multi-turn ids cannot grow by deltas")
    done = text_ids(tokenizer, before[:_turn_end_at(tokenizer, before, len(head))])
    ids = text_ids(tokenizer, after)
    if ids[:len(done)] != done:
        raise ValueError(f"the tokenizer of {name} does not tokenise a conversation's rendering "
                         "as a prefix of its continuation's, so multi-turn ids cannot grow by "
                         "deltas")
    return ([] if end is not None else [turn_end_id(tokenizer)]) + ids[len(done):]


def _turn_end_at(tokenizer, text: str, start: int) -> int:
    """Where the assistant turn whose text starts at `start` ends in `text`: right after the
    template's turn end (the end of `text` if it writes none)."""
    end = tokenizer.convert_ids_to_tokens(turn_end_id(tokenizer))
    at = text.find(end, start)
    return len(text) if at < 0 else at + len(end)


def reply_spans(tokenizer, messages: Messages, tools=None) -> tuple[str, list[tuple[int, int, int]]]:
    """The template's rendering of a conversation and, for each assistant turn, (start, end,
    message index): the characters of its text and its turn end in that rendering."""
    full = render(tokenizer, messages, False, tools)
    spans = []
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        head = render(tokenizer, messages[:i], True, tools)
        if not full.startswith(head):
            raise ValueError(f"the chat template of {tokenizer.name_or_path or 'this model'} "
                             "does not render a conversation as a prefix of its continuation")
        spans.append((len(head), _turn_end_at(tokenizer, full, len(head)), i))
    return full, spans


def conversation_ids(tokenizer, messages: Messages, tools=None,
                     trained=lambda i: True) -> tuple[list[int], list[int]]:
    """(ids, mask) of a conversation: the tokenised rendering of the whole of it through its
    last assistant turn's end, as a rollout lays it out; mask is 1 on the tokens of the
    assistant turns (their text and turn end) whose message index `trained` takes."""
    full, spans = reply_spans(tokenizer, messages, tools)
    if not spans:
        raise ValueError("a conversation to train on needs an assistant turn")
    enc = tokenizer(full[:spans[-1][1]], add_special_tokens=False, return_offsets_mapping=True)
    keep = [(a, b) for a, b, i in spans if trained(i)]
    mask = [int(any(s < b and e > a for a, b in keep)) for s, e in enc["offset_mapping"]]
    return list(enc["input_ids"]), mask


def pad_id(tokenizer) -> int:
    """The id that right-pads a batch: the tokenizer's pad token, or its EOS if it has none
    (Llama 3 has none); padded positions are masked out of every loss anyway."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id


CALL_MARKERS = (MISTRAL_OPEN, HERMES_OPEN, "</tool_call>", LLAMA_TAG)


def reply_text(tokenizer, ids: list[int]) -> str:
    """The text of a reply: its special tokens (a stop token, a stray BOS) dropped, but for
    those a family writes its tool calls with (`[TOOL_CALLS]`, `<tool_call>`, `<|python_tag|>`),
    which its parser reads and its template writes back."""
    special = set(tokenizer.all_special_ids) | {
        i for i, t in getattr(tokenizer, "added_tokens_decoder", {}).items() if t.special}
    keep = {tokenizer.convert_tokens_to_ids(m) for m in CALL_MARKERS} & special
    return tokenizer.decode([i for i in ids if i in keep or i not in special],
                            skip_special_tokens=False)


# Text a tokenizer must give back unchanged: words, spaces, a newline, digits, punctuation.
ROUND_TRIP_PROBE = "Tell me about the number 12.\n- a b: calc(3*4)"


def _round_trips(tokenizer, text: str = ROUND_TRIP_PROBE) -> bool:
    return tokenizer.decode(tokenizer.encode(text, add_special_tokens=False)) == text


def load_tokenizer(path: str | Path):
    """The tokenizer of a model folder: `AutoTokenizer`, unless that loses text the folder's own
    tokenizer.json keeps.

    A folder k2rl builds now (recipe 9 on) loads the same either way (`build_tokenizer`). Older
    ones had a literal " " in their character vocabulary, which transformers 5's
    `Qwen2Tokenizer` (what `AutoTokenizer` gives for any `qwen2` folder) silently drops
    ("12 is even." encodes as "12iseven."); their tokenizer.json, loaded as it is, is the
    tokenizer the model was trained with.
    """
    from transformers import AutoTokenizer, PreTrainedTokenizerFast  # heavy: deferred

    tokenizer = AutoTokenizer.from_pretrained(path)
    if _round_trips(tokenizer) or not (Path(path) / "tokenizer.json").exists():
        return tokenizer
    own = PreTrainedTokenizerFast.from_pretrained(path)
    return own if _round_trips(own) else tokenizer
