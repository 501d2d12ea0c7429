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

from pathlib import Path

Messages = list[dict]


def text_ids(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False)


def render(tokenizer, messages: Messages, generation_prompt: bool, tools=None) -> str:
    """The template's text of `messages`; `tools` (JSON schemas) for templates that list them."""
    return tokenizer.apply_chat_template(messages, tools=list(tools) if tools else None,
                                         tokenize=False, add_generation_prompt=generation_prompt)


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
    """The ids that end a reply: the tokenizer's EOS and the model's `eos_token_id` (one id or
    a list, from generation_config.json or config.json)."""
    ids = {tokenizer.eos_token_id} - {None}
    eos = getattr(generation_config, "eos_token_id", None)
    ids |= set(eos) if isinstance(eos, (list, tuple)) else {eos} - {None}
    return ids


def observation_ids(tokenizer, messages: Messages, observation: str, end: int | None,
                    tools=None) -> list[int]:
    """Ids that follow the model's last reply: a tool message and the next reply's opening.

    `messages` is the conversation up to and including that reply; `end` is the stop token
    that closed it, or None if it was cut at the token budget (then the tokenizer's EOS is
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
    closing = tokenizer.convert_ids_to_tokens(end if end is not None else tokenizer.eos_token_id)
    cut = before.rfind(closing)
    tail = before[cut + len(closing):] if cut >= 0 else ""  # template text after the stop token
    head = [] if end is not None else [tokenizer.eos_token_id]
    return head + text_ids(tokenizer, tail + after[len(before):])


def conversation_ids(tokenizer, messages: Messages) -> tuple[list[int], list[int]]:
    """(ids, mask) of a conversation laid out as a rollout lays it out; mask is 1 on the
    assistant's tokens (its text and the EOS that ends each of its turns)."""
    first = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    ids = prompt_ids(tokenizer, messages[:first])
    mask = [0] * len(ids)
    i = first
    while i < len(messages):
        if messages[i]["role"] == "assistant":
            part = text_ids(tokenizer, messages[i]["content"]) + [tokenizer.eos_token_id]
            ids, mask, i = ids + part, mask + [1] * len(part), i + 1
            continue
        j = next((n for n in range(i, len(messages)) if messages[n]["role"] == "assistant"),
                 len(messages))
        part = delta_ids(tokenizer, messages[:i], messages[i:j], tokenizer.eos_token_id)
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
