"""Verifier for answers that are numbers or expressions ("math_equiv").

Equivalence is decided by ``math_verify``: both the response and the gold
answer are parsed to SymPy and compared numerically and symbolically, so
``0.5`` matches ``1/2``, ``\\frac{1}{2}`` and ``x=1/2``, and ``1+2x`` matches
``2x+1``. ``math_verify`` (and SymPy behind it) is imported on first use, not
with the package: every process imports ``rewards`` and most never score math.

Notation is math_verify's: ``\\tfrac``/``\\dfrac``, thousands separators (``1,000``,
``1{,}000``), powers (``10^3``), surds (``2\\sqrt{2}``), LaTeX mixed numbers
(``7\\frac{1}{2}`` = 15/2, latex2sympy's ``interpret_as_mixed_fractions``) and
set/relation forms (``x>3`` = ``(3,\\infty)``, ``verify(allow_set_relation_comp=True)``)
all parse as the value they write. Two small pre-normalisations cover what it does not
read: a plain-text mixed number ``7 1/2`` is rewritten ``7\\frac{1}{2}`` (latex2sympy
reads (7 + 1/1)/2 = 4), and a ``\\,``-spaced ``1\\,000`` loses its thin spaces.

Numeric tolerance, one policy for every pair:

- the values are compared *exactly*: a decimal is the rational it writes
  (``0.333333`` is 333333/1000000), so ``0.5`` = ``1/2`` and ``4.0`` = ``4``, while
  ``0.333333`` != ``1/3``, ``0.5000001`` != ``1/2`` and ``3.0000001`` != ``3``, and an
  exact gold (``1/3``, ``\\pi``, ``\\sqrt{2}``) takes no decimal approximation;
- except that a gold written as a decimal number (``0.33``, ``3.14``) is a value given
  to the places it writes: a response matches it if it rounds (half away from zero) to
  the gold at that many places, so ``1/3`` and ``0.333`` match ``0.33``, ``\\pi``
  matches ``3.14``, and ``0.3`` or ``0.34`` do not. (So a gold ``0.5`` also takes
  ``0.54``: a decimal gold says nothing beyond its digits.)

math_verify's own float tolerance (``float_rounding``: 6 places) is not used: it made
``0.333333`` equal ``1/3`` but ``3.0000001`` differ from ``3``.

What is judged is the response's final answer (issue 47): ``math_equiv`` reads it with
``rewards.extract.final_answer`` (the last ``\\boxed{}``, an ``<answer>`` tag, ``#### x``,
"the answer is x", the last line's value: "10 + 46 = 56" is judged as ``56``, "72 clips" as
``72``), and the working before it is never scored. A reply that hedges ("71 or
\\boxed{72}", two boxes that differ), negates ("The answer is not \\boxed{72}") or holds an
invisible character scores 0. The rules below apply to that value alone.

Equivalence alone would reward copying the question: ``3*(4+5)-7`` *equals*
the answer to ``3*(4+5)-7=``, and ``2x+3x`` equals ``5x``. So a response must
also be in final form (``is_final_form``):

- the answer math_verify finds (all of a response that is bare math; the ``\\boxed{}``
  or ``$..$`` part of one with markup or words) must have no arithmetic left to do: no
  sum or product of two plain numbers (``4+5``, ``2\\cdot 3x``, ``7/2+4``), no like
  terms (``2x+3x``), no ``+0``, ``\\cdot 1`` or ``^1``, no equation other than
  ``symbol = value`` (``2x+3=11`` restates the question), no two numbers side by side
  (``4 5``), and no list of answers to a one-answer question (``4, 5``). Factored forms,
  powers and surds are final: ``2(2x+1)``, ``10^3``, ``2\\sqrt{2}``, ``(x+1)^2``;
- and the rest of what is judged may hold no number (called on a whole reply, as
  ``is_equivalent`` may be, ``3*(4+5)-7 = \\boxed{20}`` shows working; ``math_equiv``
  judges the extracted ``20``). Where the answer cannot be told apart from the text (prose
  such as "the total is 20 apples"), it may state no more numbers than the gold answer
  does (``literal_count``);
- and the response is a final value, not the question restated (``restates``): it may
  carry no operator that the gold answer does not, where an operator is a binomial
  (``\\binom``, ``\\dbinom``, ``\\choose``), a factorial (``6!``), a floor or ceiling, a
  log or exp, a trigonometric function, a sum, product, integral, limit or determinant,
  ``\\div``, a modulo, gcd/lcm, max/min, a root (``\\sqrt{16}`` for 4) or an absolute
  value (``|-3|``); a fraction of integers (or of a monomial over an integer:
  ``\\frac{6x}{3}``) must be in lowest terms with a denominator
  above 1 (``\\frac{84}{12}``, ``10/12``, ``\\frac{8}{2}`` and ``\\frac{7}{1}`` are not final,
  unless the gold writes the same fraction); no sign may apply to a sign (``-(-3)``,
  ``--3``); and where the gold is a plain number (an integer, decimal, fraction, mixed
  number, power of integers such as ``10^3`` or ``a\\times 10^k``), the answer must be one
  too (``x =``, a sign, brackets, ``\\%``, degrees and a ``\\text{}`` unit aside), so that
  no arithmetic of any kind is left, e.g. a bare ``6+3*2-6=`` that math_verify reads as 6.
  Powers stay final (``10^3`` for 1000), as do equivalent forms of a closed form that
  carries the same operators as the gold (``\\sqrt{12}`` for ``2\\sqrt{3}``).

The question's own expression (``echoes``): where ``math_equiv`` is given the questions, an
answer equal, up to formatting and order, to an expression the question asks to expand, factor,
simplify, compute, convert, express or round scores 0 (``(x-2)(x+3)`` for "Expand (x+3)(x-2)",
``0.75`` for "Express 0.75 as a fraction", ``3.14159`` for "Round 3.14159 to two places").
Environments pass their prompt as the question (``envs.base.TextEnv.score``); a caller that
passes none has only the rules above to catch an echo.

Bounded cost. Every call of ``math_equiv`` runs in a worker process with a hard limit of
``HARD_TIMEOUT_S`` seconds (``rewards.deadline``), in whatever thread it is called: SymPy
on ``9^{9^{9}}`` holds the GIL in one C call, so neither ``signal.alarm`` (main thread
only) nor a thread can stop it; the worker is killed instead, the pair scores 0 and
``rewards.deadline.TIMEOUTS["math_equiv"]`` counts it. Before that, replies that could
only be costly are rejected unparsed (``too_costly``): an exponent tower (``9^{9^{9}}``,
``2^(3^4)``), an exponent over ``MAX_EXPONENT``, a factorial of four or more digits, a
run of 30 digits. Inside the worker math_verify's own ``signal.alarm`` limit
(``TIMEOUT_S`` per parse or comparison) applies too, as the worker runs calls in its
main thread. ``is_equivalent`` itself runs in the calling process, unbounded off the main
thread: call it through ``math_equiv`` (or ``rewards.deadline.within``).
"""

from __future__ import annotations

import math
import re
import threading

from rewards.deadline import within
from rewards.extract import final_answer

# Responses are cut to their last characters before parsing: SymPy's work
# grows fast with input size, and a final answer ends a response.
MAX_CHARS = 200
# A longer run of digits is no plausible answer, and SymPy can spend seconds on one.
_LONG_NUMBER = re.compile(r"[0-9]{30}")
# Seconds math_verify may spend parsing or comparing one pair (signal.alarm
# granularity, so a whole number).
TIMEOUT_S = 1
# Seconds one pair may take in all, in the worker process, before it is killed: math_verify's
# own limits (parse the gold, parse the reply, compare) plus a margin.
HARD_TIMEOUT_S = 5.0
# Text already marked up as math is parsed as is; bare text is wrapped in $..$
# because math_verify's plain-expression parser reads "2x+1" as just "2".
_MATH_MARKUP = re.compile(r"\$|\\\(|\\\[|\\boxed")
# A number as written, counted once: a mixed number (7\frac{1}{2}), a fraction of
# integers (either notation, \tfrac and \dfrac too), a number with thousands
# separators (1,000 or 1{,}000 or 1\,000), a decimal or an integer.
_LITERAL = re.compile(
    r"[0-9]+\s*\\[dt]?frac\{\s*[0-9]+\s*\}\{\s*[0-9]+\s*\}"
    r"|\\[dt]?frac\{\s*-?[0-9]+\s*\}\{\s*-?[0-9]+\s*\}"
    r"|[0-9]+\s*/\s*[0-9]+"
    r"|(?<![0-9])[0-9]{1,3}(?:(?:,|\{,\}|\\,)[0-9]{3})+(?:\.[0-9]+)?(?![0-9])"
    r"|[0-9]*\.?[0-9]+"
)
# Plain-text mixed number "7 1/2" (not part of a longer number or fraction).
_PLAIN_MIXED = re.compile(r"(?<![\w.,/}])([0-9]+)\s+([0-9]+)\s*/\s*([0-9]+)(?![\w.,/{])")
# SI-style thin-space thousands separators, "1\,000" (math_verify reads 1 times 000).
_THIN_THOUSANDS = re.compile(r"(?<=[0-9])\\,(?=[0-9]{3}(?![0-9]))")
# Two numbers side by side ("4 5"): latex2sympy reads a mixed number 4 + 5/1 = 9.
_JUXTAPOSED = re.compile(r"[0-9.]\s+[0-9.]")
# A LaTeX command; what is left, if it has a run of two letters, is words.
_COMMAND = re.compile(r"\\[A-Za-z]+")
_WORDS = re.compile(r"[A-Za-z]{2,}")
# A gold answer written as a decimal number (markup and "x =" aside): its places are
# its precision. Read from the text: math_verify turns some decimals (0.5) into fractions.
_DECIMAL_GOLD = re.compile(r"\s*(?:[A-Za-z]\s*=\s*)?-?[0-9,]*\.([0-9]+)\s*")
_GOLD_MARKUP = re.compile(r"\$|\\[()\[\]]|\\boxed\{|\}")

# --- final values (``restates``) and costly replies (``too_costly``) ------------------

# Operators that leave work to do, by family: a response may carry one only if the gold does.
_OPERATORS = {
    "binomial": r"\\[dt]?binom(?![A-Za-z])|\\choose(?![A-Za-z])",
    "factorial": r"(?<=[0-9)}\]])\s*!(?!=)",
    "floor or ceiling": r"\\[lr](?:floor|ceil)|\\(?:operatorname\{)?(?:floor|ceil)\b|[⌊⌋⌈⌉]",
    "log": r"\\(?:log|ln|lg|exp)(?![A-Za-z])|\\operatorname\{(?:log|ln|exp)\}",
    "trigonometric": r"\\(?:arc)?(?:sin|cos|tan|cot|sec|csc)h?(?![A-Za-z])",
    "sum": r"\\sum(?![A-Za-z])",
    "product": r"\\prod(?![A-Za-z])",
    "integral": r"\\i+nt|\\oint",
    "limit": r"\\lim(?![A-Za-z])",
    "determinant": r"\\det(?![A-Za-z])|\\begin\{[vV]matrix\}",
    "division": r"\\div(?![A-Za-z])|÷",
    "modulo": r"\\[bp]?mod(?![A-Za-z])|\\operatorname\{mod\}",
    "gcd or lcm": r"\\gcd(?![A-Za-z])|\\(?:operatorname|text|mathrm)\{(?:lcm|gcd)\}",
    "max or min": r"\\(?:max|min)(?![A-Za-z])",
    "root": r"\\sqrt|√",
    "absolute value": r"\||\\[lr]?vert",
}
_OPERATOR = {family: re.compile(pattern) for family, pattern in _OPERATORS.items()}
# Sizing commands that only draw brackets: "\left(" is "(".
_SIZING = re.compile(r"\\(?:left|right|[bB]igg?[lr]?)(?![A-Za-z])")
# A sign applied to a sign: -(-3), --3, -{-3}, +-3.
_NESTED_SIGN = re.compile(r"[-+−]\s*(?:[({\[]\s*)*[-+−]")
# A fraction of integers as written: \frac{a}{b} (\dfrac, \tfrac, \frac12), a/b.
_INT_FRACTION = re.compile(
    r"\\[dt]?frac\s*\{\s*(-?[0-9]+)\s*\}\s*\{\s*(-?[0-9]+)\s*\}"
    r"|\\[dt]?frac\s*([0-9])([0-9])"
    r"|(?<![0-9.])([0-9]+)\s*/\s*([0-9]+)(?![0-9.])")
# A monomial over an integer: \frac{6x}{3}, 6x/3 (the coefficient and the denominator).
_TERM_FRACTION = re.compile(
    r"\\[dt]?frac\s*\{\s*(-?[0-9]+)\s*[A-Za-z][A-Za-z^0-9]*\s*\}\s*\{\s*([0-9]+)\s*\}"
    r"|(?<![0-9.])([0-9]+)\s*[A-Za-z][A-Za-z^0-9]*\s*/\s*([0-9]+)(?![0-9.])")
# A fraction with a decimal in it: \frac{1.5}{3}, 0.5/2, 3/1.5.
_DECIMAL_FRACTION = re.compile(
    r"\\[dt]?frac\s*\{[^{}]*\.[0-9][^{}]*\}|\\[dt]?frac\s*\{[^{}]*\}\s*\{[^{}]*\.[0-9]"
    r"|[0-9]\.[0-9]*\s*/\s*[0-9]|[0-9]\s*/\s*[0-9]*\.[0-9]")
# A plain number (module doc): what a numeric gold is, and what answers to one must be.
_INT = r"[0-9]{1,3}(?:(?:,|\{,\})[0-9]{3})+|[0-9]+"
_DECIMAL = rf"(?:{_INT})(?:\.[0-9]*)?|\.[0-9]+"
_FRAC = (r"\\[dt]?frac\s*\{\s*-?[0-9]+\s*\}\s*\{\s*-?[0-9]+\s*\}|\\[dt]?frac\s*[0-9][0-9]"
         r"|[0-9]+\s*/\s*[0-9]+")
_EXPONENT = r"\^\s*(?:\{\s*-?[0-9]+\s*\}|[0-9])"
_VALUE = (rf"(?:{_DECIMAL})\s*(?:\\times|\\cdot|\*)\s*10\s*{_EXPONENT}"  # 1.5\times 10^{3}
          rf"|[0-9]+\s*(?:{_FRAC})"  # a mixed number, 7\frac{1}{2}
          rf"|{_FRAC}|[0-9]+\s*{_EXPONENT}|{_DECIMAL}"
          # and pi, for a decimal gold: 2\pi, \frac{\pi}{2}
          r"|[0-9]*\s*\\pi|\\[dt]?frac\s*\{\s*[0-9]*\s*\\pi\s*\}\s*\{\s*[0-9]+\s*\}")
_UNIT = r"\\?%|\^\s*\{?\\circ\}?|\\circ|\\(?:text|mathrm|mbox)\s*\{[^{}0-9]*\}"
_PLAIN_NUMBER = re.compile(
    rf"\s*(?:[A-Za-z]\s*=\s*)?(?:\\\$\s*)?[-+−]?\s*"
    rf"(?:\(\s*[-+−]?\s*(?:{_VALUE})\s*\)|(?:{_VALUE}))\s*(?:(?:{_UNIT})\s*)*")
_MARKUP = re.compile(r"\$|\\[()\[\]]|\\boxed\s*\{|\\(?:displaystyle|[,;!: ])|\s")

# Costly replies: a power whose exponent holds a power (a tower), a large exponent, a
# factorial of a large number.
MAX_EXPONENT = 10_000
_POWER = re.compile(r"\^|\*\*")
_FACTORIAL_OF_LARGE = re.compile(r"[0-9]{4,}\s*\}?\s*\)?\s*!")


def _unmarked(text: str) -> str:
    """``text`` without its math markup, sizing commands and spaces."""
    return _MARKUP.sub("", _SIZING.sub("", text))


def _exponent(text: str, start: int) -> tuple[str, str]:
    """The exponent written from ``start`` (just after ``^``): a {group}, a (group) or a
    token; and what follows it."""
    while start < len(text) and text[start] == " ":
        start += 1
    if start >= len(text) or text[start] not in "{(":
        token = re.match(r"-?[0-9]+|\\?[A-Za-z]+|.?", text[start:]).group(0)
        return token, text[start + len(token):]
    closing, depth = {"{": "}", "(": ")"}[text[start]], 0
    for end in range(start, len(text)):
        depth += {text[start]: 1, closing: -1}.get(text[end], 0)
        if depth == 0:
            return text[start + 1:end], text[end + 1:]
    return text[start + 1:], ""


def too_costly(text: str) -> bool:
    """True if parsing ``text`` could take long: a tower, a huge exponent or factorial.

    >>> too_costly("9^{9^{9}}"), too_costly("2^(3^4)"), too_costly("9**9**9")
    (True, True, True)
    >>> too_costly("10^{100000}"), too_costly("12345!"), too_costly("2^{10}"), too_costly("x^2+1")
    (True, True, False, False)
    """
    if _LONG_NUMBER.search(text) or _FACTORIAL_OF_LARGE.search(text):
        return True
    for power in _POWER.finditer(text):
        exponent, after = _exponent(text, power.end())
        if _POWER.search(exponent) or _POWER.match(after.lstrip()):
            return True  # a tower: 9^{9^9}, 9**9**9
        if any(int(number) > MAX_EXPONENT for number in re.findall(r"[0-9]+", exponent)):
            return True
    return False


def _fractions(text: str) -> set[tuple[int, int]]:
    """The fractions ``text`` writes, as (numerator, denominator) pairs: of integers, and of a
    monomial over an integer (its coefficient: ``\\frac{6x}{3}`` is (6, 3))."""
    pairs = set()
    for match in [*_INT_FRACTION.finditer(text), *_TERM_FRACTION.finditer(text)]:
        numerator, denominator = [int(g) for g in match.groups() if g is not None]
        pairs.add((numerator, denominator))
    return pairs


def _is_reduced(numerator: int, denominator: int) -> bool:
    """A fraction in lowest terms whose denominator is above 1 (so not an integer)."""
    return abs(denominator) > 1 and math.gcd(numerator, denominator) == 1


def operators(text: str) -> set[str]:
    """The operator families (``_OPERATORS``) that ``text`` uses.

    >>> sorted(operators("\\\\dbinom{8}{4} + 6! + \\\\lfloor 3.2\\\\rfloor"))
    ['binomial', 'factorial', 'floor or ceiling']
    """
    text = _SIZING.sub("", text)
    return {family for family, pattern in _OPERATOR.items() if pattern.search(text)}


def restates(response: str, answer: str) -> bool:
    """True if ``response`` leaves work the gold ``answer`` does not (module doc).

    >>> [restates(r, g) for r, g in [("\\\\dbinom{8}{4}", "70"), ("6!", "720"),
    ...  ("\\\\frac{84}{12}", "7"), ("-(-3)", "3"), ("|-3|", "3"), ("100\\\\div4", "25")]]
    [True, True, True, True, True, True]
    >>> [restates(r, g) for r, g in [("70", "70"), ("\\\\frac{7}{2}", "3.5"), ("10^3", "1000"),
    ...  ("\\\\sqrt{12}", "2\\\\sqrt{3}"), ("x = -3", "-3"), ("The answer is $70$", "70")]]
    [False, False, False, False, False, False]
    """
    if operators(response) - operators(answer):
        return True
    if _NESTED_SIGN.search(_unmarked(response)) and not _NESTED_SIGN.search(_unmarked(answer)):
        return True
    if _DECIMAL_FRACTION.search(response) and not _DECIMAL_FRACTION.search(answer):
        return True
    gold_fractions = _fractions(answer)
    if any(not _is_reduced(*pair) and pair not in gold_fractions
           for pair in _fractions(response)):
        return True
    return False


def _is_plain_number_text(text: str) -> bool:
    """Whether ``text`` (markup aside) writes one plain number (module doc)."""
    text = _SIZING.sub("", text)
    text = re.sub(r"\\boxed\s*\{(.*)\}", r"\1", text.strip().strip("$"), flags=re.DOTALL)
    return _PLAIN_NUMBER.fullmatch(text) is not None


def literal_count(text: str) -> int:
    """How many numbers ``text`` writes down; a fraction or mixed number counts once.

    >>> literal_count("20"), literal_count("3*(4+5)-7"), literal_count("-1/2")
    (1, 4, 1)
    >>> literal_count("\\\\frac{1}{2}"), literal_count("2x+1"), literal_count("x")
    (1, 2, 0)
    >>> literal_count("1,000"), literal_count("7\\\\tfrac{1}{2}"), literal_count("4, 5")
    (1, 1, 2)
    """
    return len(_LITERAL.findall(text))


def normalize(text: str) -> str:
    """The pre-normalisations math_verify lacks: plain mixed numbers, thin-space thousands.

    >>> normalize("7 1/2"), normalize("-2 1/3"), normalize("1\\\\,000")
    ('7\\\\frac{1}{2}', '-2\\\\frac{1}{3}', '1000')

    Only a proper fraction makes a mixed number: "4 6/3" is left alone.
    """
    def mixed(match: re.Match) -> str:
        whole, num, den = match.groups()
        if 0 < int(num) < int(den):
            return f"{whole}\\frac{{{num}}}{{{den}}}"
        return match.group(0)

    return _THIN_THOUSANDS.sub("", _PLAIN_MIXED.sub(mixed, text))


def _timeout() -> int | None:
    """math_verify's timeouts use signal.alarm, which only the main thread may set.

    Elsewhere (a thread pool, some actor runtimes) math_verify would raise on
    every call, so there the input cap alone bounds the work.
    """
    return TIMEOUT_S if threading.current_thread() is threading.main_thread() else None


def _parse(text: str) -> list:
    """math_verify's parse of ``text``: as LaTeX math if possible, else as free text."""
    from math_verify import parse

    timeout = _timeout()
    if not _MATH_MARKUP.search(text):
        as_math = parse(f"${text}$", parsing_timeout=timeout)
        if as_math:
            return as_math
    # Free text such as "the answer is 4": math_verify finds the number itself.
    return parse(text, parsing_timeout=timeout)


def _is_words(text: str) -> bool:
    """True if ``text`` has words besides its math (two letters in a row outside commands)."""
    return _WORDS.search(_COMMAND.sub(" ", text)) is not None


def _factors(expr) -> list:
    """The factors of a (possibly nested, unevaluated) product."""
    if expr.is_Mul:
        return [factor for arg in expr.args for factor in _factors(arg)]
    return [expr]


def _is_plain_number(expr) -> bool:
    """A number written as one: an integer, fraction or decimal (a sign aside)."""
    return bool(expr.is_Number) or bool(
        expr.is_Mul and len(expr.args) == 2 and expr.args[0] == -1 and expr.args[1].is_Number)


def _term_key(term) -> tuple:
    """A term's non-numeric factors, as text: equal keys are like terms (2x, 3x)."""
    from sympy import srepr

    return tuple(sorted(srepr(f) for f in _factors(term) if not f.is_Number))


def _unevaluated(expr) -> bool:
    """True if ``expr`` (a parse that SymPy did not evaluate) has arithmetic left to do."""
    from sympy import Basic

    if not isinstance(expr, Basic):
        return False
    if expr.is_Add:
        numbers = [arg for arg in expr.args if _is_plain_number(arg)]
        keys = [_term_key(arg) for arg in expr.args if not _is_plain_number(arg)]
        if len(numbers) > 1 or any(n == 0 for n in numbers) or len(set(keys)) < len(keys):
            return True  # 4+5, x+0, 2x+3x
    elif expr.is_Mul:
        numbers = [f for f in _factors(expr) if f.is_Number and f != -1]  # -1 is a sign
        if len(numbers) > 1 or any(n == 1 for n in numbers):
            return True  # 2*3x, 1*x
    elif expr.is_Pow and expr.args[1] == 1:
        return True  # x^1
    return any(_unevaluated(arg) for arg in expr.args)


def _is_solved_relation(expr) -> bool:
    """A relation with a lone symbol on one side: ``x=4``, ``x>3``, ``3<x``."""
    return expr.lhs.is_Symbol or expr.rhs.is_Symbol


def _structurally_final(expr, answer: str) -> bool:
    """True if the parsed answer ``expr`` has no arithmetic left to do (module doc)."""
    from latex2sympy2_extended.logic import And
    from sympy import FiniteSet, Interval, Tuple
    from sympy.core.relational import Relational

    if isinstance(expr, (FiniteSet, Tuple)):
        gold = _parse(normalize(answer))
        if not (gold and isinstance(gold[0], (FiniteSet, Tuple, Interval))):
            return False  # several answers to a question that has one
    relations = (expr._unsorted_args if isinstance(expr, And)
                 else [expr] if isinstance(expr, Relational) else [])
    if not all(isinstance(r, Relational) and _is_solved_relation(r) for r in relations):
        return False  # an equation still to solve, e.g. the question restated
    return not _unevaluated(expr)


def is_final_form(response: str, answer: str, parsed: list | None = None) -> bool:
    """True if ``response`` states a result rather than work left to do (see the module doc).

    The answer math_verify finds in ``response`` (all of it, for bare math) must be
    structurally final, and nothing else in the response may be a number. Where that
    answer cannot be located in the text, the response may state no more numbers than
    the gold does. ``parsed`` is ``_parse(response)`` if the caller has it.

    >>> is_final_form("2(2x+1)", "4x+2"), is_final_form("10^3", "1000")
    (True, True)
    >>> is_final_form("2x+3x", "5x"), is_final_form("3*(4+5)-7", "20")
    (False, False)
    >>> is_final_form("the answer is \\\\boxed{2(2x+1)}", "4x+2"), is_final_form("4+5=9 so 9", "9")
    (True, False)
    """
    response = normalize(response)
    if restates(response, normalize(answer)):
        return False  # binomials, factorials, unreduced fractions, ... the gold has not
    parsed = _parse(response) if parsed is None else parsed
    if not parsed or isinstance(parsed[0], str):
        return False
    found = parsed[1] if len(parsed) > 1 and isinstance(parsed[1], str) else ""
    words = _is_words(response)
    if not words and not _MATH_MARKUP.search(response):
        found, rest = response, ""  # bare math: all of it is the answer
    elif found and found in response:
        rest = response.replace(found, " ", 1)
    else:
        rest = None  # math_verify rewrote what it found: count the numbers instead
    if rest is not None and literal_count(rest) == 0:
        if _is_plain_number_text(normalize(answer)) and not _is_plain_number_text(found):
            return False  # a number is asked for, and this is arithmetic to do
        return not _JUXTAPOSED.search(found) and _structurally_final(parsed[0], answer)
    if rest is None or words:
        return literal_count(response) <= literal_count(normalize(answer))
    return False  # numbers besides the answer: working shown


def _exact(expr):
    """``expr`` with every float replaced by the rational its decimal digits write."""
    from sympy import Basic, Float, Rational

    if not isinstance(expr, Basic):
        return expr
    floats = expr.atoms(Float)
    return expr.xreplace({f: Rational(str(f)) for f in floats}) if floats else expr


def _value(expr):
    """The number ``expr`` states (the right side of ``x = value``), or None."""
    from sympy import Basic, Eq

    if isinstance(expr, Eq) and expr.lhs.is_Symbol:
        expr = expr.rhs
    if isinstance(expr, Basic) and expr.is_number and expr.is_real:
        return expr
    return None


def _variable(expr):
    """The symbol of ``x = value``, or None."""
    from sympy import Eq

    return expr.lhs if isinstance(expr, Eq) and expr.lhs.is_Symbol else None


def _rounds_to(value, gold, places: int) -> bool:
    """True if ``value`` rounded half away from zero to ``places`` decimals is ``gold``."""
    from sympy import Abs, Rational, floor, sign

    scale = 10 ** places
    rounded = sign(value) * floor(Abs(value) * scale + Rational(1, 2)) / scale
    return bool(rounded == gold)


def _equivalent(gold: list, pred: list, gold_text: str) -> bool:
    """The numeric policy of the module doc on two parses (gold first)."""
    from math_verify import verify
    from math_verify.utils import timeout

    exact_gold = [_exact(g) for g in gold if not isinstance(g, str)]
    exact_pred = [_exact(p) for p in pred if not isinstance(p, str)]
    if not exact_gold or not exact_pred:
        return False
    # verify is not symmetric: the gold answer goes first.
    if verify(exact_gold, exact_pred, allow_set_relation_comp=True,
              timeout_seconds=_timeout()):
        return True
    decimal = _DECIMAL_GOLD.fullmatch(_GOLD_MARKUP.sub("", gold_text))
    if decimal is None:
        return False
    return timeout(timeout_seconds=_timeout())(_matches_decimal)(
        exact_pred[0], exact_gold[0], len(decimal.group(1)))


def _matches_decimal(pred, gold, places: int) -> bool:
    """True if ``pred`` rounds to the decimal ``gold`` at the ``places`` it writes."""
    value, gold_value = _value(pred), _value(gold)
    if value is None or gold_value is None or not gold_value.is_Rational:
        return False
    if len({_variable(pred), _variable(gold)} - {None}) > 1:
        return False  # y = 1/3 does not answer x = 0.33
    return _rounds_to(value, gold_value, places)


def is_equivalent(response: str, answer: str) -> bool:
    """True if ``response`` states ``answer`` (up to equivalence) in final form.

    Never raises: malformed input, parser errors and timeouts are all False.

    >>> is_equivalent("0.5", "1/2"), is_equivalent("1+2x", "2x+1")
    (True, True)
    >>> is_equivalent("3*(4+5)-7", "20"), is_equivalent("0.4", "1/2")
    (False, False)
    >>> is_equivalent("0.333333", "1/3"), is_equivalent("1/3", "0.33")
    (False, True)
    >>> is_equivalent("6+3*2-6=", "6"), is_equivalent("\\\\dbinom{8}{4}", "70")
    (False, False)
    """
    from math_verify.errors import TimeoutException

    if not isinstance(response, str) or not response.strip():
        return False
    response, answer = response[-MAX_CHARS:], str(answer)[-MAX_CHARS:]
    if too_costly(response):
        return False
    try:
        response, answer = normalize(response), normalize(answer)
        if restates(response, answer):
            return False  # checked before parsing: cheaper, and fewer inputs reach SymPy
        gold, pred = _parse(answer), _parse(response)
        if not gold or not pred or not is_final_form(response, answer, pred):
            return False  # unevaluated: echoes the question or shows working
        return _equivalent(gold, pred, answer)
    except (Exception, TimeoutException):
        # TimeoutException is a BaseException; a reward must never end a run.
        return False


def warm_up() -> None:
    """Import math_verify and SymPy and parse once (the worker's setup, off the clock)."""
    is_equivalent("\\frac{1}{2}", "0.5")


def _limited_equivalent(response: str, answer: str) -> bool:
    """``is_equivalent`` in the verifier worker, False after ``HARD_TIMEOUT_S`` (module doc)."""
    if not isinstance(response, str) or not response.strip():
        return False
    response, answer = response[-MAX_CHARS:], str(answer)[-MAX_CHARS:]
    if too_costly(response):
        return False  # not worth a round trip
    outcome = within(is_equivalent, response, answer, seconds=HARD_TIMEOUT_S, default=False,
                     setup=(warm_up,), name="math_equiv")
    return bool(outcome.value)


# --- the echo rule: the question's own expression is not its answer -------------------

# A question that asks for work on an expression; the expression, copied back, is no answer.
_ASKS_FOR_WORK = re.compile(
    r"\b(?:expand|factor|factori[sz]e|simplify|compute|calculate|evaluate|convert|express|"
    r"round|rewrite|rationali[sz]e|reduce)\b", re.IGNORECASE)
# Verbs whose object may be a plain number ("Round 3.14159", "Express 0.75 as a fraction").
_ASKS_TO_REWRITE = re.compile(r"\b(?:convert|express|round|rewrite|write)\b", re.IGNORECASE)
# The object of a verb: up to a word that starts the rest of the sentence, or its end.
_OBJECT = re.compile(r"\s*(.+?)(?=\s+(?:as|to|in|into|over|and|for|if|where|when|with|by)\b|[?,;]"
                     r"|\.(?:\s|$)|$)", re.IGNORECASE | re.MULTILINE)
# A number with nothing to do ("Compute 5"): an echo only where the question asks to rewrite it.
_BARE_NUMBER = re.compile(r"-?[0-9][0-9,]*(?:\.[0-9]+)?")
_QUESTION_MATH = re.compile(r"\$\$([^$]+)\$\$|\$([^$]+)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]")
_NOT_ECHO_KEY = re.compile(r"\\(?:left|right|displaystyle|cdot|times|[,;!: ])|[\s$(){}\[\]*]")


def question_expressions(question: str) -> list[str]:
    """The expressions ``question`` asks to expand, factor, simplify, compute, convert or
    round: its ``$..$`` math, and the object of each such verb.

    >>> question_expressions("Expand (x+3)(x-2).")
    ['(x+3)(x-2)']
    >>> question_expressions("Express 0.75 as a fraction"), question_expressions("What is 2+2?")
    (['0.75'], [])
    """
    if not isinstance(question, str) or not _ASKS_FOR_WORK.search(question):
        return []
    found = [next(g for g in match.groups() if g is not None)
             for match in _QUESTION_MATH.finditer(question)]
    rewrite = _ASKS_TO_REWRITE.search(question) is not None
    for verb in _ASKS_FOR_WORK.finditer(question):
        thing = _OBJECT.match(question, verb.end())
        text = thing.group(1).strip().strip("$") if thing else ""
        if text and not _is_words(text) and (rewrite or not _BARE_NUMBER.fullmatch(text)):
            found.append(text)
    return found


def _echo_key(text: str) -> str:
    """``text`` up to formatting and order: its characters, sorted, without spaces,
    brackets, markup and multiplication signs (``\\frac{a}{b}`` reads ``a/b``)."""
    text = re.sub(r"\\[dt]?frac\s*", "/", text)  # \frac{6x}{3} and 6x/3 share a key
    return "".join(sorted(_NOT_ECHO_KEY.sub("", text).replace("/", "")))


def echoes(response: str, question: str) -> bool:
    """True if ``response`` is, up to formatting and order, an expression the question asks
    to work on (``question_expressions``).

    >>> echoes("(x-2)(x+3)", "Expand (x+3)(x-2)"), echoes("x^2+x-6", "Expand (x+3)(x-2)")
    (True, False)
    >>> question = "Simplify $\\\\frac{6x}{3}$"
    >>> echoes("\\\\frac{6x}{3}", question), echoes("6x/3", question), echoes("2x", question)
    (True, True, False)
    """
    key = _echo_key(response)
    return any(key == _echo_key(expression) for expression in question_expressions(question))


# --- the verifier ------------------------------------------------------------------------


def graded_value(response: str, fmt: str = "auto") -> str | None:
    """The value of ``response``'s final answer (``rewards.extract``), or None where it has
    none, or hedges, negates or hides characters.

    >>> graded_value("48 + 24 = 72, so she sold \\\\boxed{72} clips."), graded_value("10 + 46 = 56")
    ('72', '56')
    >>> graded_value("The answer is not \\\\boxed{72}"), graded_value("71 or \\\\boxed{72}")
    (None, None)
    """
    found = final_answer(response, fmt)
    if found is None or not found.clear or found.value is None:
        return None
    return found.value


def math_equiv(responses: list[str], answers: list[str], questions: list[str] | None = None,
               fmt: str = "auto") -> list[float]:
    """1.0 where a response's final answer is equivalent to its answer and in final form.

    The final answer is what ``rewards.extract.final_answer`` reads (``fmt``: its format); the
    working before it is not scored. With ``questions``, an answer that copies the expression
    its question asks to work on scores 0 (``echoes``). Each pair is decided in the verifier
    worker within ``HARD_TIMEOUT_S`` (module doc).

    >>> responses = ["\\\\frac{1}{2}", "x=3", "\\\\boxed{4}", "-0.50", "5", "2+2 = \\\\boxed{4}."]
    >>> math_equiv(responses, ["0.5", "3", "4", "-1/2", "4", "4"])
    [1.0, 1.0, 1.0, 1.0, 0.0, 1.0]
    """
    if len(responses) != len(answers):
        raise ValueError(
            f"math_equiv got {len(responses)} responses but {len(answers)} answers"
        )
    questions = [None] * len(responses) if questions is None else questions
    scores = []
    for response, answer, question in zip(responses, answers, questions):
        value = graded_value(response, fmt) if isinstance(response, str) else None
        if value is None or len(value) > MAX_CHARS or (question and echoes(value, question)):
            scores.append(0.0)
        else:
            scores.append(1.0 if _limited_equivalent(value, answer) else 0.0)
    return scores
