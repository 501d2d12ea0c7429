"""The eighth held-out set of correct model replies for answer-reading verifiers (issue 47).

Typical default replies of named model families (Qwen2.5, Qwen3, Llama-3.1/3.2, Gemma-2/3,
Mistral-7B/Small, Phi-4, DeepSeek-R1-Distill, SmolLM2, OLMo-2, GPT-4o-style, Claude-style)
for short factual answers, multiple-choice options and Countdown. Every reply is correct and
gives one final answer. Written by a separate author before any verifier was read; data only.
"""

# "Which planet is known as the Red Planet? A) Venus B) Mars C) Jupiter D) Saturn"
# Every reply chooses B (Mars).
HELD_OUT_8_CHOICES: list[str] = [
    # Qwen2.5-7B-Instruct
    "The planet known as the Red Planet is B) Mars.",
    # Qwen2.5-7B-Instruct
    (
        "B) Mars\n\nMars is known as the Red Planet due to the iron oxide (rust) on its surface, "
        "which gives it a reddish appearance."
    ),
    # Qwen3-8B
    (
        "<think>\nOkay, so the question is asking which planet is known as the Red Planet. "
        "Let me think. I remember that Mars is called the Red Planet because of its reddish "
        "color, which comes from iron oxide on its surface. The options are A) Venus, B) Mars, "
        "C) Jupiter, D) Saturn. Venus is very bright and covered in thick clouds, Jupiter is a "
        "gas giant with bands, and Saturn is known for its rings. So the answer should be "
        "B) Mars.\n</think>\n\n"
        "The planet known as the Red Planet is **B) Mars**.\n\n"
        "Mars gets this nickname from the iron oxide (rust) covering its surface, which gives "
        "it a distinctive reddish appearance."
    ),
    # Qwen3-8B
    (
        "<think>\nOkay, the user is asking which planet is called the Red Planet. That's Mars, "
        "option B. Its surface is rich in iron oxide, which makes it look red. I'm confident "
        "about this.\n</think>\n\n"
        "**Answer: B) Mars**\n\n"
        "Mars is known as the Red Planet because iron oxide (rust) in its soil and dust gives "
        "it a reddish hue."
    ),
    # Llama-3.1-8B-Instruct
    (
        "The correct answer is B) Mars. Mars is often referred to as the Red Planet due to its "
        "reddish appearance, which is caused by iron oxide (rust) in the planet's soil and rocks."
    ),
    # Llama-3.1-8B-Instruct
    (
        "The answer is B) Mars.\n\nMars is known as the Red Planet because of its reddish hue, "
        "which is due to the presence of iron oxide, also known as rust, on its surface."
    ),
    # Llama-3.2-3B-Instruct
    (
        "The correct answer is B) Mars. Mars is known as the Red Planet due to its reddish "
        "appearance, which is caused by the presence of iron oxide in its soil."
    ),
    # Gemma-2-9B-it
    (
        "The answer is **B) Mars**. \n\nMars is called the Red Planet because of the iron oxide "
        "(rust) on its surface, which gives it a reddish appearance. \n"
    ),
    # Gemma-3-12B-it
    (
        "The correct answer is **B) Mars**.\n\n"
        "Mars is known as the \"Red Planet\" because its surface is covered in iron oxide, "
        "commonly known as rust. This gives the planet its distinctive reddish appearance."
    ),
    # Gemma-3-12B-it
    (
        "**B) Mars**\n\nMars is known as the Red Planet because of the iron oxide (rust) that "
        "covers much of its surface, giving it a reddish color."
    ),
    # Mistral-7B-Instruct-v0.3
    (
        " B) Mars\n\nMars is often called the \"Red Planet\" because of its reddish appearance, "
        "which is due to iron oxide (rust) on its surface."
    ),
    # Mistral-7B-Instruct-v0.3
    (
        " The planet known as the Red Planet is Mars (B). Its reddish color comes from iron "
        "oxide, or rust, in its soil."
    ),
    # Mistral-Small
    (
        "The correct answer is **B) Mars**. Mars is called the Red Planet because iron oxide "
        "(rust) on its surface gives it a reddish color."
    ),
    # Phi-4
    (
        "The planet known as the Red Planet is **B) Mars**. Its reddish appearance is due to "
        "iron oxide, or rust, on its surface."
    ),
    # DeepSeek-R1-Distill-Llama-8B (no opening think tag)
    (
        "Okay, so I need to figure out which planet is known as the Red Planet. The options are "
        "A) Venus, B) Mars, C) Jupiter, and D) Saturn. I remember that Mars is often called the "
        "Red Planet because of its reddish appearance. I think it's because of iron oxide, which "
        "is like rust, on its surface. Venus is covered in thick clouds, Jupiter is a gas giant "
        "with stripes, and Saturn is famous for its rings. So the answer must be Mars.\n"
        "</think>\n\n"
        "The planet known as the Red Planet is Mars, due to the iron oxide on its surface that "
        "gives it a reddish appearance.\n\n"
        "**Answer: B) Mars**"
    ),
    # DeepSeek-R1-Distill-Llama-8B (no opening think tag)
    (
        "Alright, the question is about the Red Planet. I'm pretty sure that's Mars, because "
        "its surface looks red from iron oxide. Mars is option B.\n"
        "</think>\n\n"
        "Mars is known as the Red Planet because of its reddish color, caused by iron oxide on "
        "its surface.\n\n"
        "\\boxed{B}"
    ),
    # SmolLM2-1.7B-Instruct
    "The planet known as the Red Planet is Mars (B).",
    # OLMo-2
    (
        "The correct answer is B) Mars.\n\nMars is known as the Red Planet because of its reddish "
        "appearance, which is caused by iron oxide (rust) on its surface."
    ),
    # GPT-4o-style
    (
        "**B) Mars**\n\nMars is called the Red Planet because of the iron oxide (rust) on its "
        "surface, which gives it a reddish appearance."
    ),
    # Claude-style
    (
        "The answer is **B) Mars**.\n\n"
        "Mars is known as the Red Planet because its surface is covered in iron oxide (rust), "
        "which gives it a distinctive reddish color visible even from Earth."
    ),
]

# (gold, reply) pairs for short factual questions; each reply contains the gold as its answer.
HELD_OUT_8_TEXTS: list[tuple[str, str]] = [
    # Qwen2.5-7B-Instruct: Which planet is known as the Red Planet?
    (
        "Mars",
        "The planet known as the Red Planet is Mars. It gets this nickname from the reddish "
        "appearance of its surface, which is due to iron oxide (rust).",
    ),
    # Llama-3.1-8B-Instruct: What is the capital of Japan?
    ("Tokyo", "The capital of Japan is Tokyo."),
    # Gemma-2-9B-it: Who painted the Mona Lisa?
    (
        "Leonardo da Vinci",
        "The Mona Lisa was painted by **Leonardo da Vinci**. \n\nHe worked on it in the early "
        "16th century, and it now hangs in the Louvre Museum in Paris. \n",
    ),
    # GPT-4o-style: Who was the first woman to win a Nobel Prize?
    (
        "Marie Curie",
        "The first woman to win a Nobel Prize was **Marie Curie**. She received the Nobel Prize "
        "in Physics in 1903 and later won a second Nobel Prize, in Chemistry, in 1911.",
    ),
    # Qwen3-8B: In what year did World War II end?
    (
        "1945",
        "<think>\nOkay, the user is asking when World War II ended. I remember that the war in "
        "Europe ended in May 1945 with Germany's surrender, and Japan formally surrendered on "
        "September 2, 1945. So the answer is 1945.\n</think>\n\n"
        "World War II ended in **1945**. Germany surrendered in May 1945, and Japan formally "
        "surrendered on September 2, 1945, bringing the war to a close.",
    ),
    # Llama-3.1-8B-Instruct: What is the longest river in the world?
    (
        "Nile",
        "The longest river in the world is the Nile River, which stretches approximately 6,650 "
        "kilometers (4,130 miles) through northeastern Africa before emptying into the "
        "Mediterranean Sea.",
    ),
    # Llama-3.2-3B-Instruct: What is the chemical symbol for gold?
    (
        "Au",
        "The chemical symbol for gold is Au, which comes from the Latin word \"aurum,\" "
        "meaning gold.",
    ),
    # Gemma-3-12B-it: What is the largest tropical rainforest in the world?
    (
        "Amazon rainforest",
        "The largest tropical rainforest in the world is the **Amazon rainforest**. It covers "
        "roughly 5.5 million square kilometers across nine countries in South America, with the "
        "majority located in Brazil.",
    ),
    # Phi-4: Who formulated the three laws of motion?
    (
        "Isaac Newton",
        "The three laws of motion were formulated by **Isaac Newton**, who published them in "
        "his work *Philosophiæ Naturalis Principia Mathematica* in 1687.",
    ),
    # Mistral-7B-Instruct-v0.3: What is the largest ocean on Earth?
    (
        "Pacific Ocean",
        " The largest ocean on Earth is the Pacific Ocean. It covers about 165 million square "
        "kilometers (63.8 million square miles), more than all of Earth's land area combined.",
    ),
    # Claude-style: What is the capital of Australia?
    (
        "Canberra",
        "The capital of Australia is **Canberra**. It was purpose-built as the national capital, "
        "and Parliament first met there in 1927.",
    ),
    # SmolLM2-1.7B-Instruct: What is the chemical formula for water?
    (
        "H2O",
        "The chemical formula for water is H2O, which means each molecule contains two hydrogen "
        "atoms and one oxygen atom.",
    ),
    # OLMo-2: What is the highest mountain in Africa?
    (
        "Mount Kilimanjaro",
        "The highest mountain in Africa is Mount Kilimanjaro, located in Tanzania. It rises to "
        "about 5,895 meters (19,341 feet) above sea level.",
    ),
    # Mistral-Small: Who invented the phonograph?
    (
        "Thomas Edison",
        "The phonograph was invented by **Thomas Edison** in 1877. It was the first device "
        "capable of both recording and reproducing sound.",
    ),
    # Qwen2.5-7B-Instruct: What language is spoken in Brazil?
    ("Portuguese", "The official language of Brazil is Portuguese."),
    # DeepSeek-R1-Distill-Llama-8B: Which planet has the most prominent rings?
    (
        "Saturn",
        "Okay, so I need to figure out which planet has the most prominent rings. I know that "
        "Saturn is famous for its rings. They're made of ice and rock and can be seen even with "
        "a small telescope. So the answer is Saturn.\n</think>\n\n"
        "The planet with the most prominent rings is **Saturn**. Its ring system is made mostly "
        "of ice particles with some rock and dust, and it is easily visible through a small "
        "telescope.",
    ),
    # Gemma-2-9B-it: In what year did Columbus reach the Americas?
    (
        "1492",
        "Christopher Columbus reached the Americas in **1492**. \n\nHe landed on an island in "
        "the Bahamas on October 12, 1492, during his first voyage across the Atlantic. \n",
    ),
    # GPT-4o-style: Who came up with E=mc^2?
    (
        "Albert Einstein",
        "The equation **E = mc²** was formulated by **Albert Einstein**. It comes from his "
        "theory of special relativity, published in 1905, and expresses the equivalence of mass "
        "and energy.",
    ),
    # Llama-3.2-3B-Instruct: What is the coldest continent?
    (
        "Antarctica",
        "The coldest continent is Antarctica. It holds the record for the lowest natural "
        "temperature ever recorded on Earth, -89.2°C (-128.6°F), measured at Vostok Station "
        "in 1983.",
    ),
    # Gemma-3-12B-it: Who composed the Moonlight Sonata?
    (
        "Beethoven",
        "**Ludwig van Beethoven** composed the Moonlight Sonata.\n\nOfficially titled Piano "
        "Sonata No. 14 in C-sharp minor, Op. 27, No. 2, it was completed in 1801.",
    ),
]

# "Using the numbers 3, 4, 8, 2 each exactly once with + - * /, make 40. Give the expression."
HELD_OUT_8_COUNTDOWNS: list[str] = [
    # Qwen2.5-7B-Instruct
    (
        "To make 40 using the numbers 3, 4, 8, and 2, you can use the following expression:\n\n"
        "\\[\n(8 - 3) \\times 4 \\times 2 = 40\n\\]\n\n"
        "Here's the step-by-step breakdown:\n"
        "1. Subtract 3 from 8: \\(8 - 3 = 5\\)\n"
        "2. Multiply the result by 4: \\(5 \\times 4 = 20\\)\n"
        "3. Multiply by 2: \\(20 \\times 2 = 40\\)\n\n"
        "So, the expression is \\((8 - 3) \\times 4 \\times 2\\)."
    ),
    # Qwen3-8B
    (
        "<think>\nOkay, let's see. I need to use 3, 4, 8, 2 each once to make 40. Hmm, 40 is "
        "5 times 8. Can I make 5 from 3, 4, 2? 4 + 3 - 2 = 5. Then 5 * 8 = 40. Let me check: "
        "(4 + 3 - 2) * 8 = 5 * 8 = 40. All four numbers used once. That works.\n</think>\n\n"
        "Here is one way to make 40:\n\n"
        "$$\n(4 + 3 - 2) \\times 8 = 40\n$$\n\n"
        "**Verification:**\n"
        "- $4 + 3 - 2 = 5$\n"
        "- $5 \\times 8 = 40$ ✓\n\n"
        "**Answer:** $(4 + 3 - 2) \\times 8$"
    ),
    # Llama-3.1-8B-Instruct
    (
        "To make 40 using the numbers 3, 4, 8, and 2, we can use the following expression:\n\n"
        "(8 - 3) * (4 * 2) = 40\n\n"
        "Here's how it works:\n\n"
        "1. Subtract 3 from 8: 8 - 3 = 5\n"
        "2. Multiply 4 by 2: 4 * 2 = 8\n"
        "3. Multiply 5 by 8: 5 * 8 = 40\n\n"
        "So, the expression is (8 - 3) * (4 * 2)."
    ),
    # Llama-3.2-3B-Instruct
    (
        "Here's one possible solution:\n\n"
        "(3 * 8 - 4) * 2 = 40\n\n"
        "Explanation:\n\n"
        "1. Multiply 3 and 8: 3 * 8 = 24\n"
        "2. Subtract 4: 24 - 4 = 20\n"
        "3. Multiply by 2: 20 * 2 = 40"
    ),
    # Gemma-2-9B-it
    (
        "Here's one solution:\n\n"
        "**8 * (4 + 3 - 2) = 40**\n\n"
        "* 4 + 3 = 7\n"
        "* 7 - 2 = 5\n"
        "* 8 * 5 = 40 \n"
    ),
    # Mistral-7B-Instruct-v0.3
    (
        " Here's one way to make 40 using the numbers 3, 4, 8, and 2:\n\n"
        "(8 - 3) * 4 * 2 = 40\n\n"
        "First, 8 - 3 = 5. Then 5 * 4 = 20, and 20 * 2 = 40."
    ),
    # Phi-4
    (
        "To make 40 using the numbers 3, 4, 8, and 2 exactly once, you can use the "
        "expression:\n\n"
        "\\[\n(3 \\times 8 - 4) \\times 2\n\\]\n\n"
        "Let's verify:\n\n"
        "1. \\(3 \\times 8 = 24\\)\n"
        "2. \\(24 - 4 = 20\\)\n"
        "3. \\(20 \\times 2 = 40\\)\n\n"
        "Thus, \\((3 \\times 8 - 4) \\times 2 = 40\\)."
    ),
    # DeepSeek-R1-Distill-Llama-8B (no opening think tag)
    (
        "Okay, so I have to make 40 using 3, 4, 8, and 2, each exactly once, with addition, "
        "subtraction, multiplication, or division. Let me think. 40 is 5 times 8, so maybe I "
        "can get 5 from the other numbers. 8 minus 3 is 5, and then I need 8 from 4 and 2, and "
        "4 times 2 is 8. So (8 - 3) times 4 times 2. Let me check: 8 - 3 is 5, 5 times 4 is 20, "
        "20 times 2 is 40. Yes, that works, and I used each number once.\n</think>\n\n"
        "To make 40 using the numbers 3, 4, 8, and 2 exactly once:\n\n"
        "1. Subtract 3 from 8: \\(8 - 3 = 5\\)\n"
        "2. Multiply by 4: \\(5 \\times 4 = 20\\)\n"
        "3. Multiply by 2: \\(20 \\times 2 = 40\\)\n\n"
        "\\[\n\\boxed{(8 - 3) \\times 4 \\times 2}\n\\]"
    ),
    # GPT-4o-style
    (
        "Here's one way to make 40:\n\n"
        "**(8 − 3) × 4 × 2 = 40**\n\n"
        "- 8 − 3 = 5\n"
        "- 5 × 4 = 20\n"
        "- 20 × 2 = 40 ✅"
    ),
    # Claude-style
    (
        "Here's a solution:\n\n"
        "**8 × (4 + 3 - 2) = 40**\n\n"
        "Working through it: 4 + 3 - 2 = 5, and 8 × 5 = 40. Each number is used exactly once."
    ),
    # OLMo-2
    (
        "Let's work it out step by step.\n\n"
        "8 - 3 = 5\n"
        "2 * 4 = 8\n"
        "8 * 5 = 40\n\n"
        "Final answer: 2 * 4 * (8 - 3)"
    ),
    # Gemma-3-12B-it
    (
        "Here's how to make 40 using 3, 4, 8, and 2:\n\n"
        "**(3 × 8 - 4) × 2 = 40**\n\n"
        "* 3 × 8 = 24\n"
        "* 24 - 4 = 20\n"
        "* 20 × 2 = 40"
    ),
]
