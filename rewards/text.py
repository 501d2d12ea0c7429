"""Verifiers for datasets whose answer is a short text or a choice letter.

Pure and batched like every verifier: responses and expected answers in, one reward in [0, 1]
per response out. Both read the response's final answer (``rewards.extract.final_answer``, in
the answer format ``fmt``):
"Answer: Paris", ``**Paris**``, ``\\boxed{B}``, ``<answer>B</answer>``, "The correct answer is
(B).", or the last line; a hedged or negated answer scores 0.
"""
from __future__ import annotations

import re
import unicodedata

from rewards.extract import Extracted, final_answer
from rewards.sentence import is_verb

# An option as a reply states it: "B", "(B)", "[B]", "B.", "B)", "Option B", "B. Paris",
# "(B) Paris".
# "B, Paris." and "B (Paris)" too: a comma or a bracketed note after the letter.
_CHOICE = re.compile(r"(?:(?:option|choice)\s+)?(?:\(([A-Z])\)(?:\s*[.:—–-]?\s+\S.*)?"
                     r"|\[([A-Z])\]|([A-Z])(?:(?:[.:),]|\s+[—–-])\s+\S.*|\s+\([^()]+\)|[.:)])?)",
                     re.IGNORECASE | re.DOTALL)
# A lone capital letter, as an option is named: "B, C" names two.
_LONE_LETTER = re.compile(r"(?<![A-Za-z'’])[A-Z](?![A-Za-z'’])")
# Lone letters that name no option: a hyphenated word ("V-E Day", "X-ray"), initials ("H. G.
# Wells", "J. K. Rowling") and abbreviations ("U.S.").
_NO_OPTION = re.compile(r"(?<![A-Za-z'’])[A-Z]-\w|(?<=\w-)[A-Z](?![A-Za-z'’])"
                        r"|(?<![A-Za-z'’])(?:[A-Z]\.\s?){2,}(?:[A-Z][a-z]+)?"
                        r"|(?<![A-Za-z'’])[A-Z]\.[A-Z]\b")
# A heading or label line that holds no answer itself: "## Answer", "**Final answer:**".
_LABEL_LINE = re.compile(r"[#*_\s]*(?:final\s+)?(?:answer|solution|response)[:*_\s]*",
                         re.IGNORECASE)
# Bold around an option or a text answer inside a sentence: "The answer is **B**: Paris ...".
_BOLD = re.compile(r"\*\*|__")
# "That's B — Paris", "It is (B)": a pointer before the option.
_POINTER = re.compile(r"(?:that|it|this)(?:['’]s|\s+is|\s+would\s+be)\s+", re.IGNORECASE)
# An option named last in a sentence: "I'd go with B.", "..., so (B)."
_LAST_OPTION = re.compile(r"(?:^|\s)\(?([A-H])\)?[.!]?$")
# Another option named in the text after the chosen one: "A. London, B. Paris".
_ANOTHER_OPTION = re.compile(r"\([A-Z]\)|\[[A-Z]\]|(?<![A-Za-z])[A-Z][.)](?:\s|$)")
# A sentence that ends with its answer: "The capital of France is Paris.", "That would be Paris."
_COPULA = (r"(?P<lead>(?:.*\s)?(?:is|are|was|were|(?:would|should|must|will)\s+be|stands\s+for"
           r"|refers\s+to|represents|denotes|by)\s+|(?:.*\s)?\w+'s\s+)")
# A question-and-answer label before the answer: "A: Paris".
_ANSWER_LABEL = re.compile(r"a:\s+")
# A list item's field label before its value: "- **Capital:** Ottawa" (up to three words).
_FIELD_LABEL = re.compile(r"[-*•]?\s*[a-z][a-z'’]*(?:\s+[a-z][a-z'’]*){0,2}:\s+")
# Emphasis and quotes inside a sentence: "The capital is **Paris**."
_EMPHASIS = re.compile(r"\*\*|__|`|[\"“”]")
# A remark in brackets after the answer.
_REMARK = re.compile(r"\s+\([^()]*\)$")
# A sentence that starts with it: "Paris is the capital of France.", "B is correct.", "Paris has
# been France's capital for centuries."
_PREDICATE = (r"\s+(?:is|are|was|were|(?:has|have|had)\s+been|remains|remained)"
              r"\s+(?P<predicate>.+)")
# A choice stated with a verb: "I'd say New York.", "I'll go with Paris." (not "I'd never say").
_CHOOSING = r"(?P<lead>(?:.*\s)?(?:say|pick|choose|go\s+with|guess|think))\s+"
# A clause after the answer that says more about it: "Paris, located on the Seine", "Jupiter —
# it is the largest planet": after the last comma or spaced dash, a lower-case word and more.
_CLAUSE_BREAK = re.compile(r",\s+|\s[—–-]{1,2}\s+")
_CLAUSE = re.compile(r"[a-z]\S*\s+\S")
# Sentences after an answer-first sentence that say more about the answer: a pronoun opens
# them, or a courtesy ("Let me know ...", "I hope this helps").
_ABOUT_IT = re.compile(r"[*_]*(?:it|it's|it’s|its|he|he's|she|she's|his|her|they|they're|their"
                       r"|this|that|these|those|let\s+me\s+know|i\s+hope|hope\s+this|feel\s+free)"
                       r"\b", re.IGNORECASE)
# A sentence about the answer that names another one: "It is Lyon", "It might be Lyon?".
_RESTATED = re.compile(r"[*_]*(?i:(?:it|he|she|they|this|that)(?:['’]s|\s+(?:is|was|are|were)"
                       r"|\s+(?:might|may|could|would|must|should)\s+be)\s+(?:(?:the|a|an)\s+)?)"
                       r"[*_\"“]*[A-Z0-9]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
MAX_SENTENCES_AFTER = 12  # an answer-first reply's sentences after its answer, read at most
# A reply's opening that is not a statement of its answer.
_PREAMBLE = re.compile(r"(?:let\s+me|let's|sure|okay|ok|well|hmm|so|first"
                       r"|to\s+(?:answer|find|solve)"
                       r"|here|i\s+(?:will|'ll|need|think|believe)|we\s+(?:need|can|know|have)"
                       r"|the\s+question|this\s+question|good|great)\b", re.IGNORECASE)
# A sentence that ends on a name or number after a copula, or that picks one: what a last line
# answers with ("The biggest city is Lyon.", "Some say Lyon."), so not context after an answer.
_ENDS_ON_A_NAME = re.compile(r"\b(?:is|are|was|were|be|['’]s)\s+(?:the\s+|an?\s+)?[*_\"“]*"
                             r"[A-Z0-9][^\s]*(?:\s+[A-Z][^\s]*)*[*_\"”]*$")
_CHOOSES = re.compile(r"\b(?:say|says|pick|choose|go\s+with|guess|claim|claims)"
                      r"\s+[*_\"“]*[A-Z0-9]")
# A closing courtesy: one that names a value offers another answer.
_COURTESY_START = re.compile(r"[*_]*(?:let\s+me\s+know|if\s+you|feel\s+free|i\s+hope"
                             r"|hope\s+this)\b",
                             re.IGNORECASE)
# A heading, bullet or quote mark before a reply's first sentence.
_LEAD_MARKS = re.compile(r"^[#>*\-•\s]+(?=\S)(?!\*)|^\s*[#>\-•]+\s*")
MAX_CLAUSES = 8  # clause breaks read after an answer at most
# A gold answer that is a number: read as the value of the answer too.
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
# A number in figures or words: what a sentence after a number answer may not name.
_NUMERAL = re.compile(r"[0-9]|\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven"
                      r"|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen"
                      r"|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred"
                      r"|thousand|million|billion|dozen|half|once|twice|single|couple)\b",
                      re.IGNORECASE)
_DENIAL = re.compile(r"\b(?:not|never|no|wrong|incorrect|false)\b|n't\b")


def normalise(text: str) -> str:
    """Case-, width- and whitespace-insensitive form of a short answer, one trailing period off.

    >>> normalise("  Paris. "), normalise("ＰＡＲＩＳ"), normalise("New   York")
    ('paris', 'paris', 'new york')
    """
    text = unicodedata.normalize("NFKC", text).strip().removesuffix(".").strip()
    return " ".join(text.casefold().split())


def _answer(response: str, fmt: str) -> Extracted | None:
    """The response's final answer if it commits to one."""
    found = final_answer(response, fmt) if isinstance(response, str) else None
    return found if found is not None and found.clear else None


def states(text: str, answer: str, subject: bool = True) -> bool:
    """Whether ``text`` is ``answer``, or a sentence ending "is ``answer``" (up to case, width
    and spacing).

    >>> states("Paris", "paris"), states("The capital of France is Paris", "Paris")
    (True, True)
    >>> states("Paris is the capital of France", "Paris"), states("Paris is not it", "Paris")
    (True, False)
    >>> states("It is not Paris", "Paris"), states("Paris Paris", "Paris"), states("", "")
    (False, False, False)
    >>> states("Paris, located on the Seine", "Paris"), states("I'd say Paris", "Paris")
    (True, True)
    >>> states("Paris, not London", "Paris"), states("Paris, London", "Paris")
    (False, False)
    """
    text = _EMPHASIS.sub("", text).strip()
    if _states(text, answer, subject):
        return True
    for k, cut in enumerate(_CLAUSE_BREAK.finditer(text)):  # "Au, which comes from ..."
        clause = text[cut.end():]
        if k == MAX_CLAUSES or re.search(r"\bor\b", clause) or _DENIAL.search(clause):
            return False
        if _CLAUSE.match(clause) is not None and _states(text[:cut.start()], answer, subject):
            return True
    return False


def _states(text: str, answer: str, subject: bool = True) -> bool:
    """``states`` without a clause after the answer; without ``subject``, not as the subject
    of its sentence ("Saturn is the second largest")."""
    text, answer = normalise(text), normalise(answer)
    if not answer:
        return False
    text = _REMARK.sub("", text)  # "Jupiter (the fifth planet)"
    text = text[_ANSWER_LABEL.match(text).end():] if _ANSWER_LABEL.match(text) else text
    field = _FIELD_LABEL.match(text)
    text = text[field.end():] if field and not _DENIAL.search(field.group(0)) else text
    if text == answer or re.fullmatch(f"(?:the|an?)\\s+{re.escape(answer)}", text):
        return True  # "The giraffe" for "giraffe": an article names no other answer
    # "... is the Pacific Ocean", "... discovered by Alexander Fleming in 1928"
    said = re.fullmatch(f"{_COPULA}(?P<kind>(?:the|an?)\\s+(?:[a-z]+\\s+(?:of\\s+)?)?)?"
                        f"{re.escape(answer)}(?:\\s+in\\s+[0-9]{{3,4}})?", text)
    if said is not None:  # "O stands for oxygen"; not "It is not true that it is Paris"
        return not _DENIAL.search(said.group("lead") + (said.group("kind") or ""))
    chosen = re.fullmatch(f"{_CHOOSING}{re.escape(answer)}", text)
    if chosen is not None:
        return not _DENIAL.search(chosen.group("lead"))
    if not subject:
        return False
    subject_first = re.fullmatch(f"{re.escape(answer)}{_PREDICATE}", text)
    if subject_first is not None:
        return not _DENIAL.search(subject_first.group("predicate"))
    # The answer as the subject of any verb: "Albert Einstein developed the theory of
    # relativity", "Charles Darwin wrote On the Origin of Species" (not "Paris or London ...").
    acted = re.fullmatch(f"{re.escape(answer)}\\s+(?P<verb>[a-z]+)\\s+(?P<rest>.+)", text)
    return (acted is not None and is_verb(acted.group("verb"))
            and not _DENIAL.search(acted.group("rest"))
            and not re.search(r"\bor\b", acted.group("rest")))


def exact_match(responses: list[str], answers: list, fmt: str = "auto") -> list[float]:
    """1 when the response's final answer is the answer, up to case, width and spacing.

    A number (a year, a count) is also stated by the value of a sentence that ends on it, as
    exact_int reads one: "It happened in 1969." for ``1969``.

    >>> exact_match(["Paris", "paris.", "Answer: **Paris**", "Paris or London"], ["Paris"] * 4)
    [1.0, 1.0, 1.0, 0.0]
    >>> exact_match(["It happened in 1969.", "It was 1968 or 1969.", "Not in 1969."], ["1969"] * 3)
    [1.0, 0.0, 0.0]
    """
    out = []
    for response, answer in zip(responses, answers):
        read = final_answer(response, fmt) if isinstance(response, str) else None
        found = read if read is not None and read.clear else None
        number = _NUMBER.fullmatch(str(answer).strip()) is not None
        # After an answer-first sentence, a last line with another subject is context
        subject = found is None or found.how != "last_line" or not _answers_first(response)
        out.append(float(found is not None and (
            states(found.text, str(answer), subject)
            or bold_answer(found.text) == normalise(str(answer))
            or number and _number_of(found.value) == str(answer).strip())
            # no marked answer: the first sentence's, with its own checks of what follows
            or read is not None and read.how == "last_line"
            and _states_first(response, str(answer), number)
            # a number: not where the last line reads as another ("206 ... Some have 207.")
            and not (number and found is not None
                     and _number_of(found.value) not in (None, str(answer).strip()))))
    return out


def _number_of(value: str | None) -> str | None:
    """The number a read value states, its unit off ("100 °C" -> "100"); None where the value
    is not one number.

    >>> _number_of("100 °C"), _number_of("1969"), _number_of("3 to 5"), _number_of(None)
    ('100', '1969', None, None)
    >>> _number_of("206 bones"), _number_of("7\u20e3"), _number_of("50%")
    ('206', None, '50')
    """
    found = _NUMBER.match(value.strip()) if value else None
    unit = value.strip()[found.end():] if found else ""
    if found is None or unit and not re.fullmatch(r"\s+[^\W\d_]+\.?|\s*°\s*[CFK]|\s*%", unit):
        return None  # "3 to 5", "7\u20e3" (a keycap mark): no unit
    return found.group(0)


def _states_first(response: str, answer: str, number: bool = False) -> bool:
    """Whether the reply states ``answer`` first and says more about it after: the
    answer-first reply of a chat model ("**Mount Everest**" then its height; "The smallest
    prime number is 2. It is also the only even prime. Note that 1 is not considered prime.").

    Its first sentence (or first line) states the answer; no later sentence hedges ("Or Lyon.",
    "or maybe"), denies the answer, restates it as another ("It is Lyon", "The capital is
    Lyon." after "The capital is Paris."), or is another answer on its own (a bare or bold
    line); and where the answer is a ``number``, no later sentence states another number in
    the first sentence's frame. What the later sentences say of other things ("The
    second-highest mountain, K2, reaches 8,611 m.") is context: a reply that names a second
    candidate as its answer does it in one of those forms."""
    answer_part = response.rpartition("</think>")[2]
    sentences = [s.strip() for s in _SENTENCE_END.split(answer_part.strip()) if s.strip()]
    if len(sentences) < 2 or len(sentences) > MAX_SENTENCES_AFTER + 1:
        return False
    first = _LEAD_MARKS.sub("", sentences[0]).strip().rstrip(".!")
    plain = normalise(_EMPHASIS.sub("", first))
    bare = re.sub(r"^(?:the|an?)\s+", "", plain)  # "The camel is known as ..."
    ends_on = (plain.endswith(" " + normalise(answer)) and not _DENIAL.search(plain)
               and not re.search(r"\bor\b", plain))  # "Marrakesh is a city in Morocco"
    if not (states(first, answer) or states(bare, answer) or ends_on
            or bold_answer(first) == normalise(answer)
            or number and _number_of(getattr(_answer(first, "auto"), "value", None))
            == answer.strip()):
        return False
    frame = _frame(first, answer)
    return not any(_second_answer(s, answer, frame) for s in sentences[1:])


def _answers_first(response: str) -> bool:
    """Whether the reply is several sentences and its first is an answer on its own (a bold or
    bare line) or a statement (four words or more, a verb; no preamble such as "Let me
    think.", no question, no colon): a reply that answers first, whose later sentences about
    other things ("Saturn is the second largest.") are not its answer.
    """
    part = response.rpartition("</think>")[2].strip()
    sentences = [s.strip() for s in _SENTENCE_END.split(part) if s.strip()]
    if len(sentences) < 2:
        return False
    if _bare(_LEAD_MARKS.sub("", sentences[0])):
        return True  # "**Paris**" first, then more
    first = _EMPHASIS.sub("", _LEAD_MARKS.sub("", sentences[0])).strip()
    words = re.findall(r"[A-Za-z'’]+", first)
    return (len(words) >= 4 and any(is_verb(w.lower()) for w in words)
            and not first.endswith((":", "?")) and _PREAMBLE.match(first) is None)


def _frame(sentence: str, answer: str) -> re.Pattern | None:
    """The first sentence with its answer as a blank: a later sentence that fills the blank
    with something else states another answer ("The capital is ___")."""
    text, gold = normalise(_EMPHASIS.sub("", sentence)), normalise(answer)
    at = text.find(gold)
    if at < 0 or len(text) - len(gold) < 4:
        return None
    before, after = text[:at].strip(), text[at + len(gold):].strip()
    return re.compile(f"{re.escape(before)}\\s*(?P<other>.+?)\\s*{re.escape(after)}")


def _second_answer(sentence: str, answer: str, frame: re.Pattern | None) -> bool:
    """Whether a sentence after an answer-first sentence offers another answer (see
    `_states_first`)."""
    plain = _EMPHASIS.sub("", sentence).strip()
    low = normalise(plain)
    gold = normalise(answer)
    if re.match(r"[*_>\s-]*or\b", plain, re.IGNORECASE) or re.search(
            r"\bor\s+(?:maybe|perhaps|possibly|rather|else)\b|\b(?:maybe|perhaps|possibly"
            r"|actually|correction|alternatively|not sure)\b", low):
        return True  # "Or Lyon.", "or maybe 73", "Actually, it is Lyon."
    if gold in low and re.search(f"(?:\\bnot|n't|\\bnever|\\bno)\\W+(?:\\w+\\W+){{0,2}}"
                                 f"{re.escape(gold)}|{re.escape(gold)}\\W+(?:is|was|are|were)"
                                 f"\\W+not\\b", low):
        return True  # the answer denied
    if _COURTESY_START.match(plain) and re.search(r"[0-9]|\b(?!I\b)[A-Z]", plain[1:]):
        return True  # "Let me know if it is Toronto."
    if (_ENDS_ON_A_NAME.search(plain.rstrip(".!? ")) and not _ABOUT_IT.match(plain)
            or _CHOOSES.search(plain)):
        return True  # "The biggest city is Lyon.", "Some say Lyon." (not "Its symbol is H.")
    if _RESTATED.match(plain) or _bare(plain) or _ABOUT_IT.match(plain) and _DENIAL.search(low):
        return True  # "It is Lyon.", "Lyon." or "**Lyon**" alone, "It's the one, not Lyon's."
    filled = frame.fullmatch(low.rstrip(".!")) if frame is not None else None
    return filled is not None and normalise(filled.group("other")) != gold


def _bare(sentence: str) -> bool:
    """Whether a sentence is an answer on its own: a bold line, or up to four words with no
    verb ("Lyon.", "**Lyon**", "Paris, France")."""
    text = sentence.strip().rstrip(".!")
    if re.fullmatch(r"(?:\*\*|__)[^*_]+(?:\*\*|__)", text):
        return True
    words = re.findall(r"[A-Za-z'’-]+", text)
    return 0 < len(words) <= 4 and not any(is_verb(w.lower()) for w in words) and not (
        re.search(r"[0-9]", text) and not _NUMBER.fullmatch(text))


def bold_answer(text: str) -> str | None:
    """The one bold span of ``text``'s last sentence (or of the whole text, with the sentences
    after it), normalised, where that part neither denies nor hedges ("The capital of Australia
    is actually **Canberra**."); else None.

    >>> bold_answer("The Statue of Liberty is in **New York**."), bold_answer("It's **Paris**!")
    ('new york', 'paris')
    >>> bold_answer("Not **Paris**"), bold_answer("**Paris** or **Lyon**"), bold_answer("a **b**?")
    (None, None, None)
    >>> bold_answer("It is in **New York"), bold_answer("**Paris** and **Lyon**")  # clean's end
    ('new york', None)
    """
    text = text.strip()
    ends = [m.end() for m in re.finditer(r"[.?!;](?=\s)|\n", text)]
    sentence = text[ends[-1] if ends else 0:]
    if "**" not in sentence and text.count("**") == 2:
        # The one bold span is in an earlier sentence, and what follows says more about it:
        # "The capital of France is **Paris**. It is also its largest city."
        start = max([e for e in ends if e <= text.index("**")], default=0)
        sentence = text[start:]
    marks = sentence.count("**")  # one where the closing marks ended the reply (``clean``)
    if not (marks == 2 or marks == 1 and not sentence.startswith("**")) or "?" in sentence or (
            _DENIAL.search(sentence.lower()) or re.search(r"\bor\b", sentence, re.IGNORECASE)):
        return None
    bold = sentence.split("**")[1]
    return normalise(bold) if bold.strip() and len(bold) <= 100 else None


def chosen_option(text: str) -> str | None:
    """The one option letter ``text`` states, upper-cased, or None.

    >>> [chosen_option(t) for t in ["B", "(b)", "B.", "Option B", "B. Paris", "(B) Paris"]]
    ['B', 'B', 'B', 'B', 'B', 'B']
    >>> [chosen_option(t) for t in ["A B", "(A)(B)", "A. London, B. Paris", "all of them"]]
    [None, None, None, None]
    >>> [chosen_option(t) for t in ["B, Paris", "B (Paris)", "B, C", "B (not A)", "B (C)"]]
    ['B', 'B', None, None, None]
    """
    match = _CHOICE.fullmatch(text.strip())
    if match is None:
        return None
    group = next(g for g in (1, 2, 3) if match.group(g))
    letter, rest = match.group(group), text.strip()[match.end(group):]
    if rest.lstrip().startswith((",", "(")) and _LONE_LETTER.search(rest):
        return None  # "B, C", "B (or C)": a second letter
    return None if _ANOTHER_OPTION.search(rest) else letter.upper()


def multiple_choice(responses: list[str], answers: list, fmt: str = "auto") -> list[float]:
    """1 when the response's final answer is the right option: "B", "(B)", "The answer is
    (B).", ``\\boxed{B}``, ``**B**``, "B. Paris".

    A response naming several letters, or hedging between them, scores 0, so listing every
    option cannot win.

    >>> multiple_choice(["B", "(b)", "B.", "A or B", "The answer is B"], ["B"] * 5)
    [1.0, 1.0, 1.0, 0.0, 1.0]
    """
    out = []
    for response, answer in zip(responses, answers):
        read = final_answer(response, fmt) if isinstance(response, str) else None
        found = read if read is not None and read.clear else None
        text = _BOLD.sub("", found.text) if found is not None else ""  # "**B**: Paris ..."
        letter = chosen_option(text) if found is not None else None
        if letter is None and found is not None:  # "B is correct.", "I'd go with B."
            letter = _subject_option(text) or _last_option(text)
        pointer = _POINTER.match(text)
        if letter is None and pointer is not None:  # "That's B — Paris"
            letter = chosen_option(text[pointer.end():])
        if letter is None:
            letter = _copula_option(text)  # "... is B) Paris."
        if letter is None and read is not None and not read.negated:
            letter = _first_line_option(response)  # an "or" after it is no second option
        out.append(float(letter is not None and letter == str(answer).strip().upper()))
    return out


def _copula_option(text: str) -> str | None:
    """The option a sentence names after its copula ("The capital is B) Paris.", "... is
    Mars (B)."), unless it denies it; else None."""
    said = re.fullmatch(f"{_COPULA}(?P<option>.+)", text.strip(), re.DOTALL)
    if said is None or _DENIAL.search(said.group("lead").lower()):
        return None
    option = said.group("option").rstrip(". ")
    named = re.fullmatch(r"[^()]+\(([A-H])\)", option)  # "Mars (B)"
    return named.group(1) if named else chosen_option(option)


def _first_line_option(response: str) -> str | None:
    """The option a reply's first line or sentence states ("> **B) Paris**", "The planet is
    **B) Mars**.", "... is Mars (B).", then more about it), where nothing after it names an
    option letter; else None. Read after a closing ``</think>``."""
    part = response.rpartition("</think>")[2].strip()
    label = _LABEL_LINE.match(part)
    if label is not None and "\n" in part[:label.end() + 1]:  # "## Answer" over the answer
        part = part[label.end():].strip()
    cut = re.search(r"\n|(?<=[.!?])\s+(?=[A-Z*_])", part)
    first, rest = (part[:cut.start()], part[cut.end():]) if cut else (part, "")
    first = _BOLD.sub("", first.strip(" \t>#*_")).rstrip(".! ")
    letter = _copula_option(first) or chosen_option(first)
    if letter is None or not rest.strip() or names_letter(rest) or _DENIAL.search(
            rest.lower()) or re.search(r"(?:^|[.!?]\s+)or\b|\bor\s+(?:maybe|perhaps|possibly)\b",
                                       rest, re.IGNORECASE):
        return None  # another option named, the answer denied, or "Or maybe Jupiter"
    return letter


def names_letter(text: str) -> bool:
    """Whether ``text`` names an option letter: a lone capital, not one of a hyphenated word,
    initials or an abbreviation.

    >>> names_letter("Or C."), names_letter("(V-E Day)"), names_letter("H. G. Wells wrote it")
    (True, False, False)
    >>> names_letter("the U.S. entered"), names_letter("A and B"), names_letter("an X-ray")
    (False, True, False)
    """
    return _LONE_LETTER.search(_NO_OPTION.sub(" ", text)) is not None


def _last_option(text: str) -> str | None:
    """The option letter that ends a sentence naming no other option, or None.

    >>> _last_option("I'd go with B."), _last_option("Paris is in France, so (B)")
    ('B', 'B')
    >>> _last_option("Not A but B"), _last_option("I think so")
    (None, None)
    """
    found = _LAST_OPTION.search(text.strip())
    if found is None:
        return None
    before = text.strip()[:found.start()]
    if _DENIAL.search(before.lower()):
        return None  # "It is not B"
    if _ANOTHER_OPTION.search(before) or re.search(r"(?<![A-Za-z'])[A-H](?![A-Za-z'])", before):
        return None
    return found.group(1)


def _subject_option(text: str) -> str | None:
    """The option a sentence like "B is correct" or "Hence option (B) is right" names, or None.

    >>> _subject_option("Hence option (B) is right."), _subject_option("B is not correct")
    ('B', None)
    """
    said = re.fullmatch(r"(?:(?:so|hence|thus|therefore),?\s+)?(?:option\s+)?\(?([A-Z])\)?\s+is\s+"
                        r"(?:the\s+)?(?:correct|right)\b.*",
                        normalise(text).upper(), re.IGNORECASE)
    return said.group(1).upper() if said and not _DENIAL.search(said.group(0).lower()) else None
