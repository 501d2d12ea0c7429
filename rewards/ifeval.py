"""IFEval's 25 verifiable instructions, with IFEval's own semantics ("ifeval").

A task's answer is an IFEval row's instruction list and its arguments::

    {"instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words"],
     "kwargs": [{}, {"num_words": 50, "relation": "less than"}]}

(``"prompt"`` may be given too; no checker needs it). The reward (``ifeval_following``,
registered as the verifier ``"ifeval"``) is the fraction of instructions followed,
IFEval's instruction-level *strict* accuracy for that prompt (``follow_instructions``
gives the list; ``all`` of it is the prompt-level score). An
empty or blank response follows no instruction, as in IFEval. IFEval's "loose" score,
which also credits the response without its first or last line or without asterisks,
is an evaluation upper bound and not used as a reward.

Each instruction id (e.g. ``"length_constraints:number_words"``) has one checker in
``CHECKERS``, written from the reference implementation in Google's IFEval as
lm-evaluation-harness ships it (``lm_eval/tasks/ifeval/instructions.py``), quirks
included: "less than" is ``<`` and "at least" is ``>=``; a word is a run of ``\\w``
(nltk's ``RegexpTokenizer(r"\\w+")``), so "state-of-the-art" is 4 words; keywords are
matched as case-insensitive regular expressions, anywhere (a substring), while
forbidden words are whole words; bullets are lines starting with ``*`` or ``-``; JSON
may be fenced in ```` ``` ````; a ``LangDetectException`` counts as the right language.
tests/rewards/test_ifeval_agreement.py checks every kind against lm-eval's checkers.

Differences, all where IFEval itself would do something unusable in a reward:

- a missing or falsy argument (IFEval drops ``None``, ``0`` and ``""``) is a caller
  error (``ValueError``), where IFEval draws a random value; so is an unknown relation
  or id, and a letter that is not one ASCII letter;
- a keyword that is not a valid regular expression is matched literally (IFEval raises);
- language detection is seeded (``langdetect`` is random otherwise: the same text
  could score differently twice);
- a response longer than ``MAX_CHARS`` (32,000) characters follows no instruction, so
  that no checker's cost grows without bound (a few thousand words of English, more
  than IFEval's length instructions ask for). Below it every checker is linear; the costliest,
  ``capital_word_frequency``, tokenises only the sentences with a capital letter (its
  result is the same), so a reply of 64k ``!`` costs milliseconds, not 9 s.

One addition, for tasks that ask for a sentence on a topic (k2rl/ShortWriting-v1): an
answer may hold ``"sentence": {"about": [...], "min_words": n, "request": [...]}``, and a
reply that is not a sentence on the topic scores 0 whatever it follows
(`rewards.sentence.is_sentence_about`). IFEval's checks read no topic:
a bare "Thank you." follows "finish with 'Thank you.'" and "fewer than 8 words" at once, and
a policy rewarded by them alone learns to write that (it did: README, real-model run).

Two kinds need nltk's Punkt sentence model, as IFEval does: ``number_sentences``
(``count_sentences``) and ``capital_word_frequency`` (``nltk.word_tokenize``). With nltk
and its ``punkt_tab`` data installed, these are IFEval's exactly. Without them, a
documented fallback is used: IFEval's own regex sentence splitter
(``instructions_util.split_into_sentences``) and a Treebank-like regex tokeniser, which
differ from Punkt on some abbreviations and contractions (the agreement test reports by
how much). The language kinds need ``langdetect`` (``pip install langdetect``); nothing
else is needed beyond the standard library.
"""

from __future__ import annotations

import collections
import json
import re
from typing import Any, Callable

from rewards.sentence import is_sentence_about

Checker = Callable[[str, dict[str, Any]], bool]

LESS_THAN, AT_LEAST = "less than", "at least"
# A longer response follows no instruction (module doc): it bounds every checker's cost.
MAX_CHARS = 32_000
CONSTRAINED_RESPONSES = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


class MissingArgument(ValueError):
    """An instruction's kwargs lack an argument its check needs."""


def _arg(kwargs: dict[str, Any], name: str) -> Any:
    """``kwargs[name]``, which IFEval drops (and draws at random) when it is falsy."""
    value = kwargs.get(name)
    if not value:
        raise MissingArgument(f"missing argument {name!r} (got {kwargs!r})")
    return value


def _compare(count: int, threshold: int, relation: str) -> bool:
    """IFEval's two relations: "less than" is ``<``, "at least" is ``>=``."""
    if relation == LESS_THAN:
        return count < threshold
    if relation == AT_LEAST:
        return count >= threshold
    raise ValueError(f"relation must be {LESS_THAN!r} or {AT_LEAST!r}, got {relation!r}")


def _regex(pattern: str) -> str:
    """IFEval uses keywords as regular expressions; one that is not valid is taken literally."""
    try:
        re.compile(pattern)
    except re.error:
        return re.escape(pattern)
    return pattern


# --- tokenisation: nltk's when it is installed, else IFEval's regex splitter ------------

_punkt = None


def _punkt_tokenizer():
    """nltk's English Punkt model (what IFEval's count_sentences loads), or None."""
    global _punkt
    if _punkt is None:
        tokenize = _nltk_tokenize()
        if tokenize is None:
            return None
        try:
            _punkt = tokenize.PunktTokenizer("english")
        except (LookupError, OSError, ValueError):
            return None  # not cached: the data may be installed later
    return _punkt


# IFEval's regex sentence splitter (instructions_util.split_into_sentences, Apache-2.0,
# Google Research), used when Punkt is not available.
_ALPHABETS = "([A-Za-z])"
_PREFIXES = "(Mr|St|Mrs|Ms|Dr)[.]"
_SUFFIXES = "(Inc|Ltd|Jr|Sr|Co)"
_STARTERS = (r"(Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|He\s|She\s|It\s|They\s|Their\s|Our\s|We\s|But\s"
             r"|However\s|That\s|This\s|Wherever)")
_ACRONYMS = "([A-Z][.][A-Z][.](?:[A-Z][.])?)"
_WEBSITES = "[.](com|net|org|io|gov|edu|me)"
_DIGITS = "([0-9])"
_MULTIPLE_DOTS = r"\.{2,}"


def split_into_sentences(text: str) -> list[str]:
    """IFEval's regex sentence splitter.

    >>> split_into_sentences("Mr. Smith went home. He slept! Did he?")
    ['Mr. Smith went home.', 'He slept!', 'Did he?']
    """
    text = " " + text + "  "
    text = text.replace("\n", " ")
    text = re.sub(_PREFIXES, "\\1<prd>", text)
    text = re.sub(_WEBSITES, "<prd>\\1", text)
    text = re.sub(_DIGITS + "[.]" + _DIGITS, "\\1<prd>\\2", text)
    text = re.sub(_MULTIPLE_DOTS, lambda match: "<prd>" * len(match.group(0)) + "<stop>", text)
    if "Ph.D" in text:
        text = text.replace("Ph.D.", "Ph<prd>D<prd>")
    text = re.sub(r"\s" + _ALPHABETS + "[.] ", " \\1<prd> ", text)
    text = re.sub(_ACRONYMS + " " + _STARTERS, "\\1<stop> \\2", text)
    text = re.sub(_ALPHABETS + "[.]" + _ALPHABETS + "[.]" + _ALPHABETS + "[.]",
                  "\\1<prd>\\2<prd>\\3<prd>", text)
    text = re.sub(_ALPHABETS + "[.]" + _ALPHABETS + "[.]", "\\1<prd>\\2<prd>", text)
    text = re.sub(" " + _SUFFIXES + "[.] " + _STARTERS, " \\1<stop> \\2", text)
    text = re.sub(" " + _SUFFIXES + "[.]", " \\1<prd>", text)
    text = re.sub(" " + _ALPHABETS + "[.]", " \\1<prd>", text)
    if "”" in text:
        text = text.replace(".”", "”.")
    if '"' in text:
        text = text.replace('."', '".')
    if "!" in text:
        text = text.replace('!"', '"!')
    if "?" in text:
        text = text.replace('?"', '"?')
    text = text.replace(".", ".<stop>").replace("?", "?<stop>").replace("!", "!<stop>")
    text = text.replace("<prd>", ".")
    sentences = [s.strip() for s in text.split("<stop>")]
    if sentences and not sentences[-1]:
        sentences = sentences[:-1]
    return sentences


def sentences(text: str) -> list[str]:
    """The sentences of ``text``: nltk Punkt's if installed, else IFEval's regex splitter."""
    punkt = _punkt_tokenizer()
    if punkt is not None:
        return punkt.tokenize(text)
    return [s for s in split_into_sentences(text) if s]


# Treebank-like tokens (the fallback for nltk.word_tokenize): "n't" and clitics apart,
# a word with its inner dots/hyphens/apostrophes, or one other character.
_FALLBACK_TOKEN = re.compile(
    r"[^\W_]+(?=n't\b)|n't\b|'(?:s|m|d|ll|re|ve)\b|[^\W_]+(?:[.\-'’][^\W_]+)*\.?|\S",
    re.IGNORECASE,
)


def _nltk_tokenize():
    """The ``nltk.tokenize`` module, or None if nltk is not installed."""
    try:
        import nltk.tokenize
    except ImportError:
        return None
    return nltk.tokenize


def word_tokens(text: str, capitals_only: bool = False) -> list[str]:
    """``nltk.word_tokenize(text)`` (IFEval's tokens for capital words), or a fallback:
    nltk's word tokenizer over IFEval's regex sentences if Punkt's data is missing, a
    Treebank-like regex if nltk is.

    ``capitals_only``: the tokens of the sentences with a capital letter only, which are
    all the all-capital tokens there are (a token's letters are its sentence's). nltk's
    word tokenizer costs about 0.1 ms a sentence, so 64k ``!`` (64k sentences) took 9 s;
    skipping the sentences that cannot count keeps it to milliseconds.
    """
    tokenize = _nltk_tokenize()
    if tokenize is None:
        return _FALLBACK_TOKEN.findall(text)
    punkt = _punkt_tokenizer()
    # What nltk.word_tokenize does: Punkt's sentences, then the Treebank-style tokenizer.
    parts = punkt.tokenize(text) if punkt is not None else sentences(text)
    if capitals_only:
        parts = [part for part in parts if part != part.lower()]
    tokenizer, tokens, seen = tokenize.NLTKWordTokenizer(), [], {}
    for part in parts:  # a sentence repeated ("A! A! A! ...") is tokenised once
        if part not in seen:
            seen[part] = tokenizer.tokenize(part)
        tokens.extend(seen[part])
    return tokens


def count_words(text: str) -> int:
    """IFEval's word count: runs of ``\\w`` (nltk ``RegexpTokenizer(r"\\w+")``).

    >>> count_words("state-of-the-art, don't"), count_words("Привет мир")
    (6, 2)
    """
    return len(re.findall(r"\w+", text))


def detect_language(text: str) -> str | None:
    """``langdetect``'s language code for ``text`` (seeded), or None if it cannot tell."""
    try:
        from langdetect import DetectorFactory, LangDetectException
        from langdetect.detector_factory import init_factory
    except ImportError as error:
        raise ImportError("IFEval's language instructions need langdetect: "
                          "pip install langdetect") from error
    init_factory()
    from langdetect import detector_factory

    detector = detector_factory._factory.create()
    detector.seed = 0 if DetectorFactory.seed is None else DetectorFactory.seed
    try:
        detector.append(text)
        return detector.detect()
    except LangDetectException:
        return None


# --- the 25 checkers -------------------------------------------------------------------

def keyword_existence(text: str, kwargs: dict[str, Any]) -> bool:
    """keywords:existence — every keyword occurs (case-insensitive regex, anywhere)."""
    return all(re.search(_regex(k), text, re.IGNORECASE) for k in _arg(kwargs, "keywords"))


def keyword_frequency(text: str, kwargs: dict[str, Any]) -> bool:
    """keywords:frequency — occurrences of ``keyword`` vs ``frequency`` by ``relation``."""
    keyword = _arg(kwargs, "keyword").strip()
    count = len(re.findall(_regex(keyword), text, re.IGNORECASE))
    return _compare(count, _arg(kwargs, "frequency"), _arg(kwargs, "relation"))


def forbidden_words(text: str, kwargs: dict[str, Any]) -> bool:
    """keywords:forbidden_words — none of the words occurs as a whole word."""
    return not any(re.search(r"\b" + _regex(word) + r"\b", text, re.IGNORECASE)
                   for word in _arg(kwargs, "forbidden_words"))


def letter_frequency(text: str, kwargs: dict[str, Any]) -> bool:
    """keywords:letter_frequency — count of ``letter`` (any case) vs ``let_frequency``."""
    letter = _arg(kwargs, "letter")
    if len(letter) != 1 or not ("a" <= letter.lower() <= "z"):
        raise ValueError(f"letter must be one ASCII letter, got {letter!r}")
    count = collections.Counter(text.lower())[letter.lower()]
    return _compare(count, _arg(kwargs, "let_frequency"), _arg(kwargs, "let_relation"))


def response_language(text: str, kwargs: dict[str, Any]) -> bool:
    """language:response_language — langdetect says ``language`` (or cannot tell)."""
    detected = detect_language(text)
    return detected is None or detected == _arg(kwargs, "language")


def number_sentences(text: str, kwargs: dict[str, Any]) -> bool:
    """length_constraints:number_sentences — sentence count vs ``num_sentences``."""
    return _compare(len(sentences(text)), _arg(kwargs, "num_sentences"),
                    _arg(kwargs, "relation"))


def number_paragraphs(text: str, kwargs: dict[str, Any]) -> bool:
    """length_constraints:number_paragraphs — exactly n paragraphs split by ``***``."""
    paragraphs = re.split(r"\s?\*\*\*\s?", text)
    count = len(paragraphs)
    for index, paragraph in enumerate(paragraphs):
        if not paragraph.strip():
            if index in (0, len(paragraphs) - 1):
                count -= 1
            else:
                return False  # an empty paragraph between two dividers
    return count == _arg(kwargs, "num_paragraphs")


def number_words(text: str, kwargs: dict[str, Any]) -> bool:
    """length_constraints:number_words — ``\\w+`` count vs ``num_words`` by ``relation``."""
    return _compare(count_words(text), _arg(kwargs, "num_words"), _arg(kwargs, "relation"))


def nth_paragraph_first_word(text: str, kwargs: dict[str, Any]) -> bool:
    """length_constraints:nth_paragraph_first_word — n paragraphs (split by blank lines)
    and paragraph ``nth_paragraph`` starts with ``first_word``."""
    wanted, nth = _arg(kwargs, "num_paragraphs"), _arg(kwargs, "nth_paragraph")
    first_word = _arg(kwargs, "first_word").lower()
    if not 1 <= nth <= wanted:
        raise ValueError(f"nth_paragraph {nth} is beyond num_paragraphs {wanted}")
    paragraphs = re.split(r"\n\n", text)
    count = len(paragraphs) - sum(1 for p in paragraphs if not p.strip())
    if nth > count:
        return False
    paragraph = paragraphs[nth - 1].strip()
    if not paragraph:
        return False
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    found = ""
    for letter in word:
        if letter in {".", ",", "?", "!", "'", '"'}:
            break
        found += letter.lower()
    return count == wanted and found == first_word


def number_placeholders(text: str, kwargs: dict[str, Any]) -> bool:
    """detectable_content:number_placeholders — at least n ``[...]`` placeholders."""
    return _placeholders(text) >= _arg(kwargs, "num_placeholders")


def _placeholders(text: str) -> int:
    """``len(re.findall(r"\\[.*?\\]", text))`` (IFEval's count) in linear time.

    The regex retries from every ``[`` of a line with no ``]`` after it: 82 s on 30k ``[``.
    Here a line is scanned once: after a ``[`` with no ``]`` behind it, no later ``[`` of
    the line has one either.

    >>> _placeholders("[a] [b] [[c]] [d"), _placeholders("[a\\n] [" * 3 + "[x]")
    (3, 1)
    """
    count = 0
    for line in text.split("\n"):
        start = line.find("[")
        while start != -1:
            end = line.find("]", start + 1)
            if end == -1:
                break
            count += 1
            start = line.find("[", end + 1)
    return count


def postscript(text: str, kwargs: dict[str, Any]) -> bool:
    """detectable_content:postscript — a line starting with the marker (P.S., P.P.S, ...)."""
    marker = _arg(kwargs, "postscript_marker").strip()
    if marker == "P.P.S":
        pattern = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "P.S.":
        pattern = r"\s*p\.\s?s\..*$"
    else:
        pattern = r"\s*" + _regex(marker.lower()) + r".*$"
    return bool(re.findall(pattern, text.lower(), flags=re.MULTILINE))


def number_bullet_lists(text: str, kwargs: dict[str, Any]) -> bool:
    """detectable_format:number_bullet_lists — exactly n lines starting ``*`` or ``-``."""
    stars = re.findall(r"^\s*\*[^\*].*$", text, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", text, flags=re.MULTILINE)
    return len(stars) + len(dashes) == _arg(kwargs, "num_bullets")


def constrained_response(text: str, kwargs: dict[str, Any]) -> bool:
    """detectable_format:constrained_response — contains "My answer is yes./no./maybe."."""
    text = text.strip()
    return any(option in text for option in CONSTRAINED_RESPONSES)


def number_highlighted_sections(text: str, kwargs: dict[str, Any]) -> bool:
    """detectable_format:number_highlighted_sections — at least n ``*...*`` highlights
    (a ``**...**`` counts again, as in IFEval)."""
    count = sum(1 for h in re.findall(r"\*[^\n\*]*\*", text) if h.strip("*").strip())
    count += sum(1 for h in re.findall(r"\*\*[^\n\*]*\*\*", text)
                 if h.removeprefix("**").removesuffix("**").strip())
    return count >= _arg(kwargs, "num_highlights")


def multiple_sections(text: str, kwargs: dict[str, Any]) -> bool:
    """detectable_format:multiple_sections — at least n "SECTION X" splits."""
    splitter = _regex(_arg(kwargs, "section_spliter").strip())
    sections = re.split(r"\s?" + splitter + r"\s?\d+\s?", text)
    return len(sections) - 1 >= _arg(kwargs, "num_sections")


def json_format(text: str, kwargs: dict[str, Any]) -> bool:
    """detectable_format:json_format — any JSON value, possibly fenced in ```(json)."""
    text = (text.strip().removeprefix("```json").removeprefix("```Json")
            .removeprefix("```JSON").removeprefix("```").removesuffix("```").strip())
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def title(text: str, kwargs: dict[str, Any]) -> bool:
    """detectable_format:title — a non-empty ``<<title>>`` on one line."""
    return any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", text))


def two_responses(text: str, kwargs: dict[str, Any]) -> bool:
    """combination:two_responses — two different responses split by ``******``."""
    responses = text.split("******")
    valid = []
    for index, response in enumerate(responses):
        if not response.strip():
            if index not in (0, len(responses) - 1):
                return False
        else:
            valid.append(response)
    return len(valid) == 2 and valid[0].strip() != valid[1].strip()


def repeat_prompt(text: str, kwargs: dict[str, Any]) -> bool:
    """combination:repeat_prompt — starts with ``prompt_to_repeat`` (any case)."""
    return text.strip().lower().startswith(_arg(kwargs, "prompt_to_repeat").strip().lower())


def end_checker(text: str, kwargs: dict[str, Any]) -> bool:
    """startend:end_checker — ends with ``end_phrase`` (any case, outer quotes aside)."""
    return text.strip().strip('"').lower().endswith(_arg(kwargs, "end_phrase").strip().lower())


def capital_word_frequency(text: str, kwargs: dict[str, Any]) -> bool:
    """change_case:capital_word_frequency — all-capital tokens vs ``capital_frequency``."""
    count = sum(1 for word in word_tokens(text, capitals_only=True) if word.isupper())
    return _compare(count, _arg(kwargs, "capital_frequency"), _arg(kwargs, "capital_relation"))


def english_capital(text: str, kwargs: dict[str, Any]) -> bool:
    """change_case:english_capital — all capitals, and English (or undetectable)."""
    return text.isupper() and detect_language(text) in ("en", None)


def english_lowercase(text: str, kwargs: dict[str, Any]) -> bool:
    """change_case:english_lowercase — all lowercase, and English (or undetectable)."""
    return text.islower() and detect_language(text) in ("en", None)


def no_comma(text: str, kwargs: dict[str, Any]) -> bool:
    """punctuation:no_comma — no ``,`` at all."""
    return "," not in text


def quotation(text: str, kwargs: dict[str, Any]) -> bool:
    """startend:quotation — wrapped in double quotes."""
    text = text.strip()
    return len(text) > 1 and text[0] == '"' and text[-1] == '"'


CHECKERS: dict[str, Checker] = {
    "keywords:existence": keyword_existence,
    "keywords:frequency": keyword_frequency,
    "keywords:forbidden_words": forbidden_words,
    "keywords:letter_frequency": letter_frequency,
    "language:response_language": response_language,
    "length_constraints:number_sentences": number_sentences,
    "length_constraints:number_paragraphs": number_paragraphs,
    "length_constraints:number_words": number_words,
    "length_constraints:nth_paragraph_first_word": nth_paragraph_first_word,
    "detectable_content:number_placeholders": number_placeholders,
    "detectable_content:postscript": postscript,
    "detectable_format:number_bullet_lists": number_bullet_lists,
    "detectable_format:constrained_response": constrained_response,
    "detectable_format:number_highlighted_sections": number_highlighted_sections,
    "detectable_format:multiple_sections": multiple_sections,
    "detectable_format:json_format": json_format,
    "detectable_format:title": title,
    "combination:two_responses": two_responses,
    "combination:repeat_prompt": repeat_prompt,
    "startend:end_checker": end_checker,
    "change_case:capital_word_frequency": capital_word_frequency,
    "change_case:english_capital": english_capital,
    "change_case:english_lowercase": english_lowercase,
    "punctuation:no_comma": no_comma,
    "startend:quotation": quotation,
}


def check(instruction_id: str, text: str, kwargs: dict[str, Any] | None = None) -> bool:
    """Whether ``text`` follows one instruction (strict: a blank response follows none).

    >>> check("length_constraints:number_words", "three words here",
    ...       {"num_words": 3, "relation": "less than"})
    False
    >>> check("detectable_format:json_format", '```json\\n{"a": 1}\\n```')
    True
    """
    checker = CHECKERS.get(instruction_id)
    if checker is None:
        raise ValueError(
            f"unknown IFEval instruction {instruction_id!r}; known: {sorted(CHECKERS)}")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_CHARS:
        return False
    return checker(text, dict(kwargs or {}))


def follow_instructions(text: str, answer: dict[str, Any]) -> list[bool]:
    """Per instruction of ``answer`` (an IFEval row's ids and kwargs), whether ``text`` follows."""
    ids = answer["instruction_id_list"]
    kwargs = answer.get("kwargs") or [{}] * len(ids)
    if not ids or len(kwargs) != len(ids):
        raise ValueError(f"an IFEval answer needs instructions and one kwargs each: {answer!r}")
    return [check(instruction_id, text, kw) for instruction_id, kw in zip(ids, kwargs)]


def ifeval_following(responses: list[str], answers: list[dict[str, Any]]) -> list[float]:
    """Per response, the fraction of its IFEval instructions followed (strict); 0 for a reply
    that is not the sentence on a topic an answer's ``"sentence"`` asks for
    (`is_sentence_about`).

    >>> answer = {"instruction_id_list": ["punctuation:no_comma", "startend:quotation"],
    ...           "kwargs": [{}, {}]}
    >>> ifeval_following(['"red fig"', '"red, fig"', "red fig", ""], [answer] * 4)
    [1.0, 0.5, 0.5, 0.0]
    """
    if len(responses) != len(answers):
        raise ValueError(
            f"ifeval_following got {len(responses)} responses but {len(answers)} answers")
    scores = []
    for response, answer in zip(responses, answers):
        followed = follow_instructions(response, answer)
        on_topic = is_sentence_about(response, answer, split_into_sentences)
        scores.append(sum(followed) / len(followed) if on_topic else 0.0)
    return scores
