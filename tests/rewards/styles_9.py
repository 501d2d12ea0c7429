"""Ninth held-out set of correct model replies.

Typical default replies of named model families (Qwen, Llama, Gemma, Mistral,
Phi, DeepSeek-R1 distills, SmolLM2, OLMo-2, GPT-4o-style, Claude-style,
Command-R, Yi, InternLM, ...) to multiple-choice questions, short factual
questions and Countdown arithmetic puzzles.

Every reply is CORRECT and commits to exactly one final answer. The set was
written by a separate author before any verifier was read, and is data only:
nothing here imports or calls project code.

- ``HELD_OUT_9_CHOICES``: (gold_letter, question_with_options, reply)
- ``HELD_OUT_9_TEXTS``: (gold_short_answer, reply); the question is in the
  comment above each entry.
- ``HELD_OUT_9_COUNTDOWNS``: ({"numbers": [...], "target": n}, reply); each
  final expression uses every given number exactly once with + - * / and
  integer intermediate results.
"""

from __future__ import annotations

HELD_OUT_9_CHOICES: list[tuple[str, str, str]] = [
    # Qwen2.5-7B-Instruct: answer first, bold, short explanation.
    (
        "B",
        "Which planet is known as the Red Planet?\nA) Venus\nB) Mars\nC) Jupiter\nD) Saturn",
        """The correct answer is **B) Mars**.

Mars is often called the "Red Planet" because iron oxide (rust) on its surface gives it a distinctive reddish appearance.""",
    ),
    # Llama-3.1-8B-Instruct: answer sentence, then notes on the other options.
    (
        "B",
        "Which planet is known as the Red Planet?\n(A) Venus\n(B) Mars\n(C) Jupiter\n(D) Saturn",
        """The answer is (B) Mars.

Mars appears red because its soil and rocks are rich in iron oxide, also known as rust. Venus is covered in thick yellowish clouds, while Jupiter and Saturn are gas giants with banded, mostly tan and white appearances.""",
    ),
    # Qwen3-8B (thinking mode): <think> block, then bold final answer.
    (
        "A",
        "What is the chemical symbol for gold?\nA. Au\nB. Ag\nC. Gd\nD. Go",
        """<think>
Okay, the question asks for the chemical symbol for gold. Let me recall. Silver is Ag, from the Latin "argentum". Gold comes from the Latin "aurum", so its symbol is Au. Gd is gadolinium, a rare earth element. "Go" isn't an element symbol at all. So the answer is A.
</think>

The chemical symbol for gold is **Au**, which comes from the Latin word *aurum*.

**Answer: A**""",
    ),
    # Gemma-2-9b-it: bold option as the first line, explanation after.
    (
        "C",
        "In which year did World War II end?\n(A) 1939\n(B) 1942\n(C) 1945\n(D) 1950",
        """**(C) 1945**

World War II ended in 1945. Germany surrendered unconditionally in May 1945 (V-E Day), and Japan formally surrendered on September 2, 1945, following the atomic bombings of Hiroshima and Nagasaki and the Soviet declaration of war. """,
    ),
    # DeepSeek-R1-Distill-Qwen-7B: think block rejecting options, boxed letter.
    (
        "C",
        "In which year did World War II end?\n(A) 1939\n(B) 1942\n(C) 1945\n(D) 1950",
        r"""<think>
Alright, so I need to figure out when World War II ended. Let me think. 1939 is when the war started, with Germany invading Poland, so that's not the end. 1942 was in the middle of the war, that's around the Battle of Midway and Stalingrad. 1950 is when the Korean War started, so that's too late. Germany surrendered in May 1945 and Japan surrendered in August, signing the formal surrender in September 1945. So the war ended in 1945, which is option C.
</think>

World War II ended in 1945, with Germany's surrender in May and Japan's formal surrender on September 2, 1945.

\[
\boxed{C}
\]""",
    ),
    # Mistral-7B-Instruct-v0.3: leading space, one paragraph.
    (
        "D",
        "What is the capital of Australia? A) Sydney B) Melbourne C) Perth D) Canberra",
        """ The capital of Australia is Canberra, so the correct answer is D) Canberra. Many people assume it is Sydney or Melbourne, since they are the largest cities, but Canberra was purpose-built as a compromise between the two and has been the seat of the federal government since 1927.""",
    ),
    # Phi-3-mini-4k-instruct: "Answer:" line then "Explanation:".
    (
        "D",
        "What is the capital of Australia? A) Sydney B) Melbourne C) Perth D) Canberra",
        """Answer: D) Canberra

Explanation: While Sydney (A) is Australia's largest and best-known city, and Melbourne (B) served as the temporary seat of government from 1901 to 1927, the official capital of Australia is Canberra. Perth (C) is the capital of the state of Western Australia, not of the country. Canberra was specifically planned and built to serve as the national capital.""",
    ),
    # GPT-4o-style: bullets, display math, bold final answer with option text.
    (
        "B",
        "A train travels 180 km in 2 hours and then 120 km in 1.5 hours. What is its average speed for the whole trip?\nA) 80 km/h\nB) 85.7 km/h\nC) 90 km/h\nD) 75 km/h\nE) 100 km/h",
        r"""To find the average speed, divide the total distance by the total time.

- **Total distance:** 180 km + 120 km = 300 km
- **Total time:** 2 h + 1.5 h = 3.5 h

$$
\text{Average speed} = \frac{300}{3.5} \approx 85.7 \text{ km/h}
$$

Note that simply averaging the two speeds (90 km/h and 80 km/h) would give 85 km/h, which is not correct, because the train spends different amounts of time at each speed.

**Answer: B) 85.7 km/h**""",
    ),
    # Claude-style: brief reasoning, then "The answer is **B**."
    (
        "B",
        "A train travels 180 km in 2 hours and then 120 km in 1.5 hours. What is its average speed for the whole trip?\nA) 80 km/h\nB) 85.7 km/h\nC) 90 km/h\nD) 75 km/h\nE) 100 km/h",
        """Average speed over the whole trip is total distance divided by total time, not the average of the two speeds.

Total distance = 180 + 120 = 300 km
Total time = 2 + 1.5 = 3.5 hours

Average speed = 300 ÷ 3.5 ≈ 85.7 km/h

The answer is **B**.""",
    ),
    # Llama-3.2-3B-Instruct: "The correct answer is D. Mitochondrion." then explanation.
    (
        "D",
        "Which organelle is the primary site of ATP production in eukaryotic cells?\nA. Nucleus\nB. Ribosome\nC. Golgi apparatus\nD. Mitochondrion",
        """The correct answer is D. Mitochondrion.

The mitochondrion is often referred to as the "powerhouse" of the cell because it is where cellular respiration takes place. Through the citric acid cycle and oxidative phosphorylation, mitochondria produce most of the ATP (adenosine triphosphate) that the cell uses for energy.""",
    ),
    # OLMo-2-1124-7B-Instruct: explanation rejecting others, then "Therefore, the answer is D."
    (
        "D",
        "Which organelle is the primary site of ATP production in eukaryotic cells?\nA. Nucleus\nB. Ribosome\nC. Golgi apparatus\nD. Mitochondrion",
        """Mitochondria are the site of aerobic respiration in eukaryotic cells, where the electron transport chain and ATP synthase generate the majority of the cell's ATP. The nucleus stores the cell's genetic material, ribosomes synthesize proteins, and the Golgi apparatus modifies, sorts, and packages proteins for transport. None of these is the main producer of ATP.

Therefore, the answer is D.""",
    ),
    # Command-R: "The correct answer is (B) ..." with supporting evidence from the passage.
    (
        "B",
        "Passage: Maria had planned to go hiking on Saturday, but when she woke up, rain was pounding against the windows and the trail reports said the river crossing was flooded. She sighed, put her boots back in the closet, and called her sister to ask whether the museum was open.\n\nQuestion: Why did Maria most likely call her sister?\n(A) To invite her on the hike\n(B) To find an alternative activity for the day\n(C) To complain about the trail reports\n(D) To borrow a raincoat",
        """The correct answer is (B) To find an alternative activity for the day.

The passage explains that Maria's hiking plans were ruined by the rain and the flooded river crossing. She put her boots away, which shows she gave up on the hike, and then asked her sister whether the museum was open. This suggests she was looking for something else to do instead of hiking.""",
    ),
    # Qwen3-14B (thinking mode): long think block evaluating each option.
    (
        "B",
        "Passage: Maria had planned to go hiking on Saturday, but when she woke up, rain was pounding against the windows and the trail reports said the river crossing was flooded. She sighed, put her boots back in the closet, and called her sister to ask whether the museum was open.\n\nQuestion: Why did Maria most likely call her sister?\n(A) To invite her on the hike\n(B) To find an alternative activity for the day\n(C) To complain about the trail reports\n(D) To borrow a raincoat",
        """<think>
Okay, let's see. The passage says Maria planned to hike, but it was raining and the river crossing was flooded. She put her boots back in the closet, so she's clearly not going hiking anymore. Then she called her sister to ask whether the museum was open.

Option A, inviting her sister on the hike, doesn't make sense because she just cancelled the hike. Option C, complaining about the trail reports, isn't supported; the call is about the museum, not the trail. Option D, borrowing a raincoat, would only make sense if she were still going out in the rain for the hike, and the passage doesn't mention a raincoat at all. Option B fits: asking if the museum is open means she's looking for something else to do that day.

So the answer should be B.
</think>

Maria cancels her hike because of the rain and the flooded river crossing, as shown by her putting her boots back in the closet. She then asks her sister whether the museum is open, which indicates she is looking for a different way to spend the day.

**Answer: (B)**""",
    ),
    # SmolLM2-1.7B-Instruct: one short paragraph.
    (
        "C",
        "If 3x + 7 = 22, what is the value of x?\nA) 3\nB) 4\nC) 5\nD) 6",
        """To solve 3x + 7 = 22, subtract 7 from both sides to get 3x = 15. Then divide both sides by 3 to get x = 5. The answer is C) 5.""",
    ),
    # Gemma-3-12b-it: numbered bold steps, "which is option **C**".
    (
        "C",
        "If 3x + 7 = 22, what is the value of x?\nA) 3\nB) 4\nC) 5\nD) 6",
        """Here's how to solve the equation:

1. **Subtract 7 from both sides:**
   3x + 7 - 7 = 22 - 7
   3x = 15

2. **Divide both sides by 3:**
   3x / 3 = 15 / 3
   x = 5

Therefore, the value of x is **5**, which is option **C**.""",
    ),
    # DeepSeek-R1-Distill-Llama-8B: think block that checks every option, boxed letter.
    (
        "C",
        "If 3x + 7 = 22, what is the value of x?\nA) 3\nB) 4\nC) 5\nD) 6",
        r"""<think>
First, I'll isolate x. Subtract 7 from both sides: 3x = 22 - 7 = 15. Then divide by 3: x = 5.

Wait, let me double-check by plugging in the options. If x = 3, 3(3) + 7 = 16, not 22. If x = 4, 3(4) + 7 = 19, no. If x = 5, 3(5) + 7 = 22, yes. If x = 6, 3(6) + 7 = 25, too big. So x = 5, which is option C.
</think>

To solve \(3x + 7 = 22\):

1. Subtract 7 from both sides: \(3x = 15\)
2. Divide both sides by 3: \(x = 5\)

Check: \(3(5) + 7 = 15 + 7 = 22\). ✓

\(\boxed{C}\)""",
    ),
    # Yi-1.5-9B-Chat: option first line, then context about other authors.
    (
        "A",
        "Who wrote the novel '1984'?\nA) George Orwell\nB) Aldous Huxley\nC) Ray Bradbury\nD) H. G. Wells",
        """A) George Orwell

"1984" (Nineteen Eighty-Four) is a dystopian novel written by George Orwell and published in 1949. It depicts a totalitarian society ruled by the Party and its leader, Big Brother. The other authors also wrote famous works of speculative fiction: Aldous Huxley wrote "Brave New World," Ray Bradbury wrote "Fahrenheit 451," and H. G. Wells wrote "The Time Machine." """,
    ),
    # InternLM2.5-7B-Chat: compact, "So the answer is A."
    (
        "A",
        "Who wrote the novel '1984'?\nA) George Orwell\nB) Aldous Huxley\nC) Ray Bradbury\nD) H. G. Wells",
        """The novel *1984* was written by George Orwell, the pen name of Eric Arthur Blair, and was published in 1949. So the answer is A.""",
    ),
    # Phi-4: markdown heading, bold option, explanation.
    (
        "D",
        "What is the largest ocean on Earth?\nA. Atlantic\nB. Indian\nC. Arctic\nD. Pacific\nE. Southern",
        """## Answer

**D. Pacific**

The Pacific Ocean is the largest and deepest of Earth's oceanic divisions, covering roughly 165 million square kilometers, which is more than all of Earth's land area combined. The Atlantic is the second largest, followed by the Indian, Southern, and Arctic Oceans.""",
    ),
    # Mixtral-8x7B-Instruct: sentence, then the option on its own line.
    (
        "D",
        "What is the largest ocean on Earth?\nA. Atlantic\nB. Indian\nC. Arctic\nD. Pacific\nE. Southern",
        """The largest ocean on Earth is the Pacific Ocean. Therefore, the correct option is:

D. Pacific""",
    ),
    # Llama-3.1-70B-Instruct: answer first, explanation mentions another option letter.
    (
        "C",
        "Which gas do plants primarily absorb from the atmosphere for photosynthesis?\n(A) Oxygen\n(B) Nitrogen\n(C) Carbon dioxide\n(D) Hydrogen",
        """The correct answer is (C) Carbon dioxide.

During photosynthesis, plants absorb carbon dioxide (CO2) from the air through small pores in their leaves called stomata. Using energy from sunlight, they combine the carbon dioxide with water to produce glucose, and they release oxygen as a byproduct. So while oxygen is involved in photosynthesis, it is produced rather than absorbed.""",
    ),
    # Qwen2.5-Math-7B-Instruct style: equation, then "The answer is: $\boxed{C}$".
    (
        "C",
        "Which gas do plants primarily absorb from the atmosphere for photosynthesis?\n(A) Oxygen\n(B) Nitrogen\n(C) Carbon dioxide\n(D) Hydrogen",
        r"""Plants take in carbon dioxide and water and, using light energy, convert them into glucose and oxygen:

$$6\text{CO}_2 + 6\text{H}_2\text{O} \xrightarrow{\text{light}} \text{C}_6\text{H}_{12}\text{O}_6 + 6\text{O}_2$$

So the gas that plants primarily absorb from the atmosphere for photosynthesis is carbon dioxide.

The answer is: $\boxed{C}$""",
    ),
    # Claude-style: terse working, bold option with its text as the last line.
    (
        "A",
        "A store sells pencils at 3 for $0.75. How much do 12 pencils cost?\nA) $3.00\nB) $2.25\nC) $3.50\nD) $4.00",
        """12 pencils is 4 groups of 3 pencils (12 ÷ 3 = 4). Each group costs $0.75, so the total is 4 × $0.75 = $3.00.

**A) $3.00**""",
    ),
    # GPT-4o-mini: numbered steps, "So, the correct answer is **A) $3.00**."
    (
        "A",
        "A store sells pencils at 3 for $0.75. How much do 12 pencils cost?\nA) $3.00\nB) $2.25\nC) $3.50\nD) $4.00",
        """To find the cost of 12 pencils:

1. Find the price per pencil: $0.75 ÷ 3 = $0.25
2. Multiply by 12: 12 × $0.25 = $3.00

So, the correct answer is **A) $3.00**.""",
    ),
    # Gemma-2-9b-it: bold answer sentence, historical context.
    (
        "C",
        "The Treaty of Versailles formally ended which conflict?\nA) The Napoleonic Wars\nB) The Franco-Prussian War\nC) World War I\nD) World War II",
        """The answer is **(C) World War I**.

The Treaty of Versailles was signed on June 28, 1919, exactly five years after the assassination of Archduke Franz Ferdinand. It formally ended the state of war between Germany and the Allied Powers and imposed heavy reparations and territorial losses on Germany. """,
    ),
    # OLMo-2-1124-13B-Instruct: goes through every option, "Final answer: C".
    (
        "C",
        "The Treaty of Versailles formally ended which conflict?\nA) The Napoleonic Wars\nB) The Franco-Prussian War\nC) World War I\nD) World War II",
        """Let's go through the options one by one.

The Napoleonic Wars ended in 1815 with Napoleon's defeat at Waterloo and the settlement reached at the Congress of Vienna, so A is not correct. The Franco-Prussian War ended in 1871 with the Treaty of Frankfurt, so B is not correct either. World War II ended in 1945 with the surrenders of Germany and Japan, not with the Treaty of Versailles, so D is also wrong. The Treaty of Versailles was signed in 1919 and formally ended World War I between Germany and the Allies.

Final answer: C""",
    ),
    # Command-R+: short geographic context, "Correct answer: E) Nile".
    (
        "E",
        "Which river flows through Cairo? A) Tigris B) Euphrates C) Congo D) Niger E) Nile",
        """Cairo, the capital of Egypt, sits on the banks of the Nile River, just south of the point where the river fans out into the Nile Delta.

Correct answer: E) Nile""",
    ),
    # DeepSeek-R1: think block eliminating rivers, bold final option.
    (
        "E",
        "Which river flows through Cairo? A) Tigris B) Euphrates C) Congo D) Niger E) Nile",
        """<think>
Hmm, Cairo is the capital of Egypt. The Tigris and the Euphrates flow through Turkey, Syria, and Iraq, so those are Mesopotamian rivers, not Egyptian. The Congo is in Central Africa, and the Niger flows through West Africa, through countries like Mali and Nigeria. The river in Egypt is the Nile, and Cairo is right on it. So the answer is E.
</think>

Cairo is located on the Nile, the river that runs northward through Egypt into the Mediterranean Sea. The Tigris and Euphrates are in Mesopotamia (modern Iraq), the Congo is in Central Africa, and the Niger is in West Africa.

**E) Nile**""",
    ),
    # Yi-34B-Chat: power rule, "Answer: B".
    (
        "B",
        "What is the derivative of x^3 with respect to x?\nA) x^2\nB) 3x^2\nC) 3x\nD) x^4/4",
        """Using the power rule, d/dx(x^n) = n·x^(n-1). For x^3, this gives 3·x^(3-1) = 3x^2.

Answer: B""",
    ),
    # Qwen3-4B (non-thinking mode, empty think block): LaTeX, bold answer with option text.
    (
        "B",
        "What is the derivative of x^3 with respect to x?\nA) x^2\nB) 3x^2\nC) 3x\nD) x^4/4",
        r"""<think>

</think>

Using the power rule $\frac{d}{dx}x^n = nx^{n-1}$:

$$\frac{d}{dx}x^3 = 3x^{2}$$

Option D, $\frac{x^4}{4}$, is the antiderivative of $x^3$, not its derivative.

**Answer: B) $3x^2$**""",
    ),
]


HELD_OUT_9_TEXTS: list[tuple[str, str]] = [
    # Q: What is the capital of Australia?  (Qwen2.5-7B-Instruct, one sentence)
    (
        "Canberra",
        """The capital of Australia is Canberra.""",
    ),
    # Q: What is the capital of Australia?  (Llama-3.1-8B-Instruct, mentions other cities)
    (
        "Canberra",
        """While Sydney is Australia's largest city and Melbourne served as the temporary seat of government until 1927, the capital of Australia is **Canberra**. It was chosen as a compromise between Sydney and Melbourne, the two rival cities, and was purpose-built as the national capital.""",
    ),
    # Q: In what year did World War II end?  (Gemma-2-9b-it, bold answer first)
    (
        "1945",
        """World War II ended in **1945**.

The war began in 1939 with Germany's invasion of Poland. In Europe it ended with Germany's surrender in May 1945, and in the Pacific it ended when Japan formally surrendered on September 2, 1945.""",
    ),
    # Q: Who wrote the novel "Pride and Prejudice"?  (Qwen3-8B, thinking mode)
    (
        "Jane Austen",
        """<think>
Okay, the user is asking who wrote "Pride and Prejudice". That's the novel with Elizabeth Bennet and Mr. Darcy, published in 1813. It's by Jane Austen. Not to be confused with Charlotte Brontë, who wrote "Jane Eyre". So the answer is Jane Austen.
</think>

"Pride and Prejudice" was written by **Jane Austen** and first published in 1813.""",
    ),
    # Q: Which element has atomic number 8?  (Phi-3-mini-4k-instruct)
    (
        "oxygen",
        """The element with atomic number 8 is oxygen (O). It has 8 protons in its nucleus and is essential for respiration in most living organisms.""",
    ),
    # Q: What is the largest planet in our solar system?  (Mistral-7B-Instruct, leading space)
    (
        "Jupiter",
        """ The largest planet in our solar system is Jupiter. It is a gas giant with a mass more than twice that of all the other planets combined, and its diameter is about 11 times that of Earth. Saturn is the second largest.""",
    ),
    # Q: What is the chemical symbol for sodium?  (DeepSeek-R1-Distill-Qwen-7B)
    (
        "Na",
        """<think>
Okay, so I need the chemical symbol for sodium. Hmm, it's not S, because that's sulfur. And it's not So. I remember that sodium's symbol comes from its Latin name, natrium, so the symbol is Na. Yeah, like NaCl for table salt, sodium chloride.
</think>

The chemical symbol for sodium is **Na**, from its Latin name *natrium*.""",
    ),
    # Q: Who painted the Mona Lisa?  (GPT-4o-style)
    (
        "Leonardo da Vinci",
        """The *Mona Lisa* was painted by **Leonardo da Vinci**, the Italian Renaissance artist. He worked on it from around 1503 until as late as 1519, and today it hangs in the Louvre Museum in Paris.""",
    ),
    # Q: How many sides does a hexagon have?  (SmolLM2-1.7B-Instruct, one line)
    (
        "6",
        """A hexagon has 6 sides.""",
    ),
    # Q: What is the square root of 144?  (Claude-style, answer with a check)
    (
        "12",
        """The square root of 144 is 12, since 12 × 12 = 144.""",
    ),
    # Q: What is the longest river in South America?  (OLMo-2-1124-7B-Instruct)
    (
        "Amazon River",
        """The longest river in South America is the Amazon River. It flows roughly 6,400 kilometers from its source in the Andes Mountains of Peru to its mouth on the Atlantic Ocean in Brazil, and it carries more water than any other river in the world.""",
    ),
    # Q: Who developed the theory of general relativity?  (Llama-3.2-1B-Instruct)
    (
        "Albert Einstein",
        """Albert Einstein developed the theory of general relativity, which he published in 1915.""",
    ),
    # Q: What is the currency of Japan?  (Command-R)
    (
        "yen",
        """The currency of Japan is the yen (¥, currency code JPY). It is issued by the Bank of Japan and is one of the most traded currencies in the world, after the US dollar and the euro.""",
    ),
    # Q: What is the hardest naturally occurring substance?  (Gemma-3-12b-it, "**Answer:**" first)
    (
        "diamond",
        """**Answer:** Diamond

Diamond is the hardest naturally occurring substance, scoring a 10 on the Mohs scale of mineral hardness. Its hardness comes from its crystal structure, in which each carbon atom is strongly bonded to four others.""",
    ),
    # Q: Who was the first person to walk on the Moon?  (Qwen2.5-72B-Instruct, mentions other astronauts)
    (
        "Neil Armstrong",
        """Neil Armstrong was the first person to walk on the Moon, on July 20, 1969, during the Apollo 11 mission. He was followed about 19 minutes later by Buzz Aldrin, while Michael Collins remained in lunar orbit aboard the command module *Columbia*.""",
    ),
    # Q: What is the smallest prime number?  (DeepSeek-R1-Distill-Qwen-14B, boxed)
    (
        "2",
        r"""<think>
Okay, the smallest prime number. A prime is a natural number greater than 1 whose only divisors are 1 and itself. 1 is not prime by definition. 2 is divisible only by 1 and 2, so it's prime. It's also the only even prime. So the smallest prime is 2.
</think>

A prime number is a natural number greater than 1 that has no positive divisors other than 1 and itself. The number 1 is not considered prime, and 2 is divisible only by 1 and 2.

The smallest prime number is $\boxed{2}$.""",
    ),
    # Q: What is the capital of Canada?  (Yi-1.5-9B-Chat, mentions Toronto)
    (
        "Ottawa",
        """Ottawa is the capital of Canada. Many people guess Toronto, which is the country's largest city, but Ottawa, located in the province of Ontario on the Ottawa River, was chosen as the capital by Queen Victoria in 1857.""",
    ),
    # Q: What is the common name of the compound H2O?  (Phi-4, bold word)
    (
        "water",
        """The common name for H₂O is **water**. Each molecule consists of two hydrogen atoms bonded to one oxygen atom.""",
    ),
    # Q: In what year did the Berlin Wall fall?  (Llama-3.1-405B-Instruct, context then "So the answer is ...")
    (
        "1989",
        """The Berlin Wall was built by the German Democratic Republic in 1961 to stop people from fleeing East Berlin to West Berlin. After weeks of mass protests, East German authorities opened the border crossings on the night of November 9, and crowds began tearing down the wall. German reunification followed on October 3, 1990.

So the answer is 1989.""",
    ),
    # Q: How many continents are there?  (InternLM2.5-7B-Chat, bold number then bullet list)
    (
        "7",
        """There are **7** continents:

- Africa
- Antarctica
- Asia
- Australia (Oceania)
- Europe
- North America
- South America""",
    ),
    # Q: Who wrote "Hamlet"?  (Gemma-2-2b-it)
    (
        "William Shakespeare",
        """**William Shakespeare** wrote *Hamlet*. It was likely written between 1599 and 1601 and is one of his most famous tragedies.""",
    ),
    # Q: At what temperature in degrees Celsius does water boil at sea level?  (Qwen3-32B, thinking mode)
    (
        "100",
        """<think>
The user is asking for the boiling point of water at sea level in Celsius. At standard atmospheric pressure (1 atm), water boils at 100 degrees Celsius, which is 212 degrees Fahrenheit. The Celsius scale was actually defined around this point originally. So the answer is 100.
</think>

At sea level, where the air pressure is 1 standard atmosphere, water boils at **100 °C** (212 °F). At higher altitudes the air pressure is lower, so water boils at a lower temperature.

**Answer:** 100""",
    ),
    # Q: What is the largest hot desert in the world?  (Mistral-Nemo-Instruct)
    (
        "Sahara",
        """The largest hot desert in the world is the Sahara, which covers about 9.2 million square kilometers across North Africa. (If cold deserts are counted too, Antarctica is the largest desert overall, but among hot deserts the Sahara is by far the biggest.)""",
    ),
    # Q: Which planet is closest to the Sun?  (GPT-4o-style)
    (
        "Mercury",
        """**Mercury** is the planet closest to the Sun, orbiting at an average distance of about 58 million kilometers (0.39 AU). It is also the smallest planet in the solar system.""",
    ),
    # Q: Which gas makes up most of Earth's atmosphere?  (Claude-style)
    (
        "nitrogen",
        """Nitrogen makes up most of Earth's atmosphere, about 78% by volume. Oxygen is second at about 21%, and argon, carbon dioxide, and trace gases make up the rest.""",
    ),
    # Q: What is 15 multiplied by 12?  (Qwen2.5-Math-7B-Instruct, boxed)
    (
        "180",
        r"""To compute \(15 \times 12\), we can split 12 into \(10 + 2\):

\[
15 \times 12 = 15 \times 10 + 15 \times 2 = 150 + 30 = 180
\]

The answer is \(\boxed{180}\).""",
    ),
    # Q: Who was the first President of the United States?  (Llama-3-8B-Instruct)
    (
        "George Washington",
        """The first President of the United States was George Washington. He served two terms, from 1789 to 1797, and was succeeded by John Adams.""",
    ),
    # Q: What is the capital of Japan?  (SmolLM2-360M-Instruct, bare answer)
    (
        "Tokyo",
        """Tokyo.""",
    ),
    # Q: What is the tallest mountain in the world above sea level?  (DeepSeek-R1-Distill-Llama-8B)
    (
        "Mount Everest",
        """<think>
Okay, tallest mountain above sea level. That's Mount Everest in the Himalayas, on the border between Nepal and China. K2 is the second highest. Mauna Kea is taller if you measure from its base on the ocean floor, but the question says above sea level, so it's Everest. The current official height is 8,849 meters.
</think>

The tallest mountain in the world above sea level is **Mount Everest**, which rises 8,849 meters (29,032 feet) on the border between Nepal and the Tibet Autonomous Region of China.""",
    ),
    # Q: How many bones are in the adult human body?  (Phi-3.5-mini-instruct, answer first then context)
    (
        "206",
        """An adult human body typically has 206 bones. Babies are born with around 270 to 300 bones, but many of them fuse together as the body grows, such as the bones of the skull and the sacrum.""",
    ),
]


HELD_OUT_9_COUNTDOWNS: list[tuple[dict, str]] = [
    # TinyZero (Qwen2.5-3B, R1-style RL): failed trials in <think>, answer tags.
    (
        {"numbers": [3, 7, 25, 50], "target": 100},
        """<think> We need to use 3, 7, 25, 50 to make 100. Let's try 50 + 25 + 7 + 3 = 85, too low. 50 * 3 = 150, 150 - 25 - 7 = 118, no. 50 + 25 = 75, 75 + 7 * 3 = 96, close but not 100. What about 50 - 25 = 25 and 7 - 3 = 4, then 25 * 4 = 100. That works! </think>
<answer> (50 - 25) * (7 - 3) </answer>""",
    ),
    # GPT-4o-style: numbered steps with unicode operators, bold equation.
    (
        {"numbers": [3, 7, 25, 50], "target": 100},
        """Here's one way to reach 100:

1. 50 − 25 = 25
2. 7 − 3 = 4
3. 25 × 4 = 100

**Equation:** (50 − 25) × (7 − 3) = 100""",
    ),
    # Qwen2.5-7B-Instruct: LaTeX inline steps, display equation at the end.
    (
        {"numbers": [2, 8, 10, 75], "target": 101},
        r"""To create an equation that equals 101 using the numbers 2, 8, 10, and 75 exactly once, we can follow these steps:

1. Multiply 8 by 2: \(8 \times 2 = 16\)
2. Add 75 to the result: \(75 + 16 = 91\)
3. Add 10: \(91 + 10 = 101\)

So the equation is:
\[
75 + 8 \times 2 + 10 = 101
\]""",
    ),
    # DeepSeek-R1-Distill-Qwen-1.5B trained in TinyZero format: trials, then <answer>.
    (
        {"numbers": [2, 8, 10, 75], "target": 101},
        """<think>
I have 2, 8, 10, 75 and need 101. 75 + 10 + 8 + 2 = 95, that's 6 short. 75 + 10 * 2 = 95, plus 8 = 103, too high. 10 * 8 = 80, 80 + 75 = 155, way over. Hmm, what about 8 * 2 = 16, then 75 + 16 = 91, and 91 + 10 = 101. Yes!
</think>
<answer>75 + (8 * 2) + 10</answer>""",
    ),
    # Llama-3.1-8B-Instruct: a near miss that leaves a number unused, then the real solution.
    (
        {"numbers": [4, 6, 9, 12], "target": 42},
        """To get 42 using the numbers 4, 6, 9, and 12, let's try a few combinations.

First attempt: 6 × 9 = 54, and 54 − 12 = 42. But that leaves the 4 unused, so it doesn't count.

Second attempt: 42 = 6 × 7, so we need to make 7 from 4, 9, and 12.
- 12 − 9 = 3
- 3 + 4 = 7
- 6 × 7 = 42

So the equation is: 6 × (12 − 9 + 4) = 42""",
    ),
    # Qwen3-8B (thinking mode): exploration in <think>, LaTeX final answer.
    (
        {"numbers": [4, 6, 9, 12], "target": 42},
        r"""<think>
Okay, I need to reach 42 using 4, 6, 9, and 12, each exactly once.

Let me try 4 × 12 = 48. Then 48 − 6 = 42, but 9 is left over. 48 − 9 = 39, 39 + 6 = 45, no.

What about factoring 42? 42 = 6 × 7. Can I make 7 from 4, 9, 12? 12 − 9 = 3, and 3 + 4 = 7. Yes! So 6 × (12 − 9 + 4) = 6 × 7 = 42.

Check: uses 6, 12, 9, 4, each once. Good.
</think>

We can write 42 as 6 × 7 and build the 7 from the remaining numbers:

- 12 − 9 = 3
- 3 + 4 = 7
- 6 × 7 = 42

**Answer:** $6 \times (12 - 9 + 4) = 42$""",
    ),
    # DeepSeek-R1-Distill-Qwen-7B: think with trials, boxed LaTeX final equation.
    (
        {"numbers": [1, 5, 6, 7, 100], "target": 570},
        r"""<think>
Alright, let's see. I have 1, 5, 6, 7, 100 and I need 570.

100 × 5 = 500, then I need 70 more from 1, 6, 7. 7 × 6 = 42, plus 1 is 43. No. 7 × (6 + 1) = 49. No, not 70.

What about 600 − 30? If I make 6 from 7 − 1, then (7 − 1) × 100 = 600. Then I still have 5 and 6, and 6 × 5 = 30. So 600 − 30 = 570. 

Let me verify: (7 − 1) = 6, 6 × 100 = 600, 6 × 5 = 30, 600 − 30 = 570. All five numbers used once.
</think>

Make 600 from \(7 - 1\) and 100, then subtract \(6 \times 5 = 30\):

\[
\boxed{(7 - 1) \times 100 - 6 \times 5 = 570}
\]""",
    ),
    # Gemma-2-9b-it: bold equation first, bullet breakdown after.
    (
        {"numbers": [1, 5, 6, 7, 100], "target": 570},
        """Here's a solution:

**100 × 6 − 5 × (7 − 1) = 570**

* 7 − 1 = 6
* 5 × 6 = 30
* 100 × 6 = 600
* 600 − 30 = 570

Each of the numbers 1, 5, 6, 7 and 100 is used exactly once.""",
    ),
    # Phi-3-mini-4k-instruct: "Step N:" lines, then "Answer:".
    (
        {"numbers": [2, 3, 4, 5], "target": 26},
        """Step 1: 5 * 4 = 20
Step 2: 3 * 2 = 6
Step 3: 20 + 6 = 26

Answer: 5 * 4 + 3 * 2 = 26""",
    ),
    # SmolLM2-1.7B after R1-style RL: short think, answer tags.
    (
        {"numbers": [2, 3, 4, 5], "target": 26},
        """<think> Let's see. 5 + 4 + 3 + 2 = 14, too small. 4 * 5 = 20. 20 + 3 + 2 = 25, one short. 20 + 3 * 2 = 26. That's it. </think> <answer> 4 * 5 + 3 * 2 </answer>""",
    ),
    # Claude-style: prose walkthrough, bold equation with ÷ and ×, note after.
    (
        {"numbers": [60, 5, 4, 9, 3], "target": 41},
        """Let me work through this.

Start with 60 ÷ 4 = 15, then 15 × 3 = 45. From there, 45 − 9 = 36, and 36 + 5 = 41.

**60 ÷ 4 × 3 − 9 + 5 = 41**

Each number (60, 5, 4, 9, 3) is used exactly once, and every intermediate result is a whole number.""",
    ),
    # TinyZero (Qwen2.5-3B): think with a near miss, different valid solution.
    (
        {"numbers": [60, 5, 4, 9, 3], "target": 41},
        """<think> We have 60, 5, 4, 9, 3 and the target is 41. Try 60 - 9 - 5 - 4 - 3 = 39, close but 2 short. Try 60 / 5 = 12, 12 * 3 = 36, 36 + 9 = 45, 45 - 4 = 41! That uses all the numbers. </think>
<answer> 60 / 5 * 3 + 9 - 4 </answer>""",
    ),
    # Mistral-7B-Instruct-v0.3: "Sure!" opener, equation line, bulleted explanation.
    (
        {"numbers": [96, 8, 7, 3], "target": 87},
        """ Sure! Here's an equation using 96, 8, 7, and 3 that equals 87:

(96 ÷ 8) × 7 + 3 = 87

Explanation:
- 96 ÷ 8 = 12
- 12 × 7 = 84
- 84 + 3 = 87""",
    ),
    # Qwen2.5-Math-7B-Instruct: \frac in display math, boxed expression.
    (
        {"numbers": [96, 8, 7, 3], "target": 87},
        r"""We need to combine 96, 8, 7, and 3, each exactly once, to obtain 87.

Notice that \(87 = 84 + 3\), and \(84 = 12 \times 7\), where \(12 = 96 \div 8\).

Therefore:
\[
\frac{96}{8} \times 7 + 3 = 12 \times 7 + 3 = 84 + 3 = 87
\]

The final answer is \(\boxed{96 \div 8 \times 7 + 3}\).""",
    ),
    # DeepSeek-V3 / GPT-4o-style: big numbers, thousands separators in steps, bold result.
    (
        {"numbers": [25, 50, 75, 100, 3, 6], "target": 952},
        """This one needs a large intermediate value. Here's a solution that uses all six numbers:

1. 100 + 6 = 106
2. 106 × 3 = 318
3. 318 × 75 = 23,850
4. 23,850 − 50 = 23,800
5. 23,800 ÷ 25 = 952

**Final equation:** ((100 + 6) × 3 × 75 − 50) ÷ 25 = 952""",
    ),
    # DeepSeek-R1-Distill-Qwen-7B in TinyZero format: several failed trials.
    (
        {"numbers": [13, 21, 44, 2], "target": 83},
        """<think>
Numbers: 13, 21, 44, 2. Target: 83.
44 + 21 + 13 + 2 = 80, 3 short.
44 * 2 = 88, 88 - 13 = 75, 75 + 21 = 96. No.
88 - 21 = 67, 67 + 13 = 80. No.
21 * 2 = 42, 42 + 44 = 86, 86 - 13 = 73. No.
13 * 2 = 26, 26 + 44 = 70, 70 + 21 = 91. No.
What about 44 - 13 = 31, 31 * 2 = 62, 62 + 21 = 83. Yes!
</think>
<answer>(44 - 13) * 2 + 21</answer>""",
    ),
    # Llama-3.2-3B-Instruct: equation first, then numbered explanation.
    (
        {"numbers": [13, 21, 44, 2], "target": 83},
        """Here's a possible solution:

(44 - 13) × 2 + 21 = 83

Here's how it works:

1. Subtract 13 from 44: 44 - 13 = 31
2. Multiply 31 by 2: 31 × 2 = 62
3. Add 21: 62 + 21 = 83

This equation uses each number exactly once and equals 83.""",
    ),
    # Qwen3-4B (thinking mode): think with one miss, bold unicode-minus final equation.
    (
        {"numbers": [19, 36, 55, 7], "target": 65},
        """<think>
Okay, numbers 19, 36, 55, 7, target 65. Let me try 55 + 7 = 62, then 62 + 36 = 98, 98 − 19 = 79. Too big.

Another idea: 55 + 36 = 91. I need to subtract 26 to get 65. And 19 + 7 = 26! So 55 + 36 − 19 − 7 = 65. Check: 91 − 19 = 72, 72 − 7 = 65. Correct.
</think>

Add the two largest numbers and subtract the other two:

- 55 + 36 = 91
- 91 − 19 = 72
- 72 − 7 = 65

**55 + 36 − 19 − 7 = 65**""",
    ),
]
