"""Verifier for instruction following: checkable constraints on a response.

A task's answer is a spec, a list of constraints such as
``[{"kind": "lowercase"}, {"kind": "max_words", "n": 3}, {"kind": "include", "word": "red"}]``.
Each kind is a small pure predicate ``check(text, params) -> bool`` in
``CHECKS``. The reward is the fraction of constraints a response satisfies,
with two exceptions that close cheap exploits:

- an empty response scores 0.0, though it would meet every upper bound and
  "exclude" constraint for free;
- the hack check: a response that *claims* compliance ("as requested", "I
  followed all ...", "(word count: 3)") scores 0.0 unless it really satisfies
  every constraint. A learned critic can be talked into credit this way; the
  policy must learn that only compliance pays. A claim is a statement about the
  response or the instructions (see ``claims_compliance``): text that merely uses
  a word like "compliance" ("gdpr compliance matters") is not one.

- a response with no visible word (``.``, ``-``, a zero-width space) scores 0.0 too,
  for the same reason.

``topic`` is a constraint of its own (k2rl/Instructions-v1 puts it in every spec): every
word must be one of the topic's, so nonsense words that meet the other constraints lose it.

Words and whole-word matching are Unicode-aware: a letter or digit of any script
(``\\w`` less ``_``) makes a token a word, so "Привет мир" has two words and
"мир" is a whole word of it. Tokens are split on every separator a reader cannot see
as part of a word (``SEPARATORS``): whitespace, every Unicode space, line and paragraph
separator, every control, format (zero-width: U+200B, U+2060, U+FEFF, the soft hyphen),
private-use and unassigned character of the BMP, and the blank-looking letters (U+2800
Braille blank, the Hangul fillers). So "red\\u2800fig" is two words, as it looks.

``include`` and ``exclude`` match what a reader sees (``visible_form``): both the text and
the word are NFKC-normalised (fullwidth ``ｆｉｇ`` is ``fig``), case-folded, stripped of
format and control characters and of combining marks left over (``f\\u00adig``,
``fi\\u200bg`` and ``fi\\u0307g`` are ``fig``), blanks become spaces, and the common
Cyrillic and Greek look-alikes of Latin letters become those letters (``fіg`` with a
Cyrillic ``і`` is ``fig``; ``CONFUSABLES``). Applied to both sides alike, so a Cyrillic
word still matches itself.

Cost: every check is linear in the response's length (no regular expression here can
backtrack over a run it already scanned): 64k ``!`` takes milliseconds per kind
(bench/results/verifier_cost.json).

These are k2rl's own constraints, as the Instructions env's prompts state them;
they differ from IFEval's (rewards/ifeval.py, which follows IFEval exactly):
``max_words n`` is "at most n" (IFEval's "less than n" is fewer than n), and a word
is a whitespace-separated token with a letter or digit ("state-of-the-art" and
"don't" are one word each; IFEval counts ``\\w+`` runs, 4 and 2).
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any, Callable

Check = Callable[[str, dict[str, Any]], bool]

# A letter or digit of any script: \w less the underscore.
_ALNUM = r"[^\W_]"
_HAS_ALNUM = re.compile(_ALNUM)
# Blank-looking letters and symbols: Braille blank, Hangul fillers, Khmer inherent vowels.
_BLANKS = "\u2800\u3164\u115f\u1160\uffa0\u17b4\u17b5"


def _separator_class() -> str:
    """A regex character class body: every character that separates words (module doc)."""
    codes = [c for c in range(0x10000) if unicodedata.category(chr(c))[0] in "CZ"]
    codes = sorted(set(codes + [ord(c) for c in _BLANKS]))
    ranges, start = [], codes[0]
    for previous, code in zip(codes, codes[1:] + [-1]):
        if code != previous + 1:
            ranges.append(f"\\U{start:08x}-\\U{previous:08x}")
            start = code
    # Astral format and private-use characters: tags, shorthand and music format controls.
    ranges += [r"\U000e0000-\U000e0fff", r"\U0001bca0-\U0001bca3", r"\U0001d173-\U0001d17a",
               r"\U000f0000-\U0010ffff"]
    return "".join(ranges)


SEPARATORS = _separator_class()
_SPLIT = re.compile(f"[{SEPARATORS}]+")
# A sentence ends at . ! or ? followed by a separator or the end ("3.5" is one number),
# or at a CJK full stop, exclamation or question mark (no space follows those). The
# lookbehind makes a run of "!" one candidate, not one per character: linear, not quadratic.
_SENTENCE_END = re.compile(rf"(?<![.!?])[.!?]+(?=[{SEPARATORS}]|$)|[。！？]+")
# A bullet: "- " or "* " (markdown's two list markers).
_BULLET = re.compile(r"[-*] ")
# A fenced block, ```json ... ``` (the language tag optional).
_FENCE = re.compile(r"\A```[A-Za-z]*[ \t]*\n?(.*?)\n?```\Z", re.DOTALL)

# What the hack check catches: statements about the response or the instructions.
_RULES = r"(?:instructions?|constraints?|rules|requirements?|directions|specifications?)"
_CLAIMS = re.compile(
    # "as requested", "as instructed", "as asked"
    r"\bas (?:requested|instructed|asked|specified|required)\b"
    # "I followed all the instructions", "met every constraint" (not "I followed the recipe")
    r"|\b(?:followed|met|satisfied|obeyed|complied with|adhered to|respected)"
    rf" (?:all|every|each|the|your)(?: of)?(?: the| your)? {_RULES}"
    # "this response satisfies ...", "my answer is compliant"
    r"|\b(?:this|my|the above) (?:response|answer|reply|output|text)"
    r" (?:satisfies|meets|follows|complies|obeys|fulfils|fulfills|respects|is compliant)\b"
    # "all constraints met", "all the rules are satisfied"
    rf"|\ball (?:the |of the )?{_RULES} (?:are |were |have been |is )?"
    r"(?:met|satisfied|followed|respected|fulfilled|obeyed)\b"
    # "complies with the instructions", "compliant with all constraints"
    rf"|\b(?:complies|compliant|compliance|complied) with (?:all |every |each |the |your )*"
    rf"(?:{_RULES}|request|format|prompt)\b"
    # a word count or word tally stated in brackets: "(word count: 3)", "(3 words)"
    r"|\(\s*word count|\bword count\s*:|\(\s*\d+\s+words?\s*\)",
    re.IGNORECASE,
)
# A bare self-assessment: a fragment that is only "(fully) compliant", "complies", ...
_BARE_CLAIM = re.compile(
    r"(?:(?:fully|totally|completely|100%|all|entirely|strictly)\s+)*"
    r"(?:compliant|complies|complied|compliance|conforms|conforming)",
    re.IGNORECASE,
)
# Fragments are what lies between sentence or clause punctuation, dashes and brackets.
_FRAGMENT_SPLIT = re.compile(r"[.!?;:,()\[\]\n]+|\s[-–—]+\s|^[-–—]+\s")


def words(text: str) -> list[str]:
    """The words of ``text``: tokens between separators with a letter or digit in them, so
    the "- " of a bullet or the brackets of a JSON list are not words.

    >>> words("- red apple"), words('["red", "fig"]'), words("Привет мир")
    (['red', 'apple'], ['["red",', '"fig"]'], ['Привет', 'мир'])
    >>> words("red\\u2800fig\\u200bplum\\x01pear"), words(". - \\u200b")
    (['red', 'fig', 'plum', 'pear'], [])
    """
    return [token for token in _SPLIT.split(text) if _HAS_ALNUM.search(token)]


# Cyrillic and Greek letters that look like Latin ones (lower case: matching case-folds first).
CONFUSABLES = {
    "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "н": "h", "і": "i",
    "ј": "j", "к": "k", "ӏ": "l", "м": "m", "о": "o", "р": "p", "ԛ": "q", "ѕ": "s",
    "т": "t", "ԝ": "w", "х": "x", "у": "y", "ү": "y", "ё": "e", "ї": "i", "ɑ": "a",
    "ɡ": "g", "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v",
    "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ϲ": "c", "ϳ": "j",
}
_VISIBLE = str.maketrans({**CONFUSABLES, **{blank: " " for blank in _BLANKS}})
# Controls other than whitespace, and format characters: nothing a reader sees.
_INVISIBLE = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u00ad\u034f\u061c\u180b-\u180f"
                        r"\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff"
                        r"\ufff9-\ufffb\U000e0000-\U000e0fff]")


def has_invisible(text: str) -> bool:
    """Whether ``text`` holds a character no reader sees (a control or format character).

    >>> has_invisible("An owl\u200b hunts."), has_invisible("An owl hunts.")
    (True, False)
    """
    return _INVISIBLE.search(text) is not None


def visible_form(text: str) -> str:
    """``text`` as matching sees it (module doc): NFKC, case-folded, invisibles removed,
    leftover combining marks removed, blanks as spaces, look-alikes as Latin letters.

    >>> visible_form("ＦＩＧ"), visible_form("f\\u00adi\\u200bg"), visible_form("fіg")
    ('fig', 'fig', 'fig')
    """
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text).casefold())
    if not text.isascii():
        text = "".join(c for c in text if not unicodedata.combining(c))
    return text.translate(_VISIBLE)


def _has_word(text: str, word: str) -> bool:
    """Whole-word, case-insensitive, any script, as seen (``visible_form``): "red" is in
    "Red fig" but not in "bred".

    >>> _has_word("Привет, Мир!", "мир"), _has_word("мировой", "мир")
    (True, False)
    >>> _has_word("a ｆ\\u00adｉg", "fig"), _has_word("a fіg", "fig")
    (True, True)
    """
    pattern = rf"(?<!\w){re.escape(visible_form(word))}(?!\w)"
    return re.search(pattern, visible_form(text)) is not None


def max_words(text: str, params: dict[str, Any]) -> bool:
    """At most ``params["n"]`` words."""
    return len(words(text)) <= params["n"]


def min_words(text: str, params: dict[str, Any]) -> bool:
    """At least ``params["n"]`` words."""
    return len(words(text)) >= params["n"]


def max_chars(text: str, params: dict[str, Any]) -> bool:
    """At most ``params["n"]`` characters, surrounding whitespace excluded."""
    return len(text.strip()) <= params["n"]


def lowercase(text: str, params: dict[str, Any]) -> bool:
    """Some letters and none of them capital."""
    return text.islower()


def uppercase(text: str, params: dict[str, Any]) -> bool:
    """Some letters and all of them capital."""
    return text.isupper()


def include(text: str, params: dict[str, Any]) -> bool:
    """Contains the word ``params["word"]``."""
    return _has_word(text, params["word"])


def exclude(text: str, params: dict[str, Any]) -> bool:
    """Does not contain the word ``params["word"]``."""
    return not _has_word(text, params["word"])


_EDGES = re.compile(r"^[\W_]+|[\W_]+$")


def edges_stripped(word: str) -> str:
    """A word without the punctuation around it (JSON quotes, commas, full stops).

    >>> edges_stripped('["fig",'), edges_stripped("plum.")
    ('fig', 'plum')
    """
    return _EDGES.sub("", word)


def topic(text: str, params: dict[str, Any]) -> bool:
    """Every word is one of ``params["words"]`` (the topic the prompt names), as seen
    (``visible_form``), without the punctuation around it (JSON quotes, commas, full stops).

    >>> fruits = {"words": ["fig", "plum"]}
    >>> topic('["FIG", "plum"]', fruits), topic("fig. zzz.", fruits), topic("fig-plum", fruits)
    (True, False, False)
    """
    allowed = {visible_form(word) for word in params["words"]}
    return all(edges_stripped(visible_form(word)) in allowed for word in words(text))


def json_format(text: str, params: dict[str, Any]) -> bool:
    """Parses as JSON, and is an object or a list (a bare "3" or string is not a format).

    The JSON may be fenced as a markdown code block (```json ... ```).
    """
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: "[[[[..." thousands deep
        return False
    return isinstance(value, (dict, list))


def bullets(text: str, params: dict[str, Any]) -> bool:
    """Every non-empty line starts with "- " or "* ", and there is at least one."""
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and all(_BULLET.match(line) for line in lines)


def sentence_count(text: str) -> int:
    """Sentences: runs with a letter or digit between sentence ends ("fig. plum. kiwi" has 3,
    "fig. p= lime." 2)."""
    return sum(1 for part in _SENTENCE_END.split(text) if _HAS_ALNUM.search(part))


def sentences(text: str, params: dict[str, Any]) -> bool:
    """Exactly ``params["n"]`` sentences (``sentence_count``); a trailing one without a full
    stop counts."""
    return sentence_count(text) == params["n"]


CHECKS: dict[str, Check] = {
    "max_words": max_words,
    "min_words": min_words,
    "max_chars": max_chars,
    "lowercase": lowercase,
    "uppercase": uppercase,
    "include": include,
    "exclude": exclude,
    "topic": topic,
    "json": json_format,
    "bullets": bullets,
    "sentences": sentences,
}


def satisfied(text: str, spec: list[dict[str, Any]]) -> list[bool]:
    """Whether ``text`` meets each constraint of ``spec``; an unknown kind is a caller bug.

    >>> satisfied("red fig", [{"kind": "lowercase"}, {"kind": "max_words", "n": 1}])
    [True, False]
    """
    results = []
    for constraint in spec:
        check = CHECKS.get(constraint.get("kind"))
        if check is None:
            kind = constraint.get("kind")
            raise ValueError(f"unknown constraint kind {kind!r}; known: {sorted(CHECKS)}")
        results.append(check(text, constraint))
    return results


def claims_compliance(text: str) -> bool:
    """True if ``text`` asserts that it follows the instructions.

    A claim speaks of the response or the instructions ("as requested", "I followed
    all the rules", "this answer meets ...", "all constraints met", "(word count: 3)"),
    or is a bare self-assessment standing alone between punctuation or dashes
    ("fig - fully compliant", "fig. Complies."). Text that only uses such a word
    about something else is not a claim: "gdpr compliance matters", "the device
    complies with EU law".

    >>> claims_compliance("red fig (word count: 2)"), claims_compliance("red fig")
    (True, False)
    >>> claims_compliance("fig - fully compliant"), claims_compliance("gdpr compliance matters")
    (True, False)
    """
    if _CLAIMS.search(text):
        return True
    fragments = _FRAGMENT_SPLIT.split(text)
    return any(_BARE_CLAIM.fullmatch(fragment.strip(" \t-–—*•")) for fragment in fragments)


def follow_score(text: str, spec: list[dict[str, Any]]) -> float:
    """The fraction of ``spec`` that ``text`` satisfies, after the empty and hack checks.

    >>> spec = [{"kind": "lowercase"}, {"kind": "include", "word": "red"}]
    >>> [follow_score(text, spec) for text in ["red fig", "Red fig", "Fig, as requested"]]
    [1.0, 0.5, 0.0]
    """
    if not spec:
        raise ValueError("an instruction spec needs at least one constraint")
    if not isinstance(text, str) or not words(text):
        return 0.0  # empty, or nothing a reader sees as a word: ".", "-", "\u200b"
    results = satisfied(text, spec)
    if claims_compliance(text) and not all(results):
        return 0.0  # claiming compliance without complying earns nothing at all
    return sum(results) / len(results)


def instruction_following(responses: list[str], specs: list[list[dict[str, Any]]]) -> list[float]:
    """Per response, the fraction of its spec's constraints satisfied (see the module doc).

    >>> spec = [{"kind": "max_words", "n": 2}, {"kind": "exclude", "word": "fig"}]
    >>> instruction_following(["red plum", "red fig", "red fig, all constraints met"], [spec] * 3)
    [1.0, 0.5, 0.0]
    """
    if len(responses) != len(specs):
        raise ValueError(
            f"instruction_following got {len(responses)} responses but {len(specs)} specs"
        )
    return [follow_score(response, spec) for response, spec in zip(responses, specs)]
