"""Seventh held-out set of correct model replies: typical replies of named model families.

Each entry imitates how a specific real chat model most typically answers by default (no
format instruction): Qwen2.5-7B-Instruct, Qwen2.5-Math-7B-Instruct, Qwen3-8B (thinking mode),
Llama-3.1-8B-Instruct, Llama-3.2-3B-Instruct, Gemma-2-9B-it, Gemma-3-4B-it,
Mistral-7B-Instruct-v0.3, Phi-3.5-mini-instruct, Phi-4, DeepSeek-R1-Distill-Qwen-7B,
SmolLM2-1.7B-Instruct, OLMo-2-Instruct, GPT-4o-style and Claude-style.

Written by a separate author before any verifier was read (issue 47). Every reply is correct
and gives one unambiguous final answer. The DeepSeek-R1-Distill replies begin without an
opening <think> tag, as that model's chat template puts the tag in the prompt, so only the
closing </think> appears in the generated text.

Data only: no logic, no imports beyond typing.
"""

from typing import Callable

# Math replies: (w, l, p, u) -> str. w = working text, l = final answer in LaTeX,
# p = final answer in plain text, u = unit word (unused here).
HELD_OUT_7_MATH: dict[str, Callable] = {
    "qwen2.5-7b-instruct": lambda w, l, p, u: (
        f"To solve this problem, let's break it down step by step.\n\n{w}\n\n"
        f"Therefore, the final answer is \\(\\boxed{{{l}}}\\)."
    ),
    "qwen2.5-math-7b-instruct": lambda w, l, p, u: (
        f"To solve the problem, we will follow these steps:\n\n{w}\n\n"
        f"Thus, the final answer is:\n\\[\n\\boxed{{{l}}}\n\\]"
    ),
    "qwen3-8b-thinking": lambda w, l, p, u: (
        f"<think>\nOkay, let's tackle this problem step by step. First, I need to "
        f"understand what's being asked.\n\n{w}\n\nLet me double-check the calculation "
        f"to be sure. Everything checks out, so the answer is {p}.\n</think>\n\n"
        f"To solve the problem, we proceed step by step.\n\n{w}\n\n---\n\n"
        f"### Final Answer\n\n$$\n\\boxed{{{l}}}\n$$"
    ),
    "llama-3.1-8b-instruct": lambda w, l, p, u: (
        f"## Step 1: Work through the given information\n{w}\n\n"
        f"## Step 2: State the result\nThe result of the calculation is {p}.\n\n"
        f"The final answer is: $\\boxed{{{l}}}$"
    ),
    "llama-3.2-3b-instruct": lambda w, l, p, u: (
        f"## Step 1: Understand the problem\nWe need to find the value asked for in the "
        f"question.\n\n## Step 2: Perform the calculation\n{w}\n\n"
        f"The final answer is: $\\boxed{{{l}}}$"
    ),
    "gemma-2-9b-it": lambda w, l, p, u: (
        f"Here's how to solve the problem:\n\n**Solution:**\n\n{w}\n\n"
        f"**Answer:** The answer is {p}."
    ),
    "gemma-3-4b-it": lambda w, l, p, u: (
        f"Okay, let's break this down step by step.\n\n**Solution:**\n\n{w}\n\n"
        f"**Final Answer:** $\\boxed{{{l}}}$\n\n"
        f"Do you want me to work through another problem like this one?"
    ),
    "mistral-7b-instruct-v0.3": lambda w, l, p, u: (
        f" To solve this problem, let's break it down:\n\n{w}\n\nSo, the answer is {p}."
    ),
    "phi-3.5-mini-instruct": lambda w, l, p, u: (
        f"To solve this problem, we will follow these steps:\n\n{w}\n\n"
        f"Therefore, the final answer is \\( {l} \\)."
    ),
    "phi-4": lambda w, l, p, u: (
        f"To solve the problem, we proceed as follows:\n\n{w}\n\n"
        f"Thus, the final answer is:\n\n\\[\n\\boxed{{{l}}}\n\\]"
    ),
    "deepseek-r1-distill-qwen-7b": lambda w, l, p, u: (
        f"Okay, so I have this problem here, and I need to figure it out step by step. "
        f"Let me start by reading it carefully.\n\n{w}\n\nLet me go through that once more "
        f"to make sure I didn't make a mistake. Yes, that checks out. So the answer is "
        f"{p}.\n</think>\n\n{w}\n\n**Final Answer**\n\\boxed{{{l}}}"
    ),
    "smollm2-1.7b-instruct": lambda w, l, p, u: (
        f"Let's solve this step by step.\n\n{w}\n\nThe final answer is {p}."
    ),
    "olmo-2-instruct": lambda w, l, p, u: (
        f"To solve this problem, we need to carefully work through each part.\n\n{w}\n\n"
        f"Final Answer: The final answer is ${l}$."
    ),
    "gpt-4o-style": lambda w, l, p, u: (
        f"Let's solve this step by step.\n\n### Step-by-step solution\n\n{w}\n\n---\n\n"
        f"### ✅ Final Answer:\n\\[\n\\boxed{{{l}}}\n\\]"
    ),
    "claude-style": lambda w, l, p, u: (
        f"I'll work through this step by step.\n\n{w}\n\n**Answer: {p}**"
    ),
}

# Unit replies: same signature, only used when u is non-empty ("clips", "dollars").
HELD_OUT_7_UNITS: dict[str, Callable] = {
    "qwen2.5-7b-instruct": lambda w, l, p, u: (
        f"To solve this problem, let's break it down step by step.\n\n{w}\n\n"
        f"Therefore, the total is \\(\\boxed{{{l}}}\\) {u}."
    ),
    "llama-3.1-8b-instruct": lambda w, l, p, u: (
        f"## Step 1: Work through the given information\n{w}\n\n"
        f"## Step 2: State the answer with its unit\nThe answer is {p} {u}.\n\n"
        f"The final answer is: $\\boxed{{{l}}}$"
    ),
    "gemma-2-9b-it": lambda w, l, p, u: (
        f"Here's how to solve the problem:\n\n{w}\n\n**Answer:** {p} {u}"
    ),
    "gpt-4o-style": lambda w, l, p, u: (
        f"Let's solve this step by step.\n\n{w}\n\n---\n\n"
        f"### ✅ Final Answer:\n\\[\n\\boxed{{{l} \\text{{ {u}}}}}\n\\]"
    ),
}

# Replies to "What is the capital of France? A) London B) Paris C) Rome".
HELD_OUT_7_CHOICES: list[str] = [
    # Qwen2.5-7B-Instruct
    "The capital of France is Paris. Therefore, the correct answer is:\n\nB) Paris",
    # Qwen2.5-Math-7B-Instruct
    "The capital of France is Paris. Therefore, the correct answer is \\(\\boxed{B}\\).",
    # Qwen3-8B (thinking)
    "<think>\nOkay, the user is asking for the capital of France, with three options. "
    "I remember that London is the capital of the United Kingdom and Rome is the capital "
    "of Italy. The capital of France is Paris, so the correct option is B.\n</think>\n\n"
    "The capital of France is **Paris**.\n\n**Answer: B) Paris**",
    # Llama-3.1-8B-Instruct
    "The correct answer is B) Paris.",
    # Llama-3.2-3B-Instruct
    "The capital of France is B) Paris.",
    # Gemma-2-9B-it
    "The answer is **B) Paris**. \n\nParis is the capital and most populous city of France.",
    # Gemma-3-4B-it
    "The correct answer is **B) Paris**.\n\nParis is the capital of France, famous for the "
    "Eiffel Tower and the Louvre.\n\nDo you want to try another geography question?",
    # Mistral-7B-Instruct-v0.3
    " The capital of France is Paris. So, the correct answer is B) Paris.",
    # Phi-3.5-mini-instruct
    "B) Paris\n\nParis is the capital city of France. It is known for its art, fashion, "
    "gastronomy, and culture, and it is home to landmarks such as the Eiffel Tower and "
    "the Louvre Museum.",
    # Phi-4
    "The capital of France is **B) Paris**.",
    # DeepSeek-R1-Distill-Qwen-7B
    "Okay, so I need to figure out the capital of France. The options are London, Paris, "
    "and Rome. London is the capital of the United Kingdom, and Rome is the capital of "
    "Italy. Paris is the capital of France, so the answer is B.\n</think>\n\n"
    "The capital of France is Paris.\n\n**Answer:** B) Paris",
    # SmolLM2-1.7B-Instruct
    "B) Paris",
    # OLMo-2-Instruct
    "The capital of France is Paris. The correct answer is B) Paris.",
    # GPT-4o-style
    "The correct answer is **B) Paris**.",
    # Claude-style
    "**B) Paris**\n\nParis is the capital of France, and it is also the country's largest city.",
]

# (gold, reply) pairs for short factual questions.
HELD_OUT_7_TEXTS: list[tuple[str, str]] = [
    # Qwen2.5-7B-Instruct: capital of France
    ("Paris", "The capital of France is Paris."),
    # Qwen2.5-Math-7B-Instruct: year of the first Moon landing
    ("1969", "The first crewed Moon landing took place during the Apollo 11 mission. "
             "Therefore, the year of the first Moon landing is \\(\\boxed{1969}\\)."),
    # Qwen3-8B (thinking): largest planet
    ("Jupiter", "<think>\nOkay, the user is asking which planet is the largest in our solar "
                "system. That's Jupiter, the gas giant. It's by far the biggest in both "
                "diameter and mass.\n</think>\n\nThe largest planet in our solar system is "
                "**Jupiter**. It is a gas giant and is more than twice as massive as all "
                "the other planets combined."),
    # Llama-3.1-8B-Instruct: first US president
    ("George Washington", "The first President of the United States was George Washington. "
                          "He served two terms from 1789 to 1797."),
    # Llama-3.2-3B-Instruct: chemical symbol O
    ("oxygen", "The chemical symbol \"O\" represents the element Oxygen."),
    # Gemma-2-9B-it: tallest mountain
    ("Mount Everest", "The tallest mountain in the world is **Mount Everest**. \n\nIt stands "
                      "at 8,848.86 meters (29,031.7 feet) above sea level."),
    # Gemma-3-4B-it: author of Hamlet
    ("William Shakespeare", "**William Shakespeare** wrote *Hamlet*.\n\nIt's one of his most "
                            "famous tragedies, believed to have been written around 1600.\n\n"
                            "Would you like to know more about the play?"),
    # Mistral-7B-Instruct-v0.3: largest ocean
    ("Pacific Ocean", " The largest ocean on Earth is the Pacific Ocean. It covers about "
                      "one third of the Earth's surface."),
    # Phi-3.5-mini-instruct: painter of the Mona Lisa
    ("Leonardo da Vinci", "The Mona Lisa was painted by Leonardo da Vinci, the Italian "
                          "Renaissance artist. It is one of the most famous paintings in the "
                          "world and is displayed at the Louvre Museum in Paris."),
    # Phi-4: capital of Australia
    ("Canberra", "The capital of Australia is **Canberra**."),
    # DeepSeek-R1-Distill-Qwen-7B: capital of Japan
    ("Tokyo", "Okay, so the user is asking about the capital of Japan. I know that Tokyo is "
              "the capital and the largest city of Japan.\n</think>\n\n"
              "The capital of Japan is **Tokyo**."),
    # SmolLM2-1.7B-Instruct: theory of relativity
    ("Albert Einstein", "Albert Einstein developed the theory of relativity."),
    # OLMo-2-Instruct: discoverer of penicillin
    ("Alexander Fleming", "Penicillin was discovered by Alexander Fleming in 1928."),
    # GPT-4o-style: planet closest to the Sun
    ("Mercury", "The planet closest to the Sun is **Mercury**."),
    # Claude-style: chemical symbol for gold
    ("Au", "The chemical symbol for gold is **Au**, which comes from the Latin word "
           "*aurum*."),
]

# Replies to "Using the numbers 3, 4, 8, 2 each exactly once with + - * /, make 40.
# Give the expression."
HELD_OUT_7_COUNTDOWNS: list[str] = [
    # Qwen2.5-7B-Instruct
    "To make 40 using the numbers 3, 4, 8, and 2 exactly once with the operations +, -, "
    "*, and /, we can follow these steps:\n\n"
    "1. Subtract 3 from 8: \\(8 - 3 = 5\\)\n"
    "2. Multiply the result by 4: \\(5 \\times 4 = 20\\)\n"
    "3. Multiply the result by 2: \\(20 \\times 2 = 40\\)\n\n"
    "So, the expression is:\n\n\\[\n(8 - 3) \\times 4 \\times 2 = 40\n\\]",
    # Qwen3-8B (thinking)
    "<think>\nOkay, I need to make 40 using 3, 4, 8, and 2, each exactly once. Since 40 is "
    "5 times 8, maybe I can get 5 from the other numbers. 4 + 3 is 7, minus 2 is 5. Then "
    "5 times 8 is 40. That uses every number exactly once.\n</think>\n\n"
    "We can combine the numbers as follows:\n\n"
    "- $4 + 3 - 2 = 5$\n- $5 \\times 8 = 40$\n\n"
    "### Final Answer\n\n$$\n\\boxed{(4 + 3 - 2) \\times 8}\n$$",
    # Llama-3.1-8B-Instruct
    "## Step 1: Look for a way to reach 40\nWe can write 40 as 5 * 8, so we need to get 5 "
    "and 8 from the numbers 3, 4, 8, 2.\n\n"
    "## Step 2: Make 5\nSubtracting 3 from 8 gives 8 - 3 = 5.\n\n"
    "## Step 3: Make 8 from the remaining numbers\nMultiplying 4 and 2 gives 4 * 2 = 8.\n\n"
    "## Step 4: Combine the results\n(8 - 3) * (4 * 2) = 5 * 8 = 40.\n\n"
    "The final answer is: $\\boxed{(8 - 3) * 4 * 2}$",
    # Llama-3.2-3B-Instruct
    "Here's one possible solution:\n\n(8 - 3) * 4 * 2 = 40\n\n"
    "Explanation:\n\n1. Subtract 3 from 8: 8 - 3 = 5\n2. Multiply 5 by 4: 5 * 4 = 20\n"
    "3. Multiply 20 by 2: 20 * 2 = 40",
    # Gemma-2-9B-it
    "Here's one way to make 40:\n\n**(4 + 3 - 2) * 8 = 40**\n\n"
    "* 4 + 3 = 7\n* 7 - 2 = 5\n* 5 * 8 = 40",
    # Gemma-3-4B-it
    "Okay, here's a solution:\n\n**(8 - 3) * 4 * 2 = 40**\n\n"
    "* 8 - 3 = 5\n* 5 * 4 = 20\n* 20 * 2 = 40\n\n"
    "Let me know if you'd like to try another one!",
    # Mistral-7B-Instruct-v0.3
    " Here's one way to make 40 using the numbers 3, 4, 8, 2 each exactly once:\n\n"
    "(8 - 3) * (4 * 2) = 5 * 8 = 40",
    # Phi-3.5-mini-instruct
    "To make 40 using the numbers 3, 4, 8, and 2 exactly once, we can use the following "
    "expression:\n\n8 * (4 - 2 + 3) = 40\n\nHere's the breakdown:\n"
    "1. First, calculate inside the parentheses: 4 - 2 + 3 = 5\n"
    "2. Then, multiply by 8: 8 * 5 = 40\n\n"
    "So, the expression 8 * (4 - 2 + 3) equals 40, using each number exactly once.",
    # Phi-4
    "To make 40 using the numbers 3, 4, 8, and 2 exactly once, you can use the expression:"
    "\n\n\\[\n(8 - 3) \\times 4 \\times 2 = 40\n\\]\n\nHere's the breakdown:\n\n"
    "1. \\(8 - 3 = 5\\)\n2. \\(5 \\times 4 = 20\\)\n3. \\(20 \\times 2 = 40\\)",
    # DeepSeek-R1-Distill-Qwen-7B
    "Okay, so I need to make 40 using the numbers 3, 4, 8, and 2, each exactly once. Let me "
    "think. If I multiply 8 and 4, I get 32, and adding 3 and 2 gives 37, which is too "
    "small. Another idea: 40 is 5 times 8, and 4 times 2 is 8. Then I need 5 from 8 and 3, "
    "and 8 - 3 = 5. So (8 - 3) * 4 * 2 = 5 * 8 = 40. That uses all four numbers once.\n"
    "</think>\n\n"
    "To make 40, subtract 3 from 8 to get 5, then multiply by 4 and by 2:\n\n"
    "\\[\n(8 - 3) \\times 4 \\times 2 = 40\n\\]\n\n"
    "**Answer:** \\boxed{(8 - 3) \\times 4 \\times 2}",
    # GPT-4o-style
    "Sure! Here's one way to make 40 using 3, 4, 8, and 2:\n\n"
    "\\[\n(8 - 3) \\times 4 \\times 2 = 5 \\times 4 \\times 2 = 40\n\\]\n\n"
    "✅ All numbers used exactly once.",
    # Claude-style
    "**(8 - 3) × 4 × 2 = 40**\n\n"
    "- 8 - 3 = 5\n- 5 × 4 = 20\n- 20 × 2 = 40\n\nEach number is used exactly once.",
]

# Replies to "Write a Python function add(a, b) that returns the sum of a and b."
HELD_OUT_7_CODES: list[str] = [
    # Qwen2.5-7B-Instruct
    "Certainly! Below is a simple Python function `add` that takes two arguments, `a` and "
    "`b`, and returns their sum.\n\n"
    "```python\ndef add(a, b):\n    return a + b\n\n"
    "# Example usage:\nresult = add(3, 5)\nprint(result)  # Output: 8\n```\n\n"
    "This function works with integers, floats, and any other types that support the `+` "
    "operator.",
    # Qwen3-8B (thinking)
    "<think>\nOkay, the user wants a Python function called add that takes a and b and "
    "returns their sum. That's straightforward: define the function with two parameters "
    "and return a + b. I'll add a docstring and a short example.\n</think>\n\n"
    "Here's a simple Python function that returns the sum of two numbers:\n\n"
    "```python\ndef add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n"
    "    return a + b\n```\n\n"
    "### Example Usage\n\n```python\nprint(add(2, 3))   # Output: 5\n"
    "print(add(-1, 1))  # Output: 0\n```\n\n"
    "This function works for integers, floats, and any types that support the `+` operator.",
    # Llama-3.1-8B-Instruct
    "**Addition Function**\n=====================\n\n"
    "Here's a simple Python function that adds two numbers:\n\n"
    "```python\ndef add(a, b):\n    \"\"\"\n    Returns the sum of a and b.\n\n    Args:\n"
    "        a (int or float): The first number.\n"
    "        b (int or float): The second number.\n\n    Returns:\n"
    "        int or float: The sum of a and b.\n    \"\"\"\n    return a + b\n```\n\n"
    "**Example Use Cases**\n--------------------\n\n"
    "```python\nprint(add(2, 3))  # Output: 5\nprint(add(-1, 1))  # Output: 0\n"
    "print(add(2.5, 1.5))  # Output: 4.0\n```",
    # Gemma-2-9B-it
    "```python\ndef add(a, b):\n  \"\"\"\n  This function adds two numbers together.\n\n"
    "  Args:\n    a: The first number.\n    b: The second number.\n\n"
    "  Returns:\n    The sum of a and b.\n  \"\"\"\n  return a + b\n```\n\n"
    "**Explanation:**\n\n"
    "* **`def add(a, b):`**: This line defines a function named `add` that takes two "
    "arguments, `a` and `b`.\n"
    "* **`return a + b`**: This line calculates the sum of `a` and `b` and returns the "
    "result.\n\n"
    "**How to use it:**\n\n```python\nresult = add(5, 3)\nprint(result)  # Output: 8\n```",
    # Mistral-7B-Instruct-v0.3
    " Here is a simple Python function that takes two arguments and returns their sum:\n\n"
    "```python\ndef add(a, b):\n    return a + b\n```\n\n"
    "You can use this function like this:\n\n"
    "```python\nresult = add(3, 5)\nprint(result)  # Outputs: 8\n```",
    # Phi-3.5-mini-instruct
    "Certainly! Below is a Python function named `add` that takes two parameters, `a` and "
    "`b`, and returns their sum:\n\n"
    "```python\ndef add(a, b):\n    \"\"\"\n    Add two numbers and return the result.\n\n"
    "    Parameters:\n    a (int/float): The first number.\n"
    "    b (int/float): The second number.\n\n    Returns:\n"
    "    int/float: The sum of a and b.\n    \"\"\"\n    return a + b\n\n\n"
    "# Example usage:\nif __name__ == \"__main__\":\n    num1 = 5\n    num2 = 3\n"
    "    print(f\"The sum of {num1} and {num2} is {add(num1, num2)}\")\n```\n\n"
    "This function works with both integers and floating-point numbers. The example usage "
    "shows how to call the function and print the result.",
    # DeepSeek-R1-Distill-Qwen-7B
    "Okay, I need to write a Python function called add that takes two arguments, a and b, "
    "and returns their sum. That's simple: I just use the + operator and return the "
    "result.\n</think>\n\n"
    "To solve this problem, we define a function that returns the sum of its two "
    "arguments.\n\n"
    "```python\ndef add(a, b):\n    return a + b\n```\n\n"
    "**Explanation:**\n- The function `add` takes two parameters, `a` and `b`.\n"
    "- It returns `a + b`, which is their sum.",
    # GPT-4o-style
    "Here's a simple Python function that returns the sum of two numbers:\n\n"
    "```python\ndef add(a, b):\n    return a + b\n```\n\n"
    "### Example usage:\n```python\nprint(add(2, 3))  # Output: 5\n```\n\n"
    "Let me know if you'd like to add type checking or support for more than two numbers!",
    # Claude-style
    "```python\ndef add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n"
    "    return a + b\n```\n\n"
    "Example usage:\n\n```python\nprint(add(2, 3))   # 5\nprint(add(-1, 1))  # 0\n```",
]
