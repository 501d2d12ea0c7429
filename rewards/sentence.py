"""Whether a reply is a sentence on a topic (``is_sentence_about``): the gate k2rl puts before
IFEval's checks where a task asks for one sentence about something (k2rl/ShortWriting-v1).

IFEval's checks read the form of a reply, never what it says: "Thank you." follows "finish
with 'Thank you.'" and "fewer than 8 words" at once, and a policy paid by them alone learns to
write exactly that (SmolLM2 did, in twelve steps: README). So the gate asks, of the reply less
an asked-for closing phrase:

- at least ``min_words`` words (``min_words - 1`` of them distinct), at most one sentence
  (IFEval's own splitter), ending in ``.``, ``!`` or ``?``;
- a verb (``is_verb``): be, have, do or a modal, the -s form or the past of about 150
  common verbs, or a regular past; a noun phrase ("a lake with a small boat") is no
  sentence, and it is what a policy writes next once a period is asked for;
- one of the topic's forms (``about``) as a word;
- none of the request's own sentences, and none of the words that talk about the
  instructions rather than the topic (``META``: "a lake with fewer than 16 words").

A rule of thumb, not a grammar: it is there to make the cheap replies cost what a sentence
costs. A reply over ``MAX_CHARS`` is none.
"""

from __future__ import annotations

import re
from typing import Any, Callable

MAX_CHARS = 32_000
_WORD = re.compile(r"\w+")
_END = re.compile(r"[.!?][\"'”’)]*\s*$")

# Words that describe the request, not the topic.
META = frozenset({"word", "words", "sentence", "sentences", "lowercase", "uppercase", "letter",
                  "letters", "comma", "commas", "phrase", "phrases", "response", "instruction",
                  "instructions"})
_AUXILIARIES = ("is are was were be been being am m isn aren wasn weren has have had having "
                "hasn haven hadn do does did doesn don didn can could will would shall should "
                "may might must cannot won wouldn couldn shouldn ll ve re")
_REGULAR = ("add allow appear ask belong bloom blossom boil brighten brush call calm carry "
            "change chase climb close cook cover crawl cross cry dance dive dream drift drop "
            "enjoy fade fill float flow follow fold gather glow greet guard hang happen help "
            "hope hum hurry jump kiss laugh learn like listen live look love mark melt miss "
            "move need open paint pass pause play pour pull push rain reach remain remember "
            "rest return roar roll rush seem shine shout show sigh smell smile snow sound "
            "stay step stop stretch surround talk taste thank touch travel trust try turn "
            "wait walk wander want warm wash watch whisper wish work worry yawn")
_IRREGULAR = ("become became become; begin began begun; bite bit bitten; blow blew blown; "
              "break broke broken; bring brought brought; build built built; buy bought "
              "bought; catch caught caught; choose chose chosen; come came come; creep crept "
              "crept; draw drew drawn; drink drank drunk; drive drove driven; eat ate eaten; "
              "fall fell fallen; feel felt felt; fight fought fought; find found found; fly "
              "flew flown; forget forgot forgotten; freeze froze frozen; get got gotten; give "
              "gave given; go went gone; grow grew grown; hear heard heard; hide hid hidden; "
              "hold held held; keep kept kept; know knew known; lay laid laid; lead led led; "
              "leave left left; lend lent lent; let let let; lie lay lain; light lit lit; lose "
              "lost lost; make made made; mean meant meant; meet met met; put put put; read read "
              "read; ride rode ridden; ring rang rung; rise rose risen; run ran run; say said "
              "said; see saw seen; sell sold sold; send sent sent; set set set; shake shook "
              "shaken; sing sang sung; sink sank sunk; sit sat sat; sleep slept slept; speak "
              "spoke spoken; spend spent spent; spin spun spun; spread spread spread; stand "
              "stood stood; steal stole stolen; sting stung stung; strike struck struck; swim "
              "swam swum; swing swung swung; take took taken; teach taught taught; tell told "
              "told; think thought thought; throw threw thrown; wake woke woken; wear wore worn; "
              "weave wove woven; win won won; write wrote written")


def _forms(verb: str) -> set[str]:
    """A regular verb's base, -s, -ed and -ing forms (spelling rules of thumb)."""
    if verb.endswith("e"):
        return {verb, verb + "s", verb + "d", verb[:-1] + "ing"}
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return {verb, verb[:-1] + "ies", verb[:-1] + "ied", verb + "ing"}
    s = verb + "es" if verb.endswith(("s", "sh", "ch", "x", "z", "o")) else verb + "s"
    double = verb[-1] in "bdgmnprt" and verb[-2] in "aeiou" and verb[-3:-2] not in "aeiou" \
        and len(verb) <= 4
    stem = verb + verb[-1] if double else verb
    return {verb, s, stem + "ed", stem + "ing"}


def _verbs() -> frozenset[str]:
    """Forms that are verbs in a sentence: the auxiliaries, and of every listed verb the -s
    form and the past; not the base or the -ing form, which a fragment has as often as a
    sentence ("a calm sea", "a lake shining at dawn")."""
    forms = set(_AUXILIARIES.split())
    for verb in _REGULAR.split():
        forms |= {f for f in _forms(verb) if f != verb and not f.endswith("ing")}
    for entry in _IRREGULAR.split(";"):
        base, past, participle = entry.split()
        forms |= {f for f in _forms(base) if f.endswith("s") and f != base} | {past, participle}
    return frozenset(forms)


VERBS = _verbs()
# Words of five letters or more that end in -ed and are no past tense.
_NOT_PAST = frozenset({"speed", "breed", "greed", "steed", "hundred", "kindred", "sacred",
                       "naked", "wicked", "rugged", "ragged", "jagged", "beloved", "tweed"})


def is_verb(word: str) -> bool:
    """A word this gate takes as a verb (``VERBS``, or a regular past of five letters or more).

    >>> [is_verb(w) for w in ("is", "crashed", "sleeps", "calm", "shining", "speed", "red")]
    [True, True, True, False, False, False, False]
    """
    return word in VERBS or (len(word) >= 5 and word.endswith("ed") and word not in _NOT_PAST)


def _words(text: str) -> list[str]:
    """The lowercase ``\\w`` runs of ``text`` (IFEval's words)."""
    return _WORD.findall(text.lower())


def _without_ending(text: str, answer: dict[str, Any]) -> str:
    """``text`` without the closing phrase an end_checker instruction asks for, if it ends so."""
    stripped = text.strip()
    for instruction_id, kwargs in zip(answer.get("instruction_id_list", ()),
                                      answer.get("kwargs") or ()):
        phrase = (kwargs or {}).get("end_phrase") if instruction_id == "startend:end_checker" \
            else None
        if phrase and stripped.lower().endswith(phrase.strip().lower()):
            return stripped[: len(stripped) - len(phrase.strip())].strip()
    return stripped


def is_sentence_about(text: str, answer: dict[str, Any], split: Callable[[str], list[str]]) -> bool:
    """With ``answer["sentence"] = {"about": [...], "min_words": n, "request": [...]}``, whether
    ``text`` is one sentence on the topic (module doc); True where the answer asks for none.
    ``split``: the sentence splitter (rewards.ifeval's, IFEval's own).

    >>> from rewards.ifeval import split_into_sentences as split
    >>> answer = {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}],
    ...           "sentence": {"about": ["sea", "seas"], "min_words": 5,
    ...                        "request": ["Write one sentence about the sea."]}}
    >>> [is_sentence_about(t, answer, split) for t in ("The sea is calm at dawn.", '"The sea"',
    ...     "The sky is calm at dawn.", "Write one sentence about the sea.",
    ...     "The sea is calm. The sea is deep.", "sea sea sea sea sea.",
    ...     "a calm sea with a small boat.", "The sea is calm at dawn",
    ...     "The sea is a sentence of six words.", "Waves crashed on the seas!")]
    [True, False, False, False, False, False, False, False, False, True]
    """
    rule = answer.get("sentence")
    if not rule:
        return True
    if not isinstance(text, str) or len(text) > MAX_CHARS:
        return False
    body = _without_ending(text, answer)
    words = _words(body)
    distinct = set(words)
    if len(words) < rule["min_words"] or len(distinct) < rule["min_words"] - 1:
        return False
    if not distinct & {w.lower() for w in rule["about"]} or not any(map(is_verb, distinct)):
        return False
    if distinct & META or not _END.search(body):
        return False
    said = " " + " ".join(words) + " "
    if any(" " + " ".join(_words(r)) + " " in said for r in rule.get("request", ()) if _words(r)):
        return False
    return len(split(body)) == 1
