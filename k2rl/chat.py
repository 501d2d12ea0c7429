"""Chat layout as token ids, from the model's own chat template.

Every model lays out a conversation with its tokenizer's chat template (`apply_chat_template`);
k2rl assumes no special tokens of its own. A prompt is the template's rendering of the
conversation with the generation prompt. Multi-turn rollouts stay token-in / token-out: after a
tool result, the ids appended to the exact ids the engine sampled are the template's rendering
of the conversation with the tool message minus its rendering without it (the "delta"), counted
from the end of the model's own turn, so nothing the model produced is re-tokenised. The ids
of a whole conversation built this way equal the tokenised full rendering (tested with a
ChatML and a Llama-3 layout). A turn ends with a stop token: the tokenizer's EOS or any of
`generation_config.eos_token_id` (`stop_ids`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

Messages = list[dict]


def text_ids(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False)


def _template(tokenizer, messages: Messages, generation_prompt: bool, tools=None) -> str:
    return tokenizer.apply_chat_template(messages, tools=list(tools) if tools else None,
                                         tokenize=False, add_generation_prompt=generation_prompt)


def render(tokenizer, messages: Messages, generation_prompt: bool, tools=None) -> str:
    """The template's text of `messages` as its layout can take them (`adapt`); `tools` (JSON
    schemas) for templates that list them."""
    return _template(tokenizer, adapt(tokenizer, messages), generation_prompt, tools)


# ---------------------------------------------------------------- what a template can lay out

MARK = "k2rl-probe-7f3a"  # text no template writes by itself


class TemplateError(ValueError):
    """A chat template that cannot lay out what k2rl sends it; one sentence naming the model."""


@dataclass(frozen=True)
class Layout:
    """What a model's chat template does with k2rl's conversations (`layout_of`).

    system: it renders a system message (else the system prompt is folded into the first user
    turn, as Mistral's and Llama-2's own templates do); tool_role: the role a tool result is
    sent as, "tool" where the template renders one, else "user" (Gemma's layout); turn_end: the
    id the template writes right after an assistant turn's text, which the model must learn to
    write (`<end_of_turn>` for Gemma, `<|end|>` for Phi-3, not the tokenizer's EOS)."""

    system: bool
    tool_role: str
    turn_end: int

    def notes(self, name: str) -> list[str]:
        """One line per way k2rl lays out this model's conversations differently."""
        out = []
        if not self.system:
            out.append(f"{name}: its chat template has no system role; a system prompt is "
                       "folded into the first user turn")
        if self.tool_role != "tool":
            out.append(f"{name}: its chat template has no tool role; tool results are sent as "
                       f"{self.tool_role} turns")
        return out


def _shows(tokenizer, messages: Messages, generation_prompt: bool = False) -> str | None:
    """The template's text of `messages` as they are, or None where it raises."""
    try:
        return _template(tokenizer, messages, generation_prompt)
    except Exception:  # noqa: BLE001  (jinja's TemplateError, or a template's raise_exception)
        return None


def layout_of(tokenizer) -> Layout:
    """Probe the template once per tokenizer: a system message, a tool result, the end of an
    assistant turn; a template that cannot render a user turn and an assistant reply is a
    TemplateError naming the model."""
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
    shown = _shows(tokenizer, [{"role": "system", "content": MARK}, user])
    system = shown is not None and MARK in shown
    tool_role = "tool"
    for role in ("tool", "user"):
        shown = _shows(tokenizer, [user, {"role": "assistant", "content": "call"},
                                   {"role": role, "content": MARK}], True)
        if shown is not None and MARK in shown:
            tool_role = role
            break
    else:
        raise TemplateError(f"the chat template of {name} cannot lay out a tool result after an "
                            "assistant turn, as a tool turn or as a user turn")
    tail = text_ids(tokenizer, plain[plain.rindex(MARK) + len(MARK):])
    special = (set(getattr(tokenizer, "all_special_ids", ()))
               | set(getattr(tokenizer, "added_tokens_decoder", {})))
    turn_end = tail[0] if tail and tail[0] in special else tokenizer.eos_token_id
    layout = Layout(system, tool_role, turn_end)
    tokenizer._k2rl_layout = (template, layout)  # probed once per tokenizer and template
    return layout


def adapt(tokenizer, messages: Messages) -> Messages:
    """`messages` as the template can take them (`Layout`): the system prompt folded into the
    first user turn where it has no system role, tool results in the role it has for them."""
    layout = layout_of(tokenizer)
    if layout.system and layout.tool_role == "tool":
        return messages
    out: Messages = []
    system = None
    for m in messages:
        if m["role"] == "system" and not layout.system:
            system = m["content"]
            continue
        if m["role"] == "tool" and layout.tool_role != "tool":
            m = {"role": layout.tool_role, "content": m["content"]}
        if system is not None and m["role"] == "user":
            m, system = {**m, "content": f"{system}\n\n{m['content']}"}, None
        out.append(m)
    return out


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


def observation_ids(tokenizer, messages: Messages, observation: str, end: int | None,
                    tools=None) -> list[int]:
    """Ids that follow the model's last reply: a tool message and the next reply's opening.

    `messages` is the conversation up to and including that reply; `end` is the stop token
    that closed it, or None if it was cut at the token budget (then the template's turn end is
    added, so the layout stays well-formed).
    """
    return delta_ids(tokenizer, messages, [{"role": "tool", "content": observation}], end, tools)


def delta_ids(tokenizer, messages: Messages, new: Messages, end: int | None,
              tools=None) -> list[int]:
    """The template's rendering of `messages + new` with the generation prompt, minus its
    rendering of `messages`, counted from the stop token `end` that closed the last reply."""
    before = render(tokenizer, messages, False, tools)
    after = render(tokenizer, messages + new, True, tools)
    if not after.startswith(before):
        raise ValueError(f"the chat template of {tokenizer.name_or_path or 'this model'} does not "
                         "render a conversation as a prefix of its continuation, so multi-turn "
                         "ids cannot grow by deltas")
    closing = tokenizer.convert_ids_to_tokens(end if end is not None else turn_end_id(tokenizer))
    cut = before.rfind(closing)
    tail = before[cut + len(closing):] if cut >= 0 else ""  # template text after the stop token
    head = [] if end is not None else [turn_end_id(tokenizer)]
    return head + text_ids(tokenizer, tail + after[len(before):])


def conversation_ids(tokenizer, messages: Messages) -> tuple[list[int], list[int]]:
    """(ids, mask) of a conversation laid out as a rollout lays it out; mask is 1 on the
    assistant's tokens (its text and the id the template ends each of its turns with)."""
    first = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    ids = prompt_ids(tokenizer, messages[:first])
    mask = [0] * len(ids)
    i = first
    while i < len(messages):
        if messages[i]["role"] == "assistant":
            part = text_ids(tokenizer, messages[i]["content"]) + [turn_end_id(tokenizer)]
            ids, mask, i = ids + part, mask + [1] * len(part), i + 1
            continue
        j = next((n for n in range(i, len(messages)) if messages[n]["role"] == "assistant"),
                 len(messages))
        part = delta_ids(tokenizer, messages[:i], messages[i:j], turn_end_id(tokenizer))
        ids, mask, i = ids + part, mask + [0] * len(part), j
    return ids, mask


def pad_id(tokenizer) -> int:
    """The id that right-pads a batch: the tokenizer's pad token, or its EOS if it has none
    (Llama 3 has none); padded positions are masked out of every loss anyway."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id


def reply_text(tokenizer, ids: list[int]) -> str:
    return tokenizer.decode(ids, skip_special_tokens=True)


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
