"""Tenth held-out set of correct model replies.

Typical default replies of named model families (Qwen, Llama, Gemma, Mistral,
Phi, DeepSeek, SmolLM, OLMo, GPT-4o-style, Claude-style, Command-R, Granite,
Falcon, Yi, ...) to multiple-choice, short factual and Countdown questions.

Written by a separate author before any verifier was read, from general
knowledge of how these models answer by default. Every reply is correct and
commits to exactly one final answer. Data only: no logic, no imports.
"""

# (gold_letter, question, reply)
HELD_OUT_10_CHOICES: list[tuple[str, str, str]] = [
    # Qwen2.5-7B-Instruct
    (
        "C",
        "Which organelle is known as the powerhouse of the cell?\n"
        "A. Nucleus\nB. Ribosome\nC. Mitochondrion\nD. Golgi apparatus",
        r"""The correct answer is C. Mitochondrion.

Mitochondria are called the "powerhouse of the cell" because they produce most of the cell's supply of adenosine triphosphate (ATP) through cellular respiration. The nucleus stores genetic material, ribosomes synthesize proteins, and the Golgi apparatus modifies and packages proteins.""",
    ),
    # SmolLM2-1.7B-Instruct
    (
        "C",
        "Which organelle is known as the powerhouse of the cell?\n"
        "A. Nucleus\nB. Ribosome\nC. Mitochondrion\nD. Golgi apparatus",
        r"""C. Mitochondrion""",
    ),
    # Llama-3.1-8B-Instruct
    (
        "D",
        "What is the SI unit of force?\n(A) Joule (B) Watt (C) Pascal (D) Newton",
        r"""The SI unit of force is the Newton (N). One newton is defined as the force required to accelerate a mass of one kilogram at a rate of one meter per second squared (1 N = 1 kg·m/s²).

The other options are units of different quantities:
- Joule is the unit of energy/work
- Watt is the unit of power
- Pascal is the unit of pressure

The correct answer is (D) Newton.""",
    ),
    # Qwen3-8B (thinking mode)
    (
        "D",
        "What is the SI unit of force?\n(A) Joule (B) Watt (C) Pascal (D) Newton",
        r"""<think>
Okay, the question asks for the SI unit of force. Let me go through the options. Joule is the unit of energy, that's work done, force times distance. Watt is power, joules per second. Pascal is pressure, which is force per area, newtons per square meter. So Pascal is derived from the newton but isn't force itself. Newton is force: kg·m/s². So the answer is D.
</think>

The SI unit of force is the **newton (N)**, defined as 1 kg·m/s².

- **Joule (A)** – unit of energy
- **Watt (B)** – unit of power
- **Pascal (C)** – unit of pressure (N/m²)

**Answer: (D) Newton**""",
    ),
    # Gemma-2-9B-it
    (
        "A",
        "Who wrote 'Pride and Prejudice'?\n"
        "A) Jane Austen\nB) Charlotte Brontë\nC) Mary Shelley\nD) George Eliot",
        r"""**A) Jane Austen**

Jane Austen wrote *Pride and Prejudice*, which was first published in 1813.

Here's a quick look at the other authors:

* **Charlotte Brontë** wrote *Jane Eyre* (1847).
* **Mary Shelley** wrote *Frankenstein* (1818).
* **George Eliot** (the pen name of Mary Ann Evans) wrote *Middlemarch* (1871–72).""",
    ),
    # Phi-3-mini-4k-instruct
    (
        "A",
        "Who wrote 'Pride and Prejudice'?\n"
        "A) Jane Austen\nB) Charlotte Brontë\nC) Mary Shelley\nD) George Eliot",
        r"""Answer: A""",
    ),
    # GPT-4o-style
    (
        "B",
        "A price ceiling set below the equilibrium price will most likely result in:\n"
        "A. A surplus\nB. A shortage\nC. No change in the quantity traded\n"
        "D. An increase in supply\nE. A decrease in demand",
        r"""### Understanding the price ceiling

A **price ceiling** is a legal maximum price. If it is set **below** the equilibrium price, it is *binding*:

- At the lower price, **quantity demanded rises** (more buyers want the good).
- At the lower price, **quantity supplied falls** (sellers are less willing to produce).

Since quantity demanded exceeds quantity supplied, the market experiences excess demand.

### Checking the options

- **A. A surplus** – ❌ A surplus comes from a price *floor* set above equilibrium.
- **B. A shortage** – ✅ Quantity demanded > quantity supplied.
- **C. No change in the quantity traded** – ❌ The quantity traded falls to the quantity supplied.
- **D. An increase in supply** – ❌ The price ceiling moves along the supply curve; it doesn't shift it.
- **E. A decrease in demand** – ❌ Demand (the curve) doesn't shift either.

### ✅ Answer: **B. A shortage**""",
    ),
    # Mistral-7B-Instruct-v0.3
    (
        "B",
        "A price ceiling set below the equilibrium price will most likely result in:\n"
        "A. A surplus\nB. A shortage\nC. No change in the quantity traded\n"
        "D. An increase in supply\nE. A decrease in demand",
        r"""The answer is B. A shortage.

When a price ceiling is set below the equilibrium price, the price is not allowed to rise to the level where supply equals demand. At this artificially low price, consumers want to buy more than producers are willing to sell, which creates a shortage. A classic example is rent control in cities like New York, where the number of apartments people want to rent at the controlled price exceeds the number available.""",
    ),
    # DeepSeek-R1-Distill-Qwen-7B
    (
        "A",
        "What is the worst-case time complexity of binary search on a sorted array of n elements?\n"
        "A. O(log n)\nB. O(n)\nC. O(n log n)\nD. O(1)",
        r"""<think>
Okay, so I need to figure out the worst-case time complexity of binary search. Let me think. Binary search works on a sorted array by comparing the target with the middle element. If it's not equal, we discard half of the array and repeat on the other half.

So after each step the search space is halved: n, n/2, n/4, ... until we get down to 1 element. How many steps is that? If n/2^k = 1, then k = log2(n). So in the worst case, when the element is not found or is found at the very last step, we do about log n comparisons.

Wait, could it be O(n)? No, that's linear search, where we check every element. O(n log n) is like merge sort, which is for sorting, not searching. O(1) would be the best case, if the middle element happens to be the target, but the question asks for the worst case.

So the worst case is O(log n), which is option A.
</think>

Binary search halves the search interval at every comparison. Starting from n elements, after k comparisons at most n/2^k elements remain, so the search ends after at most about log₂ n + 1 comparisons.

- O(n) is the cost of linear search.
- O(n log n) is the cost of comparison-based sorting.
- O(1) is only the best case (the middle element matches immediately).

Therefore, the worst-case time complexity is O(log n).

\[
\boxed{A}
\]""",
    ),
    # Claude-style
    (
        "A",
        "What is the worst-case time complexity of binary search on a sorted array of n elements?\n"
        "A. O(log n)\nB. O(n)\nC. O(n log n)\nD. O(1)",
        r"""Binary search works by repeatedly comparing the target to the middle element of the current range and discarding the half that can't contain it. Because each comparison cuts the remaining range in half, an array of n elements can only be halved about log₂ n times before a single element is left. That bounds the number of comparisons in the worst case — for example, a sorted array of 1,000,000 elements needs at most about 20 comparisons.

The other options don't fit: O(n) describes a linear scan, O(n log n) is typical of efficient sorting algorithms, and O(1) is binary search's best case rather than its worst.

So the answer is **A) O(log n)**.""",
    ),
    # Command-R
    (
        "C",
        "Choose the correct word to complete the sentence: "
        "'Neither the teacher nor the students ___ ready for the fire drill.'\n"
        "A. is\nB. was\nC. are\nD. be",
        r"""The correct answer is C: "are".

With "neither... nor", the verb agrees with the subject that is closest to it. In this sentence, the closer subject is "the students", which is plural, so the plural verb "are" is required: "Neither the teacher nor the students are ready for the fire drill."

If the order were reversed ("Neither the students nor the teacher ___ ready"), the singular "is" would be correct.""",
    ),
    # OLMo-2-7B-Instruct
    (
        "C",
        "Choose the correct word to complete the sentence: "
        "'Neither the teacher nor the students ___ ready for the fire drill.'\n"
        "A. is\nB. was\nC. are\nD. be",
        r"""In sentences using "neither ... nor," the verb should agree with the noun or pronoun that is nearest to it. This is called the proximity rule. Here, "the students" is nearest to the blank, and it is plural.

- "is" and "was" are singular, so they would agree with "the teacher," not "the students."
- "be" is the base form and is not grammatical here.
- "are" is plural and agrees with "the students."

Answer: C""",
    ),
    # Granite-3.1-8B-Instruct
    (
        "E",
        "Which is the longest river in South America?\n"
        "A. Paraná\nB. Orinoco\nC. São Francisco\nD. Madeira\nE. Amazon",
        r"""E. Amazon

The Amazon River is the longest river in South America, stretching approximately 6,400 kilometers (about 4,000 miles) from the Andes Mountains in Peru to the Atlantic Ocean in Brazil. It is also the largest river in the world by discharge volume. The Paraná River, at roughly 4,880 kilometers, is the second-longest river on the continent, while the Madeira is the Amazon's largest tributary.""",
    ),
    # Falcon3-7B-Instruct
    (
        "E",
        "Which is the longest river in South America?\n"
        "A. Paraná\nB. Orinoco\nC. São Francisco\nD. Madeira\nE. Amazon",
        r"""The longest river in South America is the Amazon, so the answer is E.""",
    ),
    # DeepSeek-V3
    (
        "B",
        "All bloops are razzies. All razzies are lazzies. Which of the following must be true?\n"
        "A. All lazzies are bloops\nB. All bloops are lazzies\n"
        "C. Some razzies are not bloops\nD. No lazzies are bloops",
        r"""Let's analyze the two premises:

1. All bloops are razzies (Bloops ⊆ Razzies)
2. All razzies are lazzies (Razzies ⊆ Lazzies)

By transitivity, Bloops ⊆ Razzies ⊆ Lazzies.

| Option | Statement | Must it be true? |
|---|---|---|
| A | All lazzies are bloops | ❌ No – the inclusion only goes one way |
| B | All bloops are lazzies | ✅ Yes – follows by transitivity |
| C | Some razzies are not bloops | ❌ No – razzies and bloops could be the same set |
| D | No lazzies are bloops | ❌ No – every bloop is a lazzie |

**Final Answer:** B""",
    ),
    # Yi-1.5-9B-Chat
    (
        "B",
        "All bloops are razzies. All razzies are lazzies. Which of the following must be true?\n"
        "A. All lazzies are bloops\nB. All bloops are lazzies\n"
        "C. Some razzies are not bloops\nD. No lazzies are bloops",
        r"""B. All bloops are lazzies.

Explanation: Since every bloop is a razzie, and every razzie is a lazzie, it follows that every bloop must also be a lazzie. This is a classic syllogism (if A ⊆ B and B ⊆ C, then A ⊆ C). The reverse statement "all lazzies are bloops" does not follow, because there may be lazzies that are not razzies at all.""",
    ),
    # Qwen2.5-Math-7B-Instruct
    (
        "C",
        "A train travels 180 km in 2.5 hours. What is its average speed?\n"
        "A. 60 km/h\nB. 66 km/h\nC. 72 km/h\nD. 75 km/h\nE. 80 km/h",
        r"""To find the average speed of the train, we use the formula:

\[
\text{Average speed} = \frac{\text{Total distance}}{\text{Total time}}
\]

Given:
- Total distance = 180 km
- Total time = 2.5 hours

Substituting the values:

\[
\text{Average speed} = \frac{180}{2.5} = 72 \text{ km/h}
\]

Therefore, the average speed of the train is 72 km/h, which corresponds to option C.

\[
\boxed{C}
\]""",
    ),
    # Llama-3.2-3B-Instruct
    (
        "C",
        "A train travels 180 km in 2.5 hours. What is its average speed?\n"
        "A. 60 km/h\nB. 66 km/h\nC. 72 km/h\nD. 75 km/h\nE. 80 km/h",
        r"""## Step 1: Recall the formula for average speed
Average speed is calculated by dividing the total distance traveled by the total time taken.

## Step 2: Plug in the given values
Distance = 180 km, Time = 2.5 hours. Average speed = 180 km / 2.5 hours.

## Step 3: Perform the division
180 / 2.5 = 72. So the average speed is 72 km/h.

## Step 4: Match the result with the answer choices
72 km/h corresponds to answer choice C.

The final answer is: $\boxed{C}$""",
    ),
    # Gemma-3-12B-it
    (
        "D",
        "What is the chemical formula of common table salt?\n"
        "A. KCl\nB. CaCl2\nC. NaHCO3\nD. NaCl",
        r"""The correct answer is **D. NaCl** (sodium chloride).

Here's why the other options are incorrect:

*   **A. KCl** is potassium chloride, which is sometimes used as a salt substitute.
*   **B. CaCl2** is calcium chloride, often used for de-icing roads.
*   **C. NaHCO3** is sodium bicarbonate, better known as baking soda.

Table salt is made of sodium (Na⁺) and chloride (Cl⁻) ions in a 1:1 ratio, arranged in a cubic crystal lattice.""",
    ),
    # Phi-4
    (
        "D",
        "What is the chemical formula of common table salt?\n"
        "A. KCl\nB. CaCl2\nC. NaHCO3\nD. NaCl",
        r"""Table salt is sodium chloride, which is composed of one sodium atom and one chlorine atom. Its chemical formula is NaCl. Therefore, the answer is D.""",
    ),
    # Mixtral-8x7B-Instruct
    (
        "B",
        "In which year did the Berlin Wall fall?\nA. 1987\nB. 1989\nC. 1991\nD. 1993",
        r"""B. 1989

The Berlin Wall fell on November 9, 1989, when East German authorities announced that citizens could cross the border freely. Crowds gathered at checkpoints and began tearing down sections of the wall. This event paved the way for German reunification, which was formally completed on October 3, 1990, and it was followed by the dissolution of the Soviet Union in December 1991. In 1987, U.S. President Ronald Reagan had famously urged Mikhail Gorbachev to "tear down this wall" in a speech in West Berlin.""",
    ),
    # Qwen3-4B (thinking mode)
    (
        "B",
        "In which year did the Berlin Wall fall?\nA. 1987\nB. 1989\nC. 1991\nD. 1993",
        r"""<think>
Okay, the user is asking when the Berlin Wall fell. I remember it was November 9, 1989. Let me double-check against the options. 1987 was Reagan's "tear down this wall" speech, so that's A, which is a distractor. 1991 is when the Soviet Union collapsed, option C. 1993 doesn't correspond to anything major here. German reunification was 1990, which isn't an option. So the answer is 1989, option B.
</think>

The Berlin Wall fell on **November 9, 1989**.

**Answer: B**""",
    ),
    # DeepSeek-R1-Distill-Llama-8B
    (
        "E",
        "What is the derivative of x^3 with respect to x?\n"
        "A. x^2\nB. 3x\nC. x^4/4\nD. 3x^3\nE. 3x^2",
        r"""<think>
Alright, I need to find the derivative of x cubed. I remember the power rule: if f(x) = x^n, then f'(x) = n·x^(n-1). So here n is 3. Bringing down the exponent gives 3, and then subtracting one from the exponent gives x^2. So the derivative is 3x^2.

Let me check the options. A is x^2, which is missing the coefficient. B is 3x, which reduced the exponent too much. C is x^4/4, that's the antiderivative, not the derivative. D is 3x^3, which didn't reduce the exponent. E is 3x^2, which matches.

So the answer should be E.
</think>

To find the derivative of \( x^3 \), apply the power rule:

\[
\frac{d}{dx} x^n = n x^{n-1}
\]

With \( n = 3 \):

\[
\frac{d}{dx} x^3 = 3x^{2}
\]

The derivative of \( x^3 \) is \( 3x^2 \), which corresponds to option E.

\[
\boxed{E}
\]""",
    ),
    # GPT-4o-style
    (
        "E",
        "What is the derivative of x^3 with respect to x?\n"
        "A. x^2\nB. 3x\nC. x^4/4\nD. 3x^3\nE. 3x^2",
        r"""Using the power rule, \( \frac{d}{dx}[x^n] = n x^{n-1} \):

\[
\frac{d}{dx}[x^3] = 3x^{3-1} = 3x^2
\]

**Answer: E) 3x²**

(Note: option C, \( \frac{x^4}{4} \), is the antiderivative of \( x^3 \), not its derivative.)""",
    ),
    # Claude-style
    (
        "D",
        "Which blood type is known as the universal donor for red blood cells?\n"
        "A. AB+\nB. A−\nC. B+\nD. O−\nE. AB−",
        r"""The answer is **D. O−** (O negative).

O-negative red blood cells carry no A or B antigens and no Rh(D) antigen, so they are unlikely to trigger an immune reaction in any recipient. That's why emergency departments keep O-negative blood on hand for trauma patients whose blood type isn't yet known.

It's worth not mixing this up with option A: AB+ is the *universal recipient*, since people with that type have no anti-A, anti-B, or anti-Rh antibodies and can receive red cells of any ABO/Rh type.""",
    ),
    # Mistral-Nemo-Instruct
    (
        "D",
        "Which blood type is known as the universal donor for red blood cells?\n"
        "A. AB+\nB. A−\nC. B+\nD. O−\nE. AB−",
        r"""D) O−""",
    ),
    # OLMo-2-13B-Instruct
    (
        "B",
        "If it rains, the ground gets wet. The ground is not wet. What can we conclude?\n"
        "A. It rained\nB. It did not rain\nC. The sun dried the ground\nD. Nothing can be concluded",
        r"""This is an example of a valid logical form called modus tollens: if P implies Q, and Q is false, then P must be false.

Here, P = "it rains" and Q = "the ground gets wet." We are told the ground is not wet (not Q), so we can conclude that it did not rain (not P).

Let's check the other options:
- Option A contradicts the premises: if it had rained, the ground would be wet.
- Option C introduces information that is not given in the premises.
- Option D is incorrect because modus tollens does allow a valid conclusion.

Therefore, the correct answer is B: It did not rain.""",
    ),
    # Qwen2.5-14B-Instruct
    (
        "E",
        "Sarah has 3 times as many apples as Tom. Together they have 48 apples. "
        "How many apples does Sarah have?\nA) 12\nB) 16\nC) 24\nD) 32\nE) 36",
        r"""Let the number of apples Tom has be \( x \). Then Sarah has \( 3x \) apples.

Together they have 48 apples:
\[
x + 3x = 48
\]
\[
4x = 48
\]
\[
x = 12
\]

So Tom has 12 apples, and Sarah has \( 3 \times 12 = 36 \) apples.

Check: \( 12 + 36 = 48 \) ✓

The answer is E) 36.""",
    ),
    # Falcon-40B-Instruct
    (
        "A",
        "Which data structure follows the Last-In, First-Out (LIFO) principle?\n"
        "A. Stack\nB. Queue\nC. Hash table\nD. Binary search tree",
        r"""A stack follows the Last-In, First-Out (LIFO) principle, meaning the last element pushed onto the stack is the first one to be popped off. A queue, on the other hand, follows First-In, First-Out (FIFO). Hash tables and binary search trees do not have an inherent insertion-order access policy.

Answer: A""",
    ),
    # Gemma-2-27B-it
    (
        "B",
        "Who wrote the novel 'One Hundred Years of Solitude'?\n"
        "A. Jorge Luis Borges\nB. Gabriel García Márquez\nC. Pablo Neruda\n"
        "D. Isabel Allende\nE. Mario Vargas Llosa",
        r"""**Answer: B. Gabriel García Márquez**

*One Hundred Years of Solitude* (*Cien años de soledad*) was published in 1967 by the Colombian author Gabriel García Márquez. It follows seven generations of the Buendía family in the fictional town of Macondo and is one of the defining works of magical realism.

García Márquez received the Nobel Prize in Literature in 1982. (Mario Vargas Llosa, another Latin American Boom writer, won it later, in 2010.)""",
    ),
]

# (gold, reply)
HELD_OUT_10_TEXTS: list[tuple[str, str]] = [
    # Q: What is the capital of Australia?  -- Qwen2.5-7B-Instruct
    (
        "Canberra",
        r"""The capital of Australia is Canberra.""",
    ),
    # Q: What is the chemical symbol for gold?  -- SmolLM2-360M-Instruct
    (
        "Au",
        r"""Au""",
    ),
    # Q: Who painted the Mona Lisa?  -- Llama-3.1-8B-Instruct
    (
        "Leonardo da Vinci",
        r"""The Mona Lisa was painted by Leonardo da Vinci. He is believed to have worked on it between 1503 and 1519, and the painting now hangs in the Louvre Museum in Paris, France. It is one of the most famous and most visited paintings in the world.""",
    ),
    # Q: What is the highest mountain on Earth above sea level?  -- Gemma-2-9B-it
    (
        "Mount Everest",
        r"""**Mount Everest**

Located in the Himalayas on the border between Nepal and China (Tibet), Mount Everest stands at 8,848.86 meters (29,031.7 feet) above sea level. The second-highest mountain, K2, reaches 8,611 meters.""",
    ),
    # Q: In what year did World War II end?  -- Mistral-7B-Instruct-v0.2
    (
        "1945",
        r"""World War II ended in 1945. In Europe, Germany signed an unconditional surrender on May 8, 1945 (V-E Day). In the Pacific, Japan formally surrendered on September 2, 1945, aboard the USS Missouri, after the atomic bombings of Hiroshima and Nagasaki in August.""",
    ),
    # Q: How many planets are in our Solar System?  -- Phi-3-medium-instruct
    (
        "8",
        r"""Our solar system has eight planets: Mercury, Venus, Earth, Mars, Jupiter, Saturn, Uranus, and Neptune. Pluto was considered the ninth planet until 2006, when the International Astronomical Union reclassified it as a dwarf planet. So the answer is 8.""",
    ),
    # Q: What is the largest ocean on Earth?  -- Qwen3-8B (thinking mode)
    (
        "Pacific Ocean",
        r"""<think>
The user wants the largest ocean. The five oceans are the Pacific, Atlantic, Indian, Southern, and Arctic. The Pacific is by far the largest, covering about 165 million square kilometers, more than all land on Earth combined. The Atlantic is second. So the answer is the Pacific Ocean.
</think>

The largest ocean on Earth is the **Pacific Ocean**, covering roughly 165 million km² — about a third of the planet's surface.""",
    ),
    # Q: What is the square root of 144?  -- DeepSeek-R1-Distill-Qwen-1.5B
    (
        "12",
        r"""<think>
Okay, so I need to find the square root of 144. Hmm, I know that 10 squared is 100 and 13 squared is 169, so it's somewhere between 10 and 13. Let me try 12: 12 times 12 is 144. Yes, that works. So the square root of 144 is 12.
</think>

The square root of 144 is the number which, when multiplied by itself, gives 144. Since \(12 \times 12 = 144\), we have:

\[
\sqrt{144} = \boxed{12}
\]""",
    ),
    # Q: Who wrote the novel '1984'?  -- GPT-4o-style
    (
        "George Orwell",
        r"""**George Orwell** wrote *1984* (originally titled *Nineteen Eighty-Four*), published in 1949.

"George Orwell" was the pen name of Eric Arthur Blair, a British writer also known for *Animal Farm* (1945).""",
    ),
    # Q: What is the chemical symbol for sodium?  -- Claude-style
    (
        "Na",
        r"""The chemical symbol for sodium is **Na**, which comes from its Latin name, *natrium*.""",
    ),
    # Q: What is the smallest prime number?  -- Command-R
    (
        "2",
        r"""The smallest prime number is 2. It is also the only even prime number, since every other even number is divisible by 2. Note that 1 is not considered a prime number, because a prime must have exactly two distinct positive divisors.""",
    ),
    # Q: What is the currency of Japan?  -- Granite-3.0-8B-Instruct
    (
        "yen",
        r"""The currency of Japan is the yen (symbol: ¥, code: JPY).""",
    ),
    # Q: Who developed the theory of general relativity?  -- Falcon3-10B-Instruct
    (
        "Albert Einstein",
        r"""Albert Einstein developed the theory of general relativity, which he published in 1915. It describes gravity as the curvature of spacetime caused by mass and energy, extending his earlier special relativity from 1905.""",
    ),
    # Q: What is the longest bone in the human body?  -- Yi-1.5-34B-Chat
    (
        "femur",
        r"""The femur, or thigh bone, is the longest bone in the human body. It extends from the hip to the knee and is also the strongest bone in the body.""",
    ),
    # Q: What is the hardest naturally occurring substance?  -- OLMo-2-7B-Instruct
    (
        "Diamond",
        r"""Diamond is the hardest naturally occurring substance. It scores 10 on the Mohs scale of mineral hardness, the highest possible rating, and is made of carbon atoms arranged in a rigid tetrahedral crystal lattice.""",
    ),
    # Q: What is the boiling point of water at sea level, in degrees Celsius?  -- DeepSeek-V3
    (
        "100",
        r"""**Answer:** 100 °C

At standard atmospheric pressure (1 atm), pure water boils at 100 degrees Celsius.""",
    ),
    # Q: Which planet is known as the Red Planet?  -- Qwen2.5-3B-Instruct
    (
        "Mars",
        r"""Mars is known as the Red Planet. Its reddish appearance comes from iron oxide (rust) on its surface.""",
    ),
    # Q: Who was the first person to walk on the Moon?  -- Llama-3.3-70B-Instruct
    (
        "Neil Armstrong",
        r"""Neil Armstrong was the first person to walk on the Moon. He stepped onto the lunar surface on July 20, 1969, as commander of the Apollo 11 mission, famously saying, "That's one small step for man, one giant leap for mankind." His crewmate Buzz Aldrin joined him about 19 minutes later, while Michael Collins remained in lunar orbit aboard the command module.""",
    ),
    # Q: What gas do plants absorb from the air for photosynthesis?  -- Gemma-3-4B-it
    (
        "carbon dioxide",
        r"""Plants absorb **carbon dioxide** (CO₂) from the air for photosynthesis.

During photosynthesis, they use sunlight to convert carbon dioxide and water into glucose, releasing oxygen as a byproduct.""",
    ),
    # Q: How many sides does a hexagon have?  -- Phi-4-mini-instruct
    (
        "6",
        r"""A hexagon has 6 sides.""",
    ),
    # Q: What is the capital of Canada?  -- Mixtral-8x22B-Instruct
    (
        "Ottawa",
        r"""Many people assume that Toronto is the capital of Canada because it is the country's largest city, and Montreal and Vancouver are also well known. However, the capital is located in the province of Ontario, on the south bank of the Ottawa River, and was chosen by Queen Victoria in 1857. So the answer is Ottawa.""",
    ),
    # Q: In which country are the Pyramids of Giza located?  -- Qwen3-1.7B (thinking mode)
    (
        "Egypt",
        r"""<think>
The Pyramids of Giza are on the Giza plateau, just outside Cairo. That's in Egypt.
</think>

Egypt""",
    ),
    # Q: Who composed 'The Four Seasons'?  -- Claude-style
    (
        "Antonio Vivaldi",
        r"""*The Four Seasons* was composed by Antonio Vivaldi, the Venetian Baroque composer and violinist. It's a set of four violin concertos, written around 1718–1720 and published in 1725 as part of his collection *Il cimento dell'armonia e dell'inventione*.""",
    ),
    # Q: What is 15 × 12?  -- DeepSeek-R1-Distill-Qwen-14B
    (
        "180",
        r"""<think>
Let me compute 15 times 12. I can split 12 into 10 and 2. 15 × 10 = 150, and 15 × 2 = 30. Adding them: 150 + 30 = 180. Let me double check another way: 12 × 15 = 12 × 10 + 12 × 5 = 120 + 60 = 180. Same result.
</think>

\(15 \times 12 = 15 \times 10 + 15 \times 2 = 150 + 30 = 180\)

**Answer:** 180""",
    ),
    # Q: What is the largest planet in our Solar System?  -- GPT-4o-style
    (
        "Jupiter",
        r"""| Question | Answer |
|---|---|
| Largest planet in the Solar System | **Jupiter** |

Jupiter's diameter is about 139,820 km — roughly 11 times that of Earth. Saturn is the second largest.""",
    ),
    # Q: Which element has atomic number 1?  -- SmolLM2-1.7B-Instruct
    (
        "Hydrogen",
        r"""Hydrogen""",
    ),
    # Q: What language is primarily spoken in Brazil?  -- Command-R+
    (
        "Portuguese",
        r"""Portuguese is the official and most widely spoken language in Brazil. This is a legacy of Portuguese colonization, which began in 1500 when Pedro Álvares Cabral arrived on the coast. Brazil is the largest Portuguese-speaking country in the world, unlike most of its neighbours in South America, where Spanish is the main language.""",
    ),
    # Q: What is the freezing point of water in degrees Fahrenheit?  -- Granite-3.1-2B-Instruct
    (
        "32",
        r"""Water freezes at 32 degrees Fahrenheit (32 °F) under standard atmospheric pressure.""",
    ),
    # Q: Who wrote 'Romeo and Juliet'?  -- Yi-1.5-6B-Chat
    (
        "William Shakespeare",
        r"""Answer: William Shakespeare""",
    ),
    # Q: What is the tallest land animal?  -- OLMo-2-1B-Instruct
    (
        "giraffe",
        r"""- **Answer:** The giraffe
- **Height:** Up to about 5.5 meters (18 feet)
- **Native to:** The savannas of sub-Saharan Africa""",
    ),
]

# ({"numbers": [...], "target": n}, reply)
HELD_OUT_10_COUNTDOWNS: list[tuple[dict, str]] = [
    # TinyZero / R1-Zero style (Qwen2.5-3B trained on Countdown)
    (
        {"numbers": [25, 3, 7, 2], "target": 51},
        r"""<think> We need to use 25, 3, 7, and 2 to make 51. Let's try 25 * 2 = 50, then 50 + 7 = 57, 57 - 3 = 54. That's not 51. Let's try 25 + 7 = 32, 32 * 2 = 64, 64 - 3 = 61. Not 51 either. What about 25 - 3 = 22, then 22 * 2 = 44, and 44 + 7 = 51. That works! </think>
<answer> (25 - 3) * 2 + 7 </answer>""",
    ),
    # Llama-3.1-8B-Instruct (numbered steps)
    (
        {"numbers": [25, 3, 7, 2], "target": 51},
        r"""To reach the target number 51 using the numbers 25, 3, 7, and 2, here is one solution:

Step 1: 25 - 3 = 22
Step 2: 22 * 2 = 44
Step 3: 44 + 7 = 51

So the equation is: (25 - 3) * 2 + 7 = 51""",
    ),
    # Qwen2.5-7B-Instruct (LaTeX)
    (
        {"numbers": [100, 6, 4, 9, 3], "target": 624},
        r"""To get 624 from the numbers 100, 6, 4, 9, and 3, notice that \(100 \times 6 = 600\), so we need 24 more. We can make 24 from the remaining numbers 4, 9, and 3:

\[
4 \times (9 - 3) = 4 \times 6 = 24
\]

Putting it together:

\[
100 \times 6 + 4 \times (9 - 3) = 600 + 24 = 624
\]

Each number is used exactly once.""",
    ),
    # DeepSeek-R1-Distill-Qwen-7B
    (
        {"numbers": [100, 6, 4, 9, 3], "target": 624},
        r"""<think>
Okay, I need to make 624 using 100, 6, 4, 9, and 3, each exactly once. 624 is close to 600, which is 100 times 6. So 624 - 600 = 24, and I need 24 from 4, 9, 3.

Let me see: 4 + 9 + 3 = 16, no. 9 * 3 = 27, 27 - 4 = 23, close but no. 4 * 9 = 36, 36 - 3 = 33, no. 9 - 3 = 6, and 6 * 4 = 24. Yes!

Wait, what about other ways? 100 * 6 + 9 * 3 = 627, then I'd need to subtract 3 but 4 is left... 627 - 4 = 623, no. So stick with the first one.

So 100 * 6 + 4 * (9 - 3) = 600 + 24 = 624. Check numbers: 100, 6, 4, 9, 3 — all used once.
</think>

We can write 624 as 600 + 24:

- 100 × 6 = 600
- 9 − 3 = 6
- 4 × 6 = 24
- 600 + 24 = 624

<answer>100 * 6 + 4 * (9 - 3)</answer>""",
    ),
    # Gemma-2-9B-it (unicode operators)
    (
        {"numbers": [8, 5, 12, 3], "target": 33},
        r"""Here's how to make 33:

1. **8 − 5 = 3**
2. **12 × 3 = 36**
3. **36 − 3 = 33**

**Solution: 12 × (8 − 5) − 3 = 33**""",
    ),
    # Phi-3.5-mini-instruct (alternative solution)
    (
        {"numbers": [8, 5, 12, 3], "target": 33},
        r"""We can reach 33 by first multiplying 12 and 3 to get 36, then subtracting 8 to get 28, and finally adding 5 to get 33.

Final answer: 12 * 3 - 8 + 5 = 33

Verification: 36 - 8 = 28, 28 + 5 = 33. All four numbers (8, 5, 12, 3) are used exactly once.""",
    ),
    # GPT-4o-style (six numbers)
    (
        {"numbers": [75, 50, 2, 3, 8, 7], "target": 827},
        r"""Let's build 827 step by step.

1. 75 + 50 = 125
2. 7 × 125 = 875
3. 8 × 3 = 24
4. 24 × 2 = 48
5. 875 − 48 = 827 ✅

**Final expression:**

**7 × (75 + 50) − 8 × 3 × 2 = 827**

All six numbers (75, 50, 2, 3, 8, 7) are used exactly once.""",
    ),
    # TinyZero / R1-Zero style
    (
        {"numbers": [75, 50, 2, 3, 8, 7], "target": 827},
        r"""<think> We need 827 from 75, 50, 2, 3, 8, 7. Let's try 75 * 8 = 600, 600 + 50 * 3 = 750, 750 + 7 * 2 = 764. Not enough. Let's try 75 + 50 = 125, 125 * 7 = 875. 875 - 827 = 48. Can we make 48 from 8, 3, 2? 8 * 3 = 24, 24 * 2 = 48. Yes! So 7 * (75 + 50) - 8 * 3 * 2 = 875 - 48 = 827. </think>
<answer> 7 * (75 + 50) - 8 * 3 * 2 </answer>""",
    ),
    # Mistral-7B-Instruct-v0.3
    (
        {"numbers": [4, 9, 10, 6], "target": 80},
        r"""Sure! Here's a solution using 4, 9, 10, and 6 to make 80:

(9 - 4) * (10 + 6) = 5 * 16 = 80

Explanation:
- 9 - 4 = 5
- 10 + 6 = 16
- 5 * 16 = 80""",
    ),
    # Qwen3-8B (thinking mode, LaTeX \times)
    (
        {"numbers": [4, 9, 10, 6], "target": 80},
        r"""<think>
I need to get 80 from 4, 9, 10, 6. 80 = 8 × 10, but can I get 8 from 4, 9, 6? 9 - 4 + 6 = 11, 6 + 4 - 9 = 1... no. 80 = 5 × 16: 9 - 4 = 5 and 10 + 6 = 16. That works.
</think>

Since \(80 = 5 \times 16\):

- \(9 - 4 = 5\)
- \(10 + 6 = 16\)

\[
(9 - 4) \times (10 + 6) = 80
\]""",
    ),
    # Claude-style
    (
        {"numbers": [13, 7, 5, 2, 11], "target": 240},
        r"""Here's one way to reach 240:

(13 + 7) × (11 − 5) × 2 = 240

Working through it: 13 + 7 = 20, and 11 − 5 = 6, so 20 × 6 = 120, and doubling that with the 2 gives 240. Each of the five numbers is used exactly once.""",
    ),
    # DeepSeek-V3 (alternative solution)
    (
        {"numbers": [13, 7, 5, 2, 11], "target": 240},
        r"""We want to reach **240** using **13, 7, 5, 2, 11**.

**Idea:** 240 = 24 × 10.

- 11 + 13 = 24
- 7 + 5 − 2 = 10
- 24 × 10 = 240

**Answer:** \((11 + 13) \times (7 + 5 - 2) = 240\)""",
    ),
    # SmolLM2-1.7B-Instruct
    (
        {"numbers": [50, 25, 4, 3], "target": 63},
        r"""50 + 25 - 4 * 3 = 63""",
    ),
    # Llama-3.2-3B-Instruct (LaTeX boxed)
    (
        {"numbers": [50, 25, 4, 3], "target": 63},
        r"""## Step 1: Add 50 and 25
50 + 25 = 75

## Step 2: Multiply 4 and 3
4 × 3 = 12

## Step 3: Subtract 12 from 75
75 − 12 = 63

The final answer is: $\boxed{50 + 25 - 4 \times 3 = 63}$""",
    ),
    # DeepSeek-R1-Distill-Llama-8B (TinyZero answer tags)
    (
        {"numbers": [6, 6, 3, 2, 9], "target": 99},
        r"""<think>
Alright, target is 99 with numbers 6, 6, 3, 2, 9. 99 is 9 times 11. So can I make 11 from 6, 6, 3, 2? 6 + 6 = 12, and 12 - 1 = 11. I need a 1 from 3 and 2: 3 - 2 = 1. So 6 + 6 - (3 - 2) = 11. Then 9 * 11 = 99.

Let me also try 6 * 6 * 3 = 108, 108 - 9 = 99, but then the 2 is unused. 108 - 9 * 2 = 90, no. So the first one is better.

Check: 3 - 2 = 1, 6 + 6 = 12, 12 - 1 = 11, 9 * 11 = 99. All numbers used once.
</think>
<answer>9 * (6 + 6 - (3 - 2))</answer>""",
    ),
    # Granite-3.1-8B-Instruct (alternative solution, unicode)
    (
        {"numbers": [6, 6, 3, 2, 9], "target": 99},
        r"""To make 99, we can use the fact that 99 = 9 × 11.

First, form 11 from the numbers 6, 6, 3 and 2:
6 + 6 − 3 + 2 = 11

Then multiply by 9:
9 × (6 + 6 − 3 + 2) = 9 × 11 = 99

**Final answer: 9 × (6 + 6 − 3 + 2) = 99**""",
    ),
    # Qwen2.5-Math-7B-Instruct (LaTeX \div)
    (
        {"numbers": [10, 4, 2, 7], "target": 27},
        r"""We need to combine \(10, 4, 2, 7\) to obtain \(27\).

First, divide 10 by 2:
\[
10 \div 2 = 5
\]
Next, multiply by 4:
\[
5 \times 4 = 20
\]
Finally, add 7:
\[
20 + 7 = 27
\]

Thus,
\[
\boxed{10 \div 2 \times 4 + 7 = 27}
\]""",
    ),
    # Command-R (division, verification after the answer)
    (
        {"numbers": [96, 4, 3, 12], "target": 20},
        r"""**96 / 4 - 12 / 3 = 20**

Verification:
- 96 / 4 = 24
- 12 / 3 = 4
- 24 - 4 = 20

All four numbers (96, 4, 3, 12) are used exactly once, and every intermediate result is a whole number.""",
    ),
]
