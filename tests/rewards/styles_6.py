"""The sixth held-out set of real reply styles (issue 47).

Written by a separate author before any verifier read it; data only. Every reply here is
correct and gives exactly one final answer.

Math styles are lambdas ``(w, l, p, u) -> str``: ``w`` is the working text, ``l`` the final
answer in LaTeX, ``p`` the final answer in plain text and ``u`` a unit word (or "").
"""

from typing import Callable

HELD_OUT_6_MATH: dict[str, Callable] = {
    # GPT-4-style closing sentence followed by an offer of further help.
    "final_sentence_courtesy": lambda w, l, p, u: (
        f"{w}\n\nSo the final answer is ${l}$. Let me know if you'd like me to walk through "
        "any step in more detail!"
    ),
    # Markdown table holding the result after the working.
    "markdown_table_result": lambda w, l, p, u: (
        f"Let's work through it.\n\n{w}\n\n| | |\n|---|---|\n| **Final answer** | ${l}$ |\n"
    ),
    # Bullet summary under a bold header.
    "bullet_summary": lambda w, l, p, u: (
        f"## Solution\n\n{w}\n\n**Summary**\n- Approach: compute each quantity step by step\n"
        f"- Final answer: **{p}**\n"
    ),
    # Block quote containing a boxed answer.
    "block_quote_boxed": lambda w, l, p, u: (
        f"{w}\n\n> **Answer:** $\\boxed{{{l}}}$\n"
    ),
    # Plain "Result:" label on its own line.
    "result_label": lambda w, l, p, u: f"{w}\n\nResult: {p}",
    # Answer inside a level-3 heading.
    "answer_in_heading": lambda w, l, p, u: (
        f"Let's solve this step by step.\n\n{w}\n\n### Final Answer: ${l}$\n"
    ),
    # Display math with a \text{} label.
    "text_wrapper_display": lambda w, l, p, u: (
        f"{w}\n\n$$\n\\text{{Answer: }} {l}\n$$"
    ),
    # Qwen/DeepSeek-style boxed answer using \dfrac.
    "dfrac_boxed": lambda w, l, p, u: (
        w + "\n\nTherefore, the answer is $\\boxed{" + l.replace("\\frac", "\\dfrac") + "}$."
    ),
    # Inline \tfrac in a concluding sentence with \( \) delimiters (Phi-style).
    "tfrac_inline_parens": lambda w, l, p, u: (
        w + "\n\nThus, the result is \\( " + l.replace("\\frac", "\\tfrac") + " \\)."
    ),
    # Spaces inside the \boxed braces.
    "boxed_spaced_braces": lambda w, l, p, u: (
        f"{w}\n\nThe final answer is $\\boxed{{ {l} }}$."
    ),
    # Answer in inline code.
    "inline_code": lambda w, l, p, u: f"{w}\n\nFinal answer: `{p}`",
    # <answer> tag with an attribute and surrounding whitespace.
    "answer_tag_attr_ws": lambda w, l, p, u: (
        f"{w}\n\n<answer type=\"final\">\n  {p}\n</answer>\n"
    ),
    # Short "So, ..." conclusion.
    "so_conclusion": lambda w, l, p, u: f"{w}\n\nSo, the answer is {p}.",
    # Answer then a double-check paragraph that restates the working numbers.
    "answer_then_double_check": lambda w, l, p, u: (
        f"**Answer:** ${l}$\n\n**Working:**\n{w}\n\n**Double-check:** Going over it once more:\n"
        f"{w}\nEverything is consistent, so the answer stands."
    ),
    # Multilingual-ish label.
    "answer_final_label": lambda w, l, p, u: f"{w}\n\nAnswer (final): {p}",
    # R1-distill think block that discards an early approach before concluding.
    "r1_think_revised": lambda w, l, p, u: (
        "<think>\nOkay, let me read the problem again. My first pass gave a different number "
        "because I skipped a step, so that can't be right. Wait, let me redo it carefully.\n"
        f"{w}\nYes, that checks out now.\n</think>\n\n{w}\n\n"
        f"**Final Answer**\n\\[\n\\boxed{{{l}}}\n\\]"
    ),
    # Modern GPT-4o / Qwen3 emoji heading with display boxed math.
    "emoji_heading_display": lambda w, l, p, u: (
        f"### Step-by-step\n\n{w}\n\n---\n\n### ✅ Final Answer:\n$$\n\\boxed{{{l}}}\n$$"
    ),
}

HELD_OUT_6_UNITS: dict[str, Callable] = {
    # Bold answer with unit, then courtesy text.
    "bold_with_unit_courtesy": lambda w, l, p, u: (
        f"{w}\n\nSo the total comes to **{p} {u}**. Hope this helps!"
    ),
    # Boxed answer with the unit in \text{}.
    "boxed_text_unit": lambda w, l, p, u: (
        f"{w}\n\nThe answer is $\\boxed{{{l} \\text{{ {u}}}}}$."
    ),
    # Two-column table with value and unit columns.
    "table_value_unit": lambda w, l, p, u: (
        f"{w}\n\n| Answer | Unit |\n|:---:|:---:|\n| {p} | {u} |\n"
    ),
    # Result label with unit and a trailing note.
    "result_label_unit": lambda w, l, p, u: (
        f"{w}\n\nResult: {p} {u}\n\nLet me know if anything is unclear."
    ),
}

HELD_OUT_6_CHOICES: list[str] = [
    "The capital of France is Paris, so the correct answer is **B) Paris**.",
    "**B**",
    "Answer: B",
    "B) Paris",
    "<think>\nLondon is the capital of the United Kingdom and Rome is the capital of Italy. "
    "The capital of France is Paris, which is option B.\n</think>\n\n"
    "The correct answer is **B) Paris**.",
    "| Option | City | Capital of France? |\n|---|---|---|\n| A | London | No |\n"
    "| B | Paris | Yes |\n| C | Rome | No |\n\n**Answer: B**",
    "The answer is (B).",
    "The capital of France is Paris.\n\n$\\boxed{B}$",
    "> **B) Paris**\n\nParis has been the capital of France for most of the country's history.",
    "Correct option: **B — Paris**",
    "Paris is the capital of France. Final answer: B",
    "<answer>B</answer>",
    "## Answer\n\n**B) Paris**\n\nParis is France's capital and its largest city.",
    "So, the right choice is B. Let me know if you have any other questions!",
    "Answer (final): B) Paris",
    "Result: `B`",
    "- **A) London**: capital of the United Kingdom\n- **B) Paris**: capital of France ✅\n"
    "- **C) Rome**: capital of Italy\n\nThe correct answer is **B**.",
]

HELD_OUT_6_TEXTS: list[tuple[str, str]] = [
    ("Paris", "The capital of France is **Paris**. It is also the country's largest city."),
    ("Jupiter", "### Answer\n\nJupiter is the largest planet in our solar system."),
    (
        "George Washington",
        "The first President of the United States was George Washington, who took office "
        "in 1789.",
    ),
    ("1969", "Apollo 11 landed on the Moon in July 1969."),
    (
        "New York",
        "> The Statue of Liberty is in **New York**, on Liberty Island in New York Harbor.",
    ),
    (
        "blue",
        "On a clear day the sky is blue, because air scatters the shorter wavelengths of "
        "sunlight more strongly than the longer ones (Rayleigh scattering).",
    ),
    ("William Shakespeare", "Result: *Romeo and Juliet* was written by William Shakespeare."),
    (
        "Pacific Ocean",
        "The largest ocean on Earth is the **Pacific Ocean**, covering about a third of the "
        "planet's surface.",
    ),
    ("Canberra", "<answer>\n  Canberra\n</answer>"),
    ("oxygen", "Answer: oxygen. Plants release it as a by-product of photosynthesis."),
    ("Tokyo", "| Question | Answer |\n|---|---|\n| Capital of Japan | Tokyo |"),
    (
        "Leonardo da Vinci",
        "The *Mona Lisa* was painted by **Leonardo da Vinci** in the early sixteenth century.",
    ),
    (
        "Mount Everest",
        "So, the tallest mountain above sea level is Mount Everest. Let me know if you'd "
        "like more details!",
    ),
    ("Au", "The chemical symbol for gold is `Au`, from the Latin *aurum*."),
    (
        "Albert Einstein",
        "<think>\nThe theory of relativity, special and general, was developed by Einstein.\n"
        "</think>\n\nAlbert Einstein developed the theory of relativity.",
    ),
    ("Ottawa", "- **Country:** Canada\n- **Capital:** Ottawa"),
    ("Charles Darwin", "Answer (final): Charles Darwin wrote *On the Origin of Species*."),
]

HELD_OUT_6_COUNTDOWNS: list[str] = [
    "<answer>(8 - 3) * 4 * 2</answer>",
    "<answer> (8-3)*(4*2) </answer>",
    "We can write:\n\n$$(8 - 3) \\times 4 \\times 2 = 40$$",
    "(8 − 3) × 4 × 2 = 40",
    "Subtract 3 from 8 to get 5, multiply by 4 to get 20, then multiply by 2 to reach 40. "
    "So the expression is (8 - 3) * 4 * 2.",
    "Step 1: 8 - 3 = 5\nStep 2: 5 * 4 = 20\nStep 3: 20 * 2 = 40\n\n"
    "Final expression: (8 - 3) * 4 * 2",
    "Here is an expression that uses each number once:\n\n```\n(8 - 3) * 4 * 2\n```",
    "The answer is $\\boxed{(4 + 3 - 2) \\times 8}$.",
    "<think>\nTry 4*8 = 32, plus 3*2 = 6 gives 38, not 40. What about 4*(8+2) = 40? That "
    "leaves 3 unused, so no. Try (3*8 - 4) = 20, and 20*2 = 40. Yes, that works.\n</think>\n"
    "<answer>(3*8 - 4)*2</answer>",
    "| Step | Operation | Result |\n|---|---|---|\n| 1 | 3 * 8 | 24 |\n| 2 | 24 - 4 | 20 |\n"
    "| 3 | 20 * 2 | 40 |\n\n**Expression:** `2 * (3 * 8 - 4)`",
    "Result: 2 × 4 × (8 − 3) = 40",
    "So, one solution is $8 \\cdot (4 + 3 - 2) = 40$.",
    "Answer (final): (8 - 3) * (4 * 2) = 40\n\nDouble-check: 8 - 3 = 5, 4 * 2 = 8, and "
    "5 * 8 = 40 ✓. Each of 3, 4, 8, 2 is used exactly once.",
]

HELD_OUT_6_CODES: list[str] = [
    "```python\ndef add(a, b):\n    return a + b\n```",
    "Here's a simple implementation with type hints and a docstring:\n\n```python\n"
    "def add(a: int, b: int) -> int:\n    \"\"\"Return the sum of a and b.\n\n"
    "    >>> add(2, 3)\n    5\n    \"\"\"\n    return a + b\n```\n\n"
    "The function simply uses the `+` operator.",
    "To add two numbers, we just return `a + b`.\n\n```python\ndef add(a, b):\n"
    "    \"\"\"Add two numbers together.\"\"\"\n    return a + b\n```\n\n**Example:**\n\n"
    "```python\nprint(add(2, 3))  # Output: 5\nprint(add(-1, 1))  # Output: 0\n```",
    "```python\ndef add(a, b):\n    return a + b\n\n\nif __name__ == \"__main__\":\n"
    "    assert add(2, 3) == 5\n    assert add(-1, 1) == 0\n    print(\"All tests passed!\")\n"
    "```",
    "```py\ndef add(a, b):\n    result = a + b\n    return result\n```\n\n"
    "This stores the sum in `result` and returns it.",
    "```\ndef add(a, b):\n    return a + b\n```",
    "## Solution\n\n1. Accept two numeric arguments.\n2. Return their sum.\n\n```python\n"
    "from typing import Union\n\nNumber = Union[int, float]\n\n\n"
    "def add(a: Number, b: Number) -> Number:\n    return a + b\n```\n\n"
    "It works for both integers and floats.",
    "<think>\nThe user wants a function that adds two numbers. Just return a + b.\n</think>\n\n"
    "```python\ndef add(a, b):\n    return a + b\n```",
    "Sure! Here is the function:\n\n```python\ndef add(a, b):\n    # Return the sum of the "
    "two arguments\n    return a + b\n```\n\nFor example, `add(2, 3)` returns `5`. Let me know "
    "if you'd like a version that handles more than two numbers!",
]
