"""The final answer of a reply, read the way a grader reads it (``final_answer``).

One extractor feeds the verifiers that score an answer (math_equiv, exact_int, final_int,
exact_match, multiple_choice, countdown): what a reply marks as its answer is scored, and the
working before it never is. Formats (``fmt``), for a dataset or env that names one:

- ``boxed``: the last ``\\boxed{..}`` or ``\\fbox{..}`` (braces balanced; a box inside a box
  belongs to the outer one);
- ``tag``: the last ``<answer>..</answer>`` (DeepSeek-R1, TinyZero);
- ``gsm8k``: what follows the last ``####`` on its line;
- ``last_number``: the last number of the reply (lm-eval's "flexible" GSM8K match);
- ``bare``: the whole reply;
- ``auto`` (the default): the first that the reply has of a box, a tag, ``####``, a phrase
  ("answer is x", "Final answer: x", "**Answer:** x", "the correct option is x": the last one,
  unless a later line states a number, as when the reply goes on working), a first line
  followed by "Explanation:" / "Reasoning:" / "Rationale:", and its last non-empty line (the
  last cell of a markdown table's row). A check that ends the reply ("Check: 48 + 24 = 72 ✓",
  "**Verification:** ...", from a line that starts with such a label after the last phrase)
  is not read by the phrase and last-line rules: its numbers are not the answer.

``Extracted.text`` is the answer as marked, with its markup off (bold, italics, ``$..$``,
quotes, a wrapping ``\\boxed{}``, LaTeX spacing such as ``\\quad``, a trailing period);
``Extracted.value`` is the value it states, what numeric verifiers read (``value``): in prose
the last ``$..$`` or the last run of math between words ("So she sold 72 clips." -> ``72``),
and after the last ``=`` of a chain ("10 + 46 = 56" -> ``56``; "x = 4" keeps its variable).

Where this departs from math-verify's ``parse``, which picks by priority over the whole reply:
a reply that offers two answers is flagged rather than read (``hedged``): the chosen rule
finds two that differ (two boxes, two tags, two phrases), or the word "or" is in the answer or
within two words of it ("seventy-one or \\boxed{72}"); so is a negated one (``negated``):
"not", "never" or "n't" within three words before it ("The answer is not \\boxed{72}"), or
"is not" after it ("72 is not the answer").
Verifiers score both 0. A reply holding an invisible character (zero-width space or joiner,
BOM, bidi control, soft hyphen, a control other than whitespace) has no answer at all: such
characters can hide what a reader sees. Text up to the last ``</think>`` is thinking, never an
answer, and a reply whose ``<think>`` never closes has none.

Cost: linear in the reply's length: one pass matches every brace, and the patterns have no
nested quantifiers (``tests/rewards/test_real_styles.py`` reads a 64k-character reply).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace

FORMATS = ("auto", "boxed", "tag", "gsm8k", "last_number", "bare")

# Controls other than whitespace, and format characters: nothing a reader sees (the same set
# as rewards.instructions).
_INVISIBLE_CHARS = (r"\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u00ad\u034f\u061c\u180b-\u180f"
                    r"\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff"
                    r"\ufff9-\ufffb\U000e0000-\U000e0fff")
_INVISIBLE = re.compile(f"[{_INVISIBLE_CHARS}]")
# Parts of a glyph a reader sees: an emoji's variation selector after a symbol ("✔️" is
# U+2714 U+FE0F), and the joiner between two emoji ("👨‍👩‍👧"). They are blanked (a space each,
# offsets kept) before the check for invisible characters. After a letter or digit (a keycap
# "7\ufe0f\u20e3", "7\ufe0f2"), after a space or at the start, they stay hidden characters.
_EMOJI = r"\u2190-\u21ff\u2300-\u23ff\u2460-\u27bf\u2900-\u297f\u2b00-\u2bff\U0001f000-\U0001faff"
_EMOJI_JOINER = re.compile(f"(?<=[{_EMOJI}\ufe0f])\u200d(?=[{_EMOJI}])")
_GLYPH_SELECTOR = re.compile(f"(?<=[^\\w\\s{_INVISIBLE_CHARS}])[\ufe0e\ufe0f]")
# Marks after an answer that say it is wrong: "Answer: B ❌" is negated, not B.
_CROSS_MARKS = frozenset("❌❎✗✘⛔🚫👎")
_BOX = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")
_BRACE = re.compile(r"(?<!\\)[{}]")
# An answer tag, with attributes or spaces as some prompts ask for them: <answer type="final">.
_TAG = re.compile(r"<(/?)answer(?:\s+[^<>\n]{0,100})?\s*>", re.IGNORECASE)
_GSM8K = re.compile(r"####[ \t]*([^\n]*)")
# "The answer is", "Answer (final):", "Result:", and a heading or a line of its own that says
# "Answer" with the answer on the next line.
_PHRASE = re.compile(
    r"\b(?:answer|(?:correct|right|best|final)\s+(?:option|choice|response))\b"
    r"(?:[ \t]*\([^()\n]{1,20}\))?[ \t*]*(?:(?:is|was|(?:would|should|must|will)\s+be)\b|[:=])"
    r"[\s*:}]*|\bresult\b[ \t*]*:[\s*]*"
    r"|^[ \t#>*_]*(?:final[ \t]+)?answer[ \t*_]*\n\s*", re.IGNORECASE | re.MULTILINE)
# Where a phrase's answer ends: a sentence's end, a clause that starts with a word.
_CLAUSE_END = re.compile(r"\n|[.?;](?=\s|$)|(?<=[A-Za-z])!|,\s+(?=[A-Za-z]{2})")
_ALNUM = re.compile(r"[^\W_]")
_NUMBER = re.compile(r"-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:/[0-9]+)?")
# Math in prose; each bounded, so that a thousand unclosed "\(" cost a thousand short scans.
_MATH_SEGMENT = re.compile(r"\$\$([^$]{1,500})\$\$|\$([^$\n]{1,500})\$|\\\((.{1,500}?)\\\)"
                           r"|\\\[(.{1,500}?)\\\]", re.DOTALL)
# Commands and \text{..} groups hide nothing from the word count: masked, offsets kept.
_MASKED = re.compile(r"\\(?:text|mathrm|mbox|textbf|mathbf|operatorname)[ \t]*\{[^{}]*\}"
                     r"|\\[A-Za-z]+")
# Prose: a word of three letters, or of two from this list (units too: "72 cm" is prose, where
# "2xy" is math); math's own names are not words.
_TWO_LETTER_WORDS = {"is", "or", "so", "it", "to", "of", "in", "be", "an", "as", "at", "by", "we",
                     "if", "on", "no", "my", "he", "me", "do", "up", "us", "am", "pm", "cm", "mm",
                     "km", "kg", "mg", "ml", "hr", "ft", "yd", "lb", "oz", "mi"}
_MATH_NAMES = {"sin", "cos", "tan", "cot", "sec", "csc", "log", "exp", "sqrt", "lim", "max",
               "min", "gcd", "lcm", "mod", "frac", "pi", "inf"}
# A date's month and day before its year: "July 20, 1969" states the year, "20, 1969" is no value.
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_DAY_OF_MONTH = re.compile(r"\s*[0-9]{1,2}(?:st|nd|rd|th)?,[ \t]*(?=[0-9]{4}\s*$)")
_DATE_BEFORE = re.compile(rf"\b{_MONTH}\.?[ \t]+[0-9]{{1,2}}(?:st|nd|rd|th)?,[ \t]*$",
                          re.IGNORECASE)
_LETTERS = re.compile(r"[A-Za-z]{2,}(?:['’][A-Za-z]+)?")
# A reply that gives its answer on its first line, then explains it under a label ("Explanation:",
# "**Reasoning:**", a "### Rationale" heading, "Here's why:", "Why:").
_ANSWER_THEN_EXPLANATION = re.compile(
    r"([^\n]+)\n[\s>*#]*(?:explanation|justification|reasoning|rationale|why"
    r"|here(?:'s|’s|\s+is)\s+(?:why|how|the\s+(?:explanation|reasoning)))\b[ \t*]*(?::|\n)",
    re.IGNORECASE)
# The same with the working under its own label ("**Answer:** 72\n\n**Working:** ..."); read
# only where that first line states its answer with a phrase, since "Steps:" after a first line
# of prose is common in replies that answer at the end.
_ANSWER_THEN_WORKING = re.compile(
    r"([^\n]+)\n[\s>*#]*(?:working|work|steps?|solution|derivation|details|calculations?|method)"
    r"\b[ \t*]*(?::|\n)", re.IGNORECASE)
# A closing courtesy after the answer, at a line's start or after a sentence on it: "Let me
# know if anything is unclear.", "I hope this helps!". It is not the answer.
_COURTESY = re.compile(
    r"(?:^|(?<=[.!?])[ \t])[ \t>*_]*(?:let[ \t]+me[ \t]+know|i[ \t]+hope|hope[ \t]+(?:this|that|it)"
    r"|feel[ \t]+free|if[ \t]+you[ \t]+(?:have|need|want|would|'d|’d)|happy[ \t]+to[ \t]+help"
    r"|glad[ \t]+(?:to|i[ \t]+could)[ \t]+help|is[ \t]+there[ \t]+anything[ \t]+else)\b",
    re.IGNORECASE | re.MULTILINE)
COURTESY_LINES = 3  # closing lines of courtesy skipped at most
_NAMES_A_VALUE = re.compile(r"[0-9]|(?<![.!?]\s)(?<!^)\b(?!I\b)[A-Z]", re.MULTILINE)
# A table column that holds the answer: "| Answer | Unit |", "| Final result |".
_ANSWER_COLUMN = re.compile(r"[\s*_]*(?:final[ \t]+)?(?:answer|result|value|total)[\s*_:]*",
                            re.IGNORECASE)
# A line that starts a check of the answer given above it: "Check: 48 + 24 = 72 ✓",
# "**Verification:** ...", "Double-check (substituting back): ...". Its numbers are not answers.
_CHECK_LABEL = re.compile(r"^[ \t>*_#-]*(?:quick[ \t]+|sanity[ \t]+|double[ \t-]*)?"
                          r"(?:check(?:ing)?|verification|verify(?:ing)?)\b[^\n:]{0,30}:",
                          re.IGNORECASE | re.MULTILINE)
# Working on a line after an answer phrase: a sum, an equation ("48 + 25 = 73", "25) = 73").
# Numbers in prose after it ("published in 1967", "a 1:1 ratio", "α = 0.05") are not.
_WORKING = re.compile(r"[0-9][ \t]*[-+*/×÷·^−=][ \t]*[0-9(]|[0-9)][ \t]*=")
# A markdown table's delimiter row ("|---|---|"): a reply that has one may end on a table row.
_TABLE_RULE = re.compile(r"^[ \t]*\|[ \t:]*-{3,}[ \t:]*\|", re.MULTILINE)
# LaTeX spacing and spaces at the edges of an answer ("\\therefore \\quad 72"): read from its
# start, and (reversed) from its end.
_SPACING_AHEAD = re.compile(r"(?:\\q?quad(?![A-Za-z])|\\[,;:! ]|\s)*")
_SPACING_BEHIND = re.compile(r"(?:dauqq?\\|[,;:! ]\\|\s)*")
# What a conclusion follows: "\\therefore 72", "\\Rightarrow 72", "∴ 72".
_CONCLUSION = re.compile(r"\\(?:therefore|implies|Rightarrow|Longrightarrow)(?![A-Za-z])"
                         r"(?:\s*\\[)\]])?|[∴⇒⟹]")
# The "=" of a chain; not part of <=, >=, !=, ==, :=.
_EQUALS = re.compile(r"(?<![<>!=:])=(?!=)")
_LONE_SYMBOL = re.compile(r"(?:(?<=[\s$(])|^)(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?[A-Za-z0-9]+\}?)?\s*$")
_HEDGE_WORDS = {"or"}
# The sentence or line after the answer offers another: "The answer is B. Or C.", "**72**\n\nOr 73".
_OR_NEXT = re.compile(r"(?:[^.!?\n]{0,40}?[.!?]+[ \t*_]*|[^\n]{0,80}?\n[\s*_>]*)or\b",
                      re.IGNORECASE)
_NEGATION = re.compile(r"^(?:not|never|cannot)$|n't$", re.IGNORECASE)
_CLAUSE_START = re.compile(r"[\n;]|[.?!](?=\s)")
_WORDS_NEAR = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_WRAPPERS = (("**", "**"), ("__", "__"), ("*", "*"), ("_", "_"), ("$$", "$$"), ("$", "$"),
             ("\\(", "\\)"), ("\\[", "\\]"), ("`", "`"), ('"', '"'), ("“", "”"), ("'", "'"),
             ("‘", "’"))
# LaTeX spacing before a unit in text: "72\\,\\text{clips}", "72\\ \\text{clips}".
_SPACE_BEFORE_UNIT = re.compile(r"(?<=[0-9])(?:\s|\\[,;: ])+(?=\\(?:text|mathrm|mbox)\s*\{)")
_COMMAND_WRAPPER = re.compile(r"\\(?:boxed|fbox|text|textbf|mathrm|mathbf|mbox)[ \t]*\{")
# A phrase's answer is read to its clause's end, or this many characters.
MAX_ANSWER_CHARS = 200
# Characters at the end of a long answer span (a whole last line) that its value is read from.
MAX_VALUE_WINDOW = 1000
MAX_CLEANING = 8  # markup layers peeled off an answer; real answers have two or three


@dataclass(frozen=True)
class Extracted:
    """A reply's final answer and where it is."""

    text: str  # the answer as marked, markup off: "72 clips", "B. Paris", "\\frac{1}{2}"
    value: str | None  # the value it states, for numeric verifiers: "72"; None if none
    start: int  # reply[start:end] is the answer as written
    end: int
    how: str  # the rule that found it: a format (boxed, tag, ...), phrase or last_line
    hedged: bool = False  # two different answers, or "x or y"
    negated: bool = False  # "the answer is not x"

    @property
    def clear(self) -> bool:
        """Whether the reply commits to this answer (neither hedged nor negated)."""
        return not (self.hedged or self.negated)


# --- finding candidate spans (start, end) of the raw answer ----------------------------


def _closing_braces(text: str) -> dict[int, int]:
    """The index of the matching ``}`` of every ``{`` that has one (one pass).

    >>> _closing_braces("a{b{c}}{")
    {3: 5, 1: 6}
    """
    stack, closing = [], {}
    for match in _BRACE.finditer(text):
        if match.group(0) == "{":
            stack.append(match.start())
        elif stack:
            closing[stack.pop()] = match.start()
    return closing


def boxes(text: str) -> list[tuple[int, int]]:
    """The (start, end) of the contents of every complete outermost box.

    >>> text = "\\\\boxed{1} \\\\fbox{\\\\boxed{2}} \\\\boxed{3"
    >>> [text[s:e] for s, e in boxes(text)]
    ['1', '\\\\boxed{2}']
    """
    closing, spans, inside_until = _closing_braces(text), [], -1
    for match in _BOX.finditer(text):
        brace = match.end() - 1
        if match.start() < inside_until or brace not in closing:
            continue  # inside an earlier box, or never closed
        spans.append((match.end(), closing[brace]))
        inside_until = closing[brace]
    return spans


def tags(text: str) -> list[tuple[int, int]]:
    """The (start, end) of the contents of every closed ``<answer>`` tag.

    >>> text = "<answer>1</answer> <answer><answer>2</answer> <answer>3"
    >>> [text[s:e] for s, e in tags(text)]
    ['1', '2']
    """
    spans, opened = [], None
    for match in _TAG.finditer(text):
        if not match.group(1):
            opened = match.end()  # an unclosed tag before this one is not an answer
        elif opened is not None:
            spans.append((opened, match.start()))
            opened = None
    return spans


def gsm8k_marks(text: str) -> list[tuple[int, int]]:
    """The (start, end) of what follows each ``####`` on its line.

    >>> text = "working\\n#### 72\\n"
    >>> [text[s:e] for s, e in gsm8k_marks(text)]
    ['72']
    """
    return [match.span(1) for match in _GSM8K.finditer(text) if match.group(1).strip()]


def phrases(text: str) -> list[tuple[int, int]]:
    """The (start, end) of the answer after each "answer is" / "Answer:" phrase, to the end
    of its clause.

    >>> text = "**Answer:** 72. I hope it is correct.\\nFinal Answer: the answer is 4, since 2+2=4"
    >>> [text[s:e] for s, e in phrases(text)]
    ['72', '4']
    """
    matches, spans = list(_PHRASE.finditer(text)), []
    for match, following in zip(matches, matches[1:] + [None]):
        window = min(len(text), match.end() + MAX_ANSWER_CHARS)
        bound = min(window, following.start()) if following else window
        end = _CLAUSE_END.search(text, match.end(), bound)
        span = (match.end(), end.start() if end else window)
        if following is not None and following.start() < span[1]:
            continue  # "Final Answer: The final answer is 72": the inner phrase says it
        if text[span[0]:span[1]].strip(" \t*"):
            spans.append(span)
    return spans


def last_line(text: str) -> tuple[int, int] | None:
    """The (start, end) of the last line with a letter or digit in it, or None.

    >>> text = "working\\n10 + 46 = 56\\n---\\n"
    >>> text[slice(*last_line(text))]
    '10 + 46 = 56'
    """
    found = _ALNUM.search(text[::-1])  # the last letter or digit, found from the end
    if found is None:
        return None
    at = len(text) - 1 - found.start()
    end = text.find("\n", at)
    return text.rfind("\n", 0, at) + 1, len(text) if end < 0 else end


def last_number(text: str) -> tuple[int, int] | None:
    """The (start, end) of the last number in ``text``, or None.

    >>> text = "48 + 24 = 72 clips in all."
    >>> text[slice(*last_number(text))]
    '72'
    """
    found = None
    for found in _NUMBER.finditer(text):
        pass
    return found.span() if found else None


# --- reading a span: its text, its value, hedges and negations -------------------------


def _wrapped(text: str, a: int, b: int, left: str, right: str) -> bool:
    """Whether ``text[a:b]`` is wholly inside one ``left``..``right`` pair."""
    return (b - a > len(left) + len(right) and text.startswith(left, a, b)
            and text.endswith(right, a, b) and text.find(right, a + len(left), b - len(right)) < 0)


def clean(text: str) -> str:
    """``text`` without the markup around an answer: bold, ``$..$``, ``\\(..\\)``, quotes,
    backticks, a wrapping ``\\boxed{}`` or ``\\text{}``, stray bold marks, one trailing period.

    >>> clean("**72**."), clean("$\\\\boxed{\\\\frac{1}{2}}$"), clean('"Paris"'), clean("72**")
    ('72', '\\\\frac{1}{2}', 'Paris', '72')
    >>> clean("\\\\text{(B) Paris}"), clean("3.5."), clean("6!"), clean("72)"), clean("(1, 2]")
    ('(B) Paris', '3.5', '6!', '72', '(1, 2]')
    >>> clean("*Paris*"), clean("Paris*"), clean("\\\\quad 72\\\\,")
    ('Paris', 'Paris', '72')
    >>> clean("**72**!"), clean("Paris! 🇫🇷"), clean("**B. Paris** ✅"), clean("n!"), clean("90°")
    ('72', 'Paris', 'B. Paris', 'n!', '90°')

    Each layer is peeled by moving the bounds ``a``..``b`` of ``text``: the braces are matched
    once, however many boxes are nested (a 64k reply of nested boxes costs one pass).
    """
    a, b, closing = 0, len(text), None
    for _ in range(MAX_CLEANING):
        before = (a, b)
        a, b = _stripped(text, *_without_trailing_marks(text, a, b))
        a += 2 if text.startswith("**", a, b) else 0
        b -= 2 if b - a >= 2 and text.endswith("**", a, b) else 0
        a, b = _without_spacing(text, *_stripped(text, a, b))
        if text.count("*", a, b) % 2 and text.endswith("*", a, b) and not text.endswith(
                "**", a, b):
            b -= 1  # "Answer: *Paris*" read from after the phrase's marks: "Paris*"
        a += 2 if text.startswith("> ", a, b) else 0  # a quote
        a += len("\\displaystyle") if text.startswith("\\displaystyle", a, b) else 0
        a, b = _stripped(text, a, b)
        b -= 1 if text.endswith(".", a, b) and not text.endswith("..", a, b) else 0
        for left, right in _WRAPPERS:
            if _wrapped(text, a, b, left, right):
                a, b = a + len(left), b - len(right)
                break
        closers = text.count(")", a, b) + text.count("]", a, b)
        openers = text.count("(", a, b) + text.count("[", a, b)
        if b > a and text[b - 1] in ")]" and closers > openers:
            b -= 1  # "(Answer: 72)": the bracket closes the sentence's, not the answer's
        command = _COMMAND_WRAPPER.match(text, a, b)
        if command:
            # A brace pair inside text[a:b] is a pair of text's own: match them once.
            closing = _closing_braces(text) if closing is None else closing
            if closing.get(command.end() - 1) == b - 1:
                a, b = command.end(), b - 1
        if (a, b) == before:
            break
    return text[a:b].strip()


def _is_symbol(char: str) -> bool:
    """Whether ``char`` is an emoji or symbol a reply puts after its answer (Unicode So, a
    non-ASCII Sk such as a skin tone, a regional indicator of a flag); not "°", a unit."""
    category = unicodedata.category(char)
    return char != "°" and (category == "So" or category == "Sk" and char > "\x7f")


def _without_trailing_marks(text: str, a: int, b: int) -> tuple[int, int]:
    """The bounds of ``text[a:b]`` without emoji and symbols at its end ("Paris 🗼", "B ✅"),
    nor an exclamation mark after emphasis or a word ("**72**!", "Paris!"; "6!" and "n!"
    are factorials and stay). One step back per character removed."""
    while b > a and (text[b - 1].isspace() or _is_symbol(text[b - 1])):
        b -= 1
    if b - a >= 2 and text[b - 1] == "!" and (
            text[b - 2] in "*_`$\"”'’" or b - a >= 3 and text[b - 3:b - 1].isalpha()
            and text[b - 3:b - 1].isascii()):
        b -= 1
    return a, b


def _stripped(text: str, a: int, b: int) -> tuple[int, int]:
    """The bounds of ``text[a:b]`` without whitespace at its edges."""
    part = text[a:b]
    return a + len(part) - len(part.lstrip()), b - (len(part) - len(part.rstrip()))


def _without_spacing(text: str, a: int, b: int) -> tuple[int, int]:
    """The bounds of ``text[a:b]`` without LaTeX spacing (``\\quad``, ``\\,``) and spaces at
    its edges (one regex pass from each end).

    >>> text = "\\\\quad 72\\\\, "
    >>> text[slice(*_without_spacing(text, 0, len(text)))]
    '72'
    """
    a = _SPACING_AHEAD.match(text, a, b).end()
    return a, b - _SPACING_BEHIND.match(text[a:b][::-1]).end()


def _masked(text: str) -> str:
    """``text`` with commands and ``\\text{}`` groups blanked (same length)."""
    return _MASKED.sub(lambda match: " " * len(match.group(0)), text)


def _is_word(letters: str) -> bool:
    """Whether a run of letters is a prose word (see ``_TWO_LETTER_WORDS``)."""
    stem = letters.lower().replace("’", "'").partition("'")[0]
    return (len(stem) > 2 or stem in _TWO_LETTER_WORDS) and stem not in _MATH_NAMES


def _words(text: str) -> list[tuple[int, int]]:
    """The (start, end) of every prose word in ``text`` (commands and math names aside)."""
    return [match.span() for match in _LETTERS.finditer(_masked(text)) if _is_word(match.group(0))]


def is_prose(text: str) -> bool:
    """Whether ``text`` has words besides its math.

    >>> is_prose("72 clips"), is_prose("2xy+1"), is_prose("5\\\\text{ cm}"), is_prose("72 cm")
    (True, False, False, True)
    """
    return any(_is_word(match.group(0)) for match in _LETTERS.finditer(_masked(text)))


def _math_in_prose(text: str) -> tuple[int, int]:
    """The span of ``text`` that holds its math: the last ``$..$`` (or ``\\(..\\)``,
    ``\\[..\\]``) without words in prose that has one, else all of it."""
    if not is_prose(text):
        return 0, len(text)
    segments = [next(span for span in (m.span(g) for g in range(1, 5)) if span[0] >= 0)
                for m in _MATH_SEGMENT.finditer(text)]
    segments = [(s, e) for s, e in segments if not is_prose(text[s:e])]
    return segments[-1] if segments else (0, len(text))


def _after_equals(text: str, start: int, end: int) -> int:
    """Where the value of ``text[start:end]`` starts: after the last ``=`` of a chain, or at
    the symbol of a final ``x = value``."""
    equals = None
    for equals in _EQUALS.finditer(text, start, end):
        pass
    if equals is None:
        return start
    symbol = _LONE_SYMBOL.search(text, start, equals.start())
    return symbol.start() if symbol else equals.end()


def value_span(text: str) -> tuple[int, int] | None:
    """The (start, end) in ``text`` of the value it states (module doc), or None.

    >>> [text[slice(*value_span(text))].strip() for text in ["So she sold 72 clips", "10 + 46 = 56",
    ...  "So x = 4", "The total is $\\\\frac{1}{2}$ cup", "2x+3x", "3\\\\sqrt{2} \\\\text{ units}"]]
    ['72', '56', 'x = 4', '\\\\frac{1}{2}', '2x+3x', '3\\\\sqrt{2} \\\\text{ units}']
    >>> value_span("Paris"), value_span("6+3*2-6=")
    (None, None)
    """
    start, end = _math_in_prose(text)
    conclusion = None
    for conclusion in _CONCLUSION.finditer(text, start, end):
        pass
    start = _after_equals(text, conclusion.end() if conclusion else start, end)
    if is_prose(text[start:end]):
        run = _last_math_run(text, start, end)
        if run is None:
            return None
        start, end = run
    if not text[start:end].strip():
        return None
    return start, end


def _last_math_run(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The last run of ``text[start:end]`` between prose words that holds a digit."""
    words = [(s + start, e + start) for s, e in _words(text[start:end])]
    bounds = [start] + [i for span in words for i in span] + [end]
    gaps = list(zip(bounds[::2], bounds[1::2]))
    for k in range(len(gaps) - 1, -1, -1):
        s, e = gaps[k]
        if any(c.isdigit() for c in text[s:e]):
            day = _DAY_OF_MONTH.match(text, s, e)
            if day and k and re.fullmatch(_MONTH, text[slice(*words[k - 1])], re.IGNORECASE):
                s = day.end()  # "on July 20, 1969": the year
            return s, e
    return None


def value(text: str) -> str | None:
    """The value ``text`` states (module doc): what a numeric verifier reads.

    >>> value("So she sold 72 clips."), value("48 + 24 = 72 clips in all"), value("1,000 dollars")
    ('72', '72', '1,000')
    >>> value("x = 4"), value("Paris"), value("$72"), value("It landed on July 20, 1969.")
    ('x = 4', None, '72', '1969')
    """
    text = clean(text)
    return _value_at(text, value_span(text))


def _value_at(text: str, span: tuple[int, int] | None) -> str | None:
    """The value at ``span`` of ``text``, cleaned (``value``)."""
    if span is None:
        return None
    found = clean(text[span[0]:span[1]].strip().strip(",;:"))
    if found.startswith("\\$"):  # "\\boxed{\\$18}": an escaped dollar sign
        found = found[2:]
    elif found.count("$") % 2:
        found = found.replace("$", "")
    found = _SPACE_BEFORE_UNIT.sub(" ", found)  # "72\\,\\text{clips}" -> "72 \\text{clips}"
    return found.replace("−", "-").strip() or None


def _near_words(text: str, start: int, end: int) -> tuple[list[str], list[str]]:
    """The words of ``text`` just before ``start`` and just after ``end``, in their clause."""
    before = text[max(0, start - 80):start]
    cut = None
    for cut in _CLAUSE_START.finditer(before):
        pass
    before = before[cut.end():] if cut else before
    after = text[end:end + 80]
    stop = _CLAUSE_START.search(after)
    after = after[:stop.start()] if stop else after
    return _WORDS_NEAR.findall(before), _WORDS_NEAR.findall(after)


def hedged_at(text: str, start: int, end: int) -> bool:
    """Whether "or" is in ``text[start:end]`` or within two words either side of it.

    >>> text = "It is seventy-one or \\\\boxed{72}."
    >>> hedged_at(text, 28, 30), hedged_at("Whether odd or even, the total is 72", 34, 36)
    (True, False)
    >>> hedged_at("The answer is B. Or C.", 14, 15), hedged_at("It is B. Origin: C.", 6, 7)
    (True, False)
    """
    before, after = _near_words(text, start, end)
    inside = _WORDS_NEAR.findall(text[start:end])
    return (any(w.lower() in _HEDGE_WORDS for w in before[-2:] + inside + after[:2])
            or _OR_NEXT.match(text, end) is not None)


def negated_at(text: str, start: int, end: int) -> bool:
    """Whether "not", "never" or "n't" is among the three words before ``text[start:end]``,
    or it is followed by "is not" / "isn't".

    >>> negated_at("The answer is not \\\\boxed{72}", 25, 27), negated_at("It isn't 72", 9, 11)
    (True, True)
    >>> negated_at("72 is not the answer", 0, 2), negated_at("We do not need y, so x is 72", 26, 28)
    (True, False)
    """
    before, after = _near_words(text, start, end)
    if any(_NEGATION.search(word) for word in before[-3:]):
        return True
    after = [word.lower() for word in after[:2]]
    return after[:2] in (["is", "not"], ["was", "not"]) or bool(after and after[0].endswith("n't"))


def _key(text: str) -> str:
    """``text`` up to spacing and markup, to tell two answers apart."""
    text = re.sub(r"\\(?:left|right|displaystyle|[,;!: ])|\s|\$", "", text)
    return re.sub(r"\\[dt]frac", r"\\frac", text).rstrip(".")


def _differ(text: str, spans: list[tuple[int, int]]) -> bool:
    """Whether the answers at ``spans`` are not all one (each distinct text read once)."""
    last, seen = None, set()
    for start, end in reversed(spans if len(spans) > 1 else []):
        raw = text[start:end]
        if raw in seen:
            continue
        seen.add(raw)
        key = _key(value(raw[-MAX_VALUE_WINDOW:]) or clean(raw))
        if last is not None and key != last:
            return True  # stops at the first difference: a long list costs no more
        last = key
    return False


def _read(text: str, spans: list[tuple[int, int]], how: str) -> Extracted | None:
    """The answer at the last of ``spans``: its text, value and flags (module doc)."""
    if not spans:
        return None
    start, end = spans[-1]
    answer = clean(text[start:end])
    if not answer:
        return None
    at = max(start, text.find(answer, start, end))  # clean only trims the edges
    # A value is short and the prose that states it near: only the answer's tail is read.
    tail = max(at, at + len(answer) - MAX_VALUE_WINDOW)
    found = value_span(text[tail:at + len(answer)])
    prose = found is not None and is_prose(text[tail:at + len(answer)])
    # Hedges and negations are read around the value where prose holds one.
    focus = (tail + found[0], tail + found[1]) if prose else (start, end)
    date = _DATE_BEFORE.search(text, max(0, focus[0] - 20), focus[0]) if prose else None
    focus = (date.start(), focus[1]) if date else focus  # "not on July 20, 1969"
    crossed = not _CROSS_MARKS.isdisjoint(text[at + len(answer):end])  # "B ❌"
    return Extracted(answer, _value_at(text[tail:at + len(answer)], found), start, end, how,
                     hedged=_differ(text, spans) or hedged_at(text, *focus),
                     negated=crossed or negated_at(text, *focus)
                     or bool(_NEGATION.search(answer.split(None, 1)[0])))


# The spans each named format reads its answer from (the last one is the answer).
_FINDERS = {
    "boxed": boxes,
    "tag": tags,
    "gsm8k": gsm8k_marks,
    "last_number": lambda text: [span] if (span := last_number(text)) else [],
    "bare": lambda text: [(0, len(text))],
}


def _answer_part(reply: str) -> int | None:
    """Where the answer part of ``reply`` starts: after its last ``</think>``; None if a
    ``<think>`` never closes."""
    closed = reply.rfind("</think>")
    if closed >= 0:
        return closed + len("</think>")
    return None if "<think>" in reply else 0


def _auto(text: str) -> Extracted | None:
    """The first rule of ``auto`` that finds an answer (module doc)."""
    for how, find in (("boxed", boxes), ("tag", tags), ("gsm8k", gsm8k_marks)):
        found = _read(text, find(text), how)
        if found is not None:
            return found
    spans = phrases(text)
    courtesy = _before_courtesy(text)
    if courtesy < 0:  # a second answer in the closing courtesy: read, but hedged
        found = _auto_in(text, spans, _check_section(text, spans))
        return None if found is None else replace(found, hedged=True)
    # A check after the answer is not the answer, nor a closing courtesy.
    return _auto_in(text, spans, min(_check_section(text, spans), courtesy))


def _auto_in(text: str, spans: list[tuple[int, int]], cut: int) -> Extracted | None:
    """``_auto`` past the tags: the answer of ``text`` read from phrases and lines before
    ``cut``."""
    body = text[:cut]
    line_end = body.find("\n", spans[-1][1]) if spans else -1
    # A sum on a later line: the reply went on working; a phrase with nothing after it on its
    # line ("**Final Answer:**" over a display-math block) labels the lines below it
    worked_on = line_end >= 0 and (_WORKING.search(body, line_end) is not None
                                   or not _ALNUM.search(body, *spans[-1]))
    if spans and not worked_on:
        found = _read(text, spans, "phrase")
        if found is not None:
            return found
    explained = _ANSWER_THEN_EXPLANATION.match(text)
    working = None if explained else _ANSWER_THEN_WORKING.match(text)
    if working is not None and any(span[1] <= working.end(1) for span in spans):
        explained = working  # "**Answer:** 72" on the first line, then "**Working:** ..."
    first = explained.group(1).rstrip(" \t*_") if explained else ""
    if _ALNUM.search(first) and not first.endswith(("?", ":")):
        # "B\n\nExplanation: ...", "**Answer: 72**\n\n**Reasoning:** ...": the first line
        said = [span for span in spans if span[1] <= explained.end(1)]
        return _read(text, said, "phrase") if said else _read(text, [explained.span(1)],
                                                              "last_line")
    line = last_line(body)
    if line is None:
        return None
    cell = _last_cell(body, *line)
    return _read(text, [cell or line], "last_line")


def _check_section(text: str, spans: list[tuple[int, int]]) -> int:
    """Where the check that ends ``text`` starts ("Check: 48 + 24 = 72 ✓"): the first check
    label after the last phrase, with an answer before it; ``len(text)`` where there is none."""
    after = spans[-1][1] if spans else 0
    for label in _CHECK_LABEL.finditer(text, after):
        if _ALNUM.search(text, 0, label.start()):
            return label.start()
    return len(text)


def _before_courtesy(text: str) -> int:
    """Where the closing courtesy that ends ``text`` starts ("Let me know if ..."), read over
    at most COURTESY_LINES lines; ``len(text)`` where it has none, or nothing before it; -1
    where it names a value of its own ("Let me know if 6 is better"): a hedge.

    >>> text = "Result: 72 clips\\n\\nLet me know if anything is unclear."
    >>> text[:_before_courtesy(text)].strip()
    'Result: 72 clips'
    """
    end = len(text)
    for _ in range(COURTESY_LINES):
        line = last_line(text[:end])
        if line is None:
            return end
        found = _COURTESY.search(text, line[0], line[1])
        if found is None or not _ALNUM.search(text, 0, found.start()):
            return end
        said = [part for part in re.split(r"(?<=[.!?])\s+", text[found.start():end].strip())
                if part.strip()]
        if not all(_COURTESY.match(part) for part in said):
            return end  # "I hope this helps! The answer is 72."
        if _NAMES_A_VALUE.search(text, found.end(), end):
            return -1  # "Let me know if it is Toronto": a second answer, not a courtesy
        end = found.start()
    return end


def has_table(text: str) -> bool:
    """Whether ``text`` holds a markdown table (a delimiter row such as ``|---|---|``).

    >>> has_table("| a | b |\\n|---|---|\\n| 1 | 2 |"), has_table("7+8=15|4+3+1=8|85")
    (True, False)
    """
    return _TABLE_RULE.search(text) is not None


def _last_cell(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The (start, end) of the last non-empty cell of ``text[start:end]`` where that line is a
    row of a markdown table the reply has ("| Final answer | 72 |" -> "72"); else None."""
    row = text[start:end].strip()
    if not (row.startswith("|") and row.endswith("|") and row.count("|") >= 3):
        return None
    rule = None
    for rule in _TABLE_RULE.finditer(text, 0, start):
        pass
    if rule is None:
        return None  # no delimiter row above it: "|x| + |y|" is math, not a table
    column = _answer_column(text, rule.start(), start, end)
    if column is not None:
        return column
    close = text.rindex("|", start, end)
    while close > start:
        open_ = text.rfind("|", start, close)
        if open_ < 0:
            return None
        if _ALNUM.search(text, open_ + 1, close):
            return open_ + 1, close
        close = open_
    return None


def _answer_column(text: str, rule: int, start: int, end: int) -> tuple[int, int] | None:
    """The (start, end) of the cell of the row ``text[start:end]`` under the table's answer
    column ("| Answer | Unit |" over "| 72 | clips |" -> "72"), the header being the line
    above the delimiter row at ``rule``; None where no header cell names the answer."""
    head_start = text.rfind("\n", 0, max(0, rule - 1)) + 1
    header = text[head_start:max(head_start, rule - 1)].strip().strip("|").split("|")
    named = [k for k, cell in enumerate(header) if _ANSWER_COLUMN.fullmatch(cell)]
    if len(named) != 1:
        return None
    bars = [k for k in range(start, end) if text[k] == "|"]
    if len(bars) < named[0] + 2:
        return None
    a, b = bars[named[0]] + 1, bars[named[0] + 1]
    return (a, b) if _ALNUM.search(text, a, b) else None


def final_answer(reply: str, fmt: str = "auto") -> Extracted | None:
    """The final answer of ``reply`` as ``fmt`` reads it (module doc), or None.

    >>> final_answer("48+24=72, so she sold \\\\boxed{72} clips.").text
    '72'
    >>> found = final_answer("Natalia sold 48 + 24 = 72 clips altogether.")
    >>> found.text, found.value, found.how
    ('Natalia sold 48 + 24 = 72 clips altogether', '72', 'last_line')
    >>> final_answer("It is seventy-one or \\\\boxed{72}.").hedged
    True
    >>> final_answer("a\\u200b7") is None  # an invisible character
    True
    """
    if fmt not in FORMATS:
        raise ValueError(f"answer format must be one of {FORMATS}, got {fmt!r}")
    if not isinstance(reply, str):
        return None
    reply = _GLYPH_SELECTOR.sub(" ", _EMOJI_JOINER.sub(" ", reply))  # "✔️": one glyph
    if _INVISIBLE.search(reply):
        return None
    offset = _answer_part(reply)
    if offset is None:
        return None
    text = reply[offset:]
    if fmt == "auto":
        found = _auto(text)
    else:
        found = _read(text, _FINDERS[fmt](text), fmt)
    if found is None:
        return None
    return replace(found, start=found.start + offset, end=found.end + offset)
