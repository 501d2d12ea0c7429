"""The critic's conversation (critic.layout) as the model reads it: a response as the critic is
shown it, the critic's turns in their own role, the conversation as token ids and the ids of the
verdicts, and the length caps that cut a question and its answers to fit the engine.

The critic sees the question, the two transcripts and the rubrics, nothing else: no answer key,
no verifier label, nothing computed from them. A multi-turn response is shown as its turns
joined by " | " (tool calls and observations included), so the critic can see how an answer was
reached (`response_text`).

The critic's own turns are in the `<|critic|>` role (the assistant's for a model without one).
"""
from __future__ import annotations

from typing import Callable

from critic.layout import (ASK, CRITIC, VERDICT_HEAD, VERDICTS, chat_messages, solve_messages,
                           verdict_messages)
from k2rl.lm.chat import conversation_ids, prompt_ids, text_ids, turn_end_id, turn_ids
from k2rl.step.group import Trajectory

# Most tokens the critic writes for its own answer and for one check line: the default
# families' expert answers (a column working of 27 characters the longest) and the longest
# scripted check (a chat fact compared a character at a time, or eight listed words and four
# constraints: tests/envs/test_contract.py) fit.
SOLVE_TOKENS = 48
CHECK_TOKENS = 128
# A model built with model.default.instr_compare compares the quoted word letter by letter in
# its instruction checks: up to 160 characters over 3,000 prompts (tests/envs/test_instructions.py).
LONG_CHECK_TOKENS = 176
CUT = "..."  # marks an answer shortened to fit the engine


def response_text(traj: Trajectory) -> str:
    return " | ".join(m["content"] for m in traj.after_prompt)


def critic_role(tokenizer) -> str:
    """The role of the critic's turns: critic, or assistant for a model whose tokenizer has no
    critic role (an outside model evaluated with `k2rl critic eval`).

    The critic gets turns of its own because its verdict, read as the assistant's first reply
    token, leaked into the policy when trained: after 20 updates at critic.lr 1e-3 the policy
    opened 93% of its arithmetic replies with "A" or "B" (12% of instruction replies at 2e-4).
    """
    critic = tokenizer.convert_tokens_to_ids("<|critic|>")
    return "critic" if critic is not None and critic != tokenizer.unk_token_id else "assistant"


def _in_role(tokenizer, messages: list[dict]) -> list[dict]:
    role = critic_role(tokenizer)
    return [{**m, "role": role} if m["role"] == CRITIC else m for m in messages]


def open_ids(tokenizer, messages: list[dict]) -> list[int]:
    """Token ids of a critic conversation up to where the critic's next turn begins."""
    if critic_role(tokenizer) == "critic":
        return (turn_ids(tokenizer, _in_role(tokenizer, messages))
                + [tokenizer.convert_tokens_to_ids("<|critic|>")])
    return prompt_ids(tokenizer, _in_role(tokenizer, messages))


def answer_ids(tokenizer, prompt: str) -> list[int]:
    """Token ids up to the critic's own answer: the policy's prompt, in the policy's layout."""
    return prompt_ids(tokenizer, solve_messages(prompt))


def example_ids(tokenizer, messages: list[dict], trained: Callable[[int], bool] = lambda i: True
                ) -> tuple[list[int], list[int]]:
    """(ids, mask) of a whole judgment (critic.layout.example_messages): the loss falls on the
    critic's turns (their text and the end of turn) for which `trained(index)` holds. In the
    assistant's role that is the template's rendering of the whole judgment
    (k2rl.lm.chat.conversation_ids); in k2rl's own critic role, each turn after its opening."""
    if critic_role(tokenizer) == "assistant":
        return conversation_ids(tokenizer, _in_role(tokenizer, messages),
                                trained=lambda i: messages[i]["role"] == CRITIC and trained(i))
    ids: list[int] = []
    mask: list[int] = []
    for i, m in enumerate(messages):
        if m["role"] != CRITIC:
            continue
        head = open_ids(tokenizer, messages[:i])
        if head[:len(ids)] != ids:
            raise ValueError(f"the chat template of {tokenizer.name_or_path or 'this model'} does "
                             "not render the critic's conversation as a prefix of its continuation")
        reply = text_ids(tokenizer, m["content"]) + [turn_end_id(tokenizer)]
        mask += [0] * (len(head) - len(ids)) + [int(trained(i))] * len(reply)
        ids = head + reply
    return ids, mask


def shorten(tokenizer, text: str, cap: int) -> str:
    ids = text_ids(tokenizer, text)
    return text if len(ids) <= cap else tokenizer.decode(ids[:max(cap, 0)]) + CUT


def answer_cap(tokenizer, max_len: int, prompt: str, rubrics, working: str,
               most_check: int = CHECK_TOKENS) -> int:
    """The most tokens an answer may keep so that a verdict prompt, its two checks and the
    verdict fit `max_len`; a question and rubrics that leave no room are a ValueError."""
    bare = len(open_ids(tokenizer, verdict_messages(prompt, rubrics, working, "", "", "", "")))
    cap = (max_len - 2 - bare - 2 * check_cap(tokenizer, max_len, rubrics, most_check)) // 2
    if cap < 4:
        raise ValueError(f"the critic's rubrics and question ({bare} tokens) leave no room for "
                         f"the answers in engine.max_model_len {max_len}; raise it or use "
                         "shorter rubrics")
    return cap


MIN_ANSWER = 32  # tokens each answer keeps at least when a long question must be cut
MIN_CHECK = 24  # tokens a check line keeps at least in an engine too short for CHECK_TOKENS


def check_tokens(built: dict | None, default=None) -> int:
    """The most tokens a check line of this model may take: LONG_CHECK_TOKENS where it judges
    with the quoted-word comparison, CHECK_TOKENS otherwise. That is where k2rl built it with
    model.default.instr_compare (`built`: its recipe, k2rl.lm.hf.built_recipe), or, for a
    model k2rl did not build (`built` None), where `default` (a run's model.default, whose
    instruction scripts its PTX judgments follow: k2rl.bootstrap.model.critic_scripts) has it."""
    compare = built.get("instr_compare") if built is not None else getattr(
        default, "instr_compare", False)
    return LONG_CHECK_TOKENS if compare else CHECK_TOKENS


def check_cap(tokenizer, max_len: int, rubrics, most: int = CHECK_TOKENS) -> int:
    """Tokens a check line may take: `most`, or fewer where the engine is too short for
    two of them beside the rubrics, the critic's own answer and two answers of MIN_ANSWER tokens
    (a model with 512 positions and a near-character vocabulary), but at least MIN_CHECK."""
    bare = len(open_ids(tokenizer, verdict_messages("", rubrics, "", "", "", "", "")))
    room = (max_len - 2 - bare - SOLVE_TOKENS - 2 * MIN_ANSWER - 8) // 2
    return max(MIN_CHECK, min(most, room))


def question_cap(tokenizer, max_len: int, rubrics, most_check: int = CHECK_TOKENS) -> int:
    """The most tokens a question may keep so that the working, two checks and two answers of
    MIN_ANSWER tokens still fit `max_len`; rubrics that leave no room are a ValueError."""
    bare = len(open_ids(tokenizer, verdict_messages("", rubrics, "", "", "", "", "")))
    cap = (max_len - 2 - bare - SOLVE_TOKENS - 2 * check_cap(tokenizer, max_len, rubrics, most_check)
           - 2 * MIN_ANSWER)
    if cap < 8:
        raise ValueError(f"the critic's rubrics ({bare} tokens with the layout) leave no room "
                         f"for a question and its answers in engine.max_model_len {max_len}; "
                         "raise it or use shorter rubrics")
    return cap


def _verdict_ids(tokenizer, verdict: str) -> list[int]:
    """The ids of a verdict as the critic's turn writes it: in the assistant's role, the ids
    the template's rendering gives it in context (a SentencePiece tokenizer writes "A" alone
    as "▁A", but not after Gemma's "model\n"), without the turn end."""
    if critic_role(tokenizer) != "assistant":
        return text_ids(tokenizer, verdict)
    ids, mask = conversation_ids(tokenizer, [{"role": "user", "content": ASK},
                                             {"role": "assistant", "content": verdict}])
    return [i for i, m in zip(ids, mask) if m][:-1]


def verdict_ids(tokenizer) -> list[int]:
    """The ids of the two verdicts, each of which must be one token of the vocabulary."""
    out = []
    for v in VERDICTS:
        ids = _verdict_ids(tokenizer, v)
        if len(ids) != 1:
            raise ValueError(f"the tokenizer of {tokenizer.name_or_path or 'this model'} writes "
                             f"the verdict {v!r} as {len(ids)} tokens; the critic reads one")
        out += ids
    return out


# --- the chat layout (critic.layout.chat_messages) ------------------------------------------

REASON_TOKENS = 160  # the most tokens the chat critic writes before its verdict
MIN_SHOWN = 16  # tokens each response keeps at least in the chat layout


def chat_verdict_ids(tokenizer) -> tuple[list[int], list[int]]:
    """(the ids of "Verdict:", the ids of " A" and " B" after it) as the tokenizer writes
    "Verdict: A" and "Verdict: B": the same head, then one token each (SmolLM2's BPE: "ĠA"; a
    SentencePiece tokenizer: "▁A"); a tokenizer that writes them otherwise is a ValueError."""
    a, b = (text_ids(tokenizer, f"{VERDICT_HEAD} {v}") for v in VERDICTS)
    if len(a) != len(b) or a[:-1] != b[:-1] or a[-1] == b[-1]:
        raise ValueError(f"the tokenizer of {tokenizer.name_or_path or 'this model'} writes "
                         f"'{VERDICT_HEAD} A' as {a} and '{VERDICT_HEAD} B' as {b}; the chat "
                         "critic reads the verdict as one token after the same head")
    return a[:-1], [a[-1], b[-1]]


def chat_prompt_ids(tokenizer, messages: list[dict]) -> list[int]:
    """Token ids up to the critic's reply, in the assistant's role of the model's template."""
    return prompt_ids(tokenizer, messages)


def chat_verdict_prompt(tokenizer, opened: list[int], reasoning: str) -> list[int]:
    """The critic's reply so far, its reasoning then "Verdict:", after `opened` (the verdict's
    token is read next)."""
    head, _ = chat_verdict_ids(tokenizer)
    said = text_ids(tokenizer, reasoning.rstrip() + "\n") if reasoning.strip() else []
    return opened + said + head


def chat_caps(tokenizer, max_len: int, rubrics, question: str) -> tuple[int, int]:
    """(question cap, response cap) in tokens so that the chat layout's prompt, the reasoning
    and the verdict fit `max_len`; rubrics that leave no room are a ValueError."""
    bare = len(chat_prompt_ids(tokenizer, chat_messages("", rubrics, "", "")))
    room = max_len - bare - REASON_TOKENS - 8
    if room < 3 * MIN_SHOWN:
        raise ValueError(f"the chat critic's instruction and rubrics ({bare} tokens) and its "
                         f"{REASON_TOKENS} tokens of reasoning leave no room for a question and "
                         f"two responses in engine.max_model_len {max_len}; raise it")
    q = min(len(text_ids(tokenizer, question)), room - 2 * MIN_SHOWN)
    return q, max(MIN_SHOWN, (room - q) // 2)
