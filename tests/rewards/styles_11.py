"""Eleventh held-out set of correct model replies.

Typical default replies of named model families (Qwen2.5, Qwen3, Llama-3.x,
Gemma-2/3, Mistral, Phi-3/4, DeepSeek-R1-Distill, DeepSeek-V3, SmolLM2,
OLMo-2, GPT-4o-style, Claude-style, Command-R, Granite, Yi, InternLM) to
multiple-choice, short factual and Countdown questions.

Written by a separate author before any verifier was read, from general
knowledge of how these models answer.  Every reply is correct and commits to
exactly one final answer.  Data only: this module holds no logic.
"""

HELD_OUT_11_CHOICES: list[tuple[str, str, str]] = [
    # Qwen2.5-7B-Instruct
    (
        "C",
        "Which planet in our solar system has the shortest day (fastest rotation)?\nA) Earth\nB) Mars\nC) Jupiter\nD) Venus",
        """The planet with the shortest day in our solar system is Jupiter. It completes one rotation on its axis in about 9 hours and 56 minutes, which is faster than any other planet.

So the correct answer is C) Jupiter.""",
    ),
    # Llama-3.1-8B-Instruct
    (
        "C",
        "Which planet in our solar system has the shortest day (fastest rotation)?\nA) Earth\nB) Mars\nC) Jupiter\nD) Venus",
        """To determine which planet has the shortest day, let's look at the rotation period of each option:

* **A) Earth**: Earth rotates once every 24 hours (about 23 hours 56 minutes sidereal).
* **B) Mars**: A day on Mars (a "sol") lasts about 24 hours 37 minutes.
* **C) Jupiter**: Jupiter rotates once every 9 hours 56 minutes.
* **D) Venus**: Venus has an extremely slow rotation, taking about 243 Earth days to rotate once - its day is actually longer than its year.

Comparing these values, Jupiter has by far the shortest day.

The answer is **C) Jupiter**.""",
    ),
    # Gemma-2-9B-it
    (
        "B",
        "Which organ produces insulin?\nA. Liver\nB. Pancreas\nC. Kidney\nD. Spleen\nE. Gallbladder",
        """**B. Pancreas**

The pancreas contains clusters of cells called the islets of Langerhans. The beta cells within these islets produce insulin, a hormone that helps regulate blood sugar levels.

* The liver (A) stores glucose as glycogen but does not produce insulin.
* The kidneys (C) filter blood, and the spleen (D) is part of the immune system.
* The gallbladder (E) stores bile.
""",
    ),
    # Mistral-7B-Instruct-v0.3
    (
        "D",
        "Who composed 'The Four Seasons'?\n(A) Johann Sebastian Bach\n(B) George Frideric Handel\n(C) Wolfgang Amadeus Mozart\n(D) Antonio Vivaldi",
        """ The Four Seasons (Le quattro stagioni) is a set of four violin concertos composed by Antonio Vivaldi around 1718-1720. It is one of the most famous works of the Baroque period.

Answer: (D) Antonio Vivaldi""",
    ),
    # Qwen3-8B (thinking mode)
    (
        "D",
        "Who composed 'The Four Seasons'?\n(A) Johann Sebastian Bach\n(B) George Frideric Handel\n(C) Wolfgang Amadeus Mozart\n(D) Antonio Vivaldi",
        """<think>
Okay, the question is who composed The Four Seasons. I remember that's Vivaldi - the four violin concertos, Spring, Summer, Autumn, Winter, published in 1725 as part of Il cimento dell'armonia e dell'inventione. Bach and Handel were contemporaries, also Baroque, but they didn't write this piece. Mozart is from the Classical era, later. So the answer is D.
</think>

**The Four Seasons** was composed by **Antonio Vivaldi**, the Venetian Baroque composer. It's a set of four violin concertos, each depicting a season of the year, published in 1725.

**Answer: (D) Antonio Vivaldi**""",
    ),
    # Phi-3-mini-4k-instruct
    (
        "A",
        "Which legal term refers to the writ requiring a detained person to be brought before a court? A) Habeas corpus B) Stare decisis C) Mens rea D) Res judicata",
        """ The correct answer is A) Habeas corpus.

Habeas corpus (Latin for "you shall have the body") is a legal writ that requires a person under arrest or detention to be brought before a judge or court. It protects individuals against unlawful or indefinite imprisonment.

The other options refer to different legal concepts: stare decisis is the principle of following precedent, mens rea refers to the mental state or intent behind a crime, and res judicata means a matter already decided by a court cannot be litigated again.""",
    ),
    # DeepSeek-R1-Distill-Qwen-7B
    (
        "E",
        "Which measure of central tendency is least affected by extreme outliers?\nA. Mean\nB. Range\nC. Standard deviation\nD. Variance\nE. Median",
        """<think>
Alright, so I need to figure out which measure of central tendency is least affected by outliers. Let me go through the options.

A is the mean. The mean adds up all the values and divides by the count, so one huge value pulls it a lot. Definitely affected by outliers.

B is the range - wait, range isn't even a measure of central tendency, it's a measure of spread. And it's maximum minus minimum, so it's extremely sensitive to outliers.

C, standard deviation, is also a measure of spread, and it's based on squared deviations from the mean, so outliers influence it heavily.

D, variance, same thing, it's just the square of the standard deviation.

E is the median. The median is the middle value when the data is sorted. If I change the largest value from 50 to 5000, the median doesn't change at all. So the median is robust.

So the answer should be E, the median.
</think>

The median is the measure of central tendency least affected by extreme outliers, because it depends only on the middle value(s) of the ordered data rather than on the magnitude of every observation. The mean, by contrast, can be pulled strongly toward extreme values, and the range, standard deviation and variance are measures of spread that are all sensitive to outliers.

**Answer: E**""",
    ),
    # GPT-4o-style
    (
        "E",
        "Which measure of central tendency is least affected by extreme outliers?\nA. Mean\nB. Range\nC. Standard deviation\nD. Variance\nE. Median",
        """The correct answer is **E. Median**.

**Why:**
- The **median** is the middle value of a sorted dataset, so a few extremely large or small values don't shift it much.
- The **mean** (A) uses every value in its calculation, so outliers can pull it significantly.
- **Range**, **standard deviation**, and **variance** (B, C, D) aren't measures of central tendency at all - they measure spread, and they're all highly sensitive to outliers.

That's why the median is often preferred for skewed data like household income or house prices.""",
    ),
    # Claude-style
    (
        "B",
        "Which gas is released when zinc reacts with dilute hydrochloric acid?\nA) Oxygen\nB) Hydrogen\nC) Chlorine\nD) Carbon dioxide",
        """The answer is **B) Hydrogen**.

When zinc reacts with dilute hydrochloric acid, it displaces hydrogen from the acid, producing zinc chloride and hydrogen gas:

Zn + 2HCl → ZnCl₂ + H₂

This is a classic single displacement reaction between a reactive metal and an acid. You can confirm the gas is hydrogen with the "squeaky pop" test: holding a lit splint near the mouth of the test tube produces a characteristic pop as the hydrogen ignites.""",
    ),
    # DeepSeek-V3
    (
        "D",
        "In what year did the Berlin Wall fall?\nA: 1985\nB: 1987\nC: 1991\nD: 1989",
        """The Berlin Wall fell on **November 9, 1989**, when East German authorities announced that citizens could cross the border freely. Crowds gathered at the checkpoints and began tearing down sections of the wall, an event that paved the way for German reunification in 1990.

**Correct answer: D: 1989**""",
    ),
    # SmolLM2-1.7B-Instruct
    (
        "D",
        "In what year did the Berlin Wall fall?\nA: 1985\nB: 1987\nC: 1991\nD: 1989",
        """D: 1989""",
    ),
    # OLMo-2-7B-Instruct
    (
        "A",
        "Who painted 'The Starry Night'?\nA. Vincent van Gogh\nB. Claude Monet\nC. Paul Cézanne\nD. Edvard Munch",
        """The painting "The Starry Night" was created by Vincent van Gogh in June 1889, while he was staying at the asylum of Saint-Paul-de-Mausole in Saint-Rémy-de-Provence, France. It depicts the view from his east-facing window just before sunrise, with the addition of an idealized village. The painting is now held by the Museum of Modern Art in New York City.

Therefore, the correct answer is A. Vincent van Gogh.""",
    ),
    # Command-R
    (
        "C",
        "What is the worst-case time complexity of binary search on a sorted array of n elements?\n(A) O(1)\n(B) O(n)\n(C) O(log n)\n(D) O(n log n)\n(E) O(n^2)",
        """Binary search has a worst-case time complexity of (C) O(log n).

Binary search works by repeatedly dividing the search interval in half. At each step, the algorithm compares the target value with the middle element of the array and discards half of the remaining elements. Since the search space is halved with each comparison, at most about log₂(n) + 1 comparisons are needed in the worst case.""",
    ),
    # Granite-3.1-8B-Instruct
    (
        "C",
        "What is the worst-case time complexity of binary search on a sorted array of n elements?\n(A) O(1)\n(B) O(n)\n(C) O(log n)\n(D) O(n log n)\n(E) O(n^2)",
        """Answer: (C)

Explanation: Binary search halves the remaining search range on each iteration. After k iterations, n/2^k elements remain, so the search finishes after about log2(n) steps. The best case is O(1), when the target happens to be the middle element on the first comparison, but the worst case is O(log n).""",
    ),
    # Yi-1.5-9B-Chat
    (
        "D",
        "Which nutrient provides the most energy per gram?\nA) Protein\nB) Carbohydrate\nC) Fiber\nD) Fat\nE) Water",
        """Fat provides the most energy per gram. Here's the comparison:

- Fat: about 9 kcal per gram
- Protein: about 4 kcal per gram
- Carbohydrate: about 4 kcal per gram
- Fiber: about 2 kcal per gram (partially fermented in the gut)
- Water: 0 kcal

So the answer is D) Fat.""",
    ),
    # InternLM2.5-7B-Chat
    (
        "A",
        "How many players from one team are on the court at a time in a standard basketball game?\nA) 5\nB) 6\nC) 7\nD) 9",
        """In standard basketball, each team has **5 players** on the court at one time: typically a point guard, a shooting guard, a small forward, a power forward, and a center.

The correct option is **A) 5**.""",
    ),
    # Qwen2.5-Math-7B-Instruct
    (
        "C",
        "A train travels 180 km in 2.5 hours. What is its average speed?\nA. 60 km/h\nB. 65 km/h\nC. 72 km/h\nD. 75 km/h\nE. 80 km/h",
        r"""To find the average speed, we use the formula:

\[
\text{Average speed} = \frac{\text{Total distance}}{\text{Total time}}
\]

Substituting the given values:

\[
\text{Average speed} = \frac{180 \text{ km}}{2.5 \text{ h}} = 72 \text{ km/h}
\]

Thus, the average speed of the train is 72 km/h, which corresponds to option C.

\[
\boxed{C}
\]""",
    ),
    # DeepSeek-R1-Distill-Llama-8B
    (
        "C",
        "A train travels 180 km in 2.5 hours. What is its average speed?\nA. 60 km/h\nB. 65 km/h\nC. 72 km/h\nD. 75 km/h\nE. 80 km/h",
        r"""<think>
Okay, so the train travels 180 km in 2.5 hours. Average speed is distance divided by time. 180 divided by 2.5... let me compute. 2.5 times 70 is 175, and 2.5 times 2 is 5, so 2.5 times 72 is 180. So the speed is 72 km/h.

Let me double-check: 72 km/h for 2 hours is 144 km, plus half an hour at 72 is 36 km, total 180 km. Yep, that's right.

Looking at the options, 72 km/h is option C.
</think>

The average speed is the total distance divided by the total time:

$$\text{speed} = \frac{180\text{ km}}{2.5\text{ h}} = 72\text{ km/h}$$

**Answer: C. 72 km/h**""",
    ),
    # Llama-3.3-70B-Instruct
    (
        "B",
        "Which star is closest to the Sun?\nA) Sirius\nB) Proxima Centauri\nC) Betelgeuse\nD) Vega\nE) Alpha Centauri A",
        """The correct answer is B) Proxima Centauri.

Proxima Centauri is a small red dwarf star located about 4.24 light-years from the Sun, making it the closest known star to our solar system. It is part of the Alpha Centauri system, whose two brighter stars, Alpha Centauri A and B, are slightly farther away at about 4.37 light-years. Sirius, the brightest star in the night sky, is about 8.6 light-years away.""",
    ),
    # Gemma-3-12B-it
    (
        "E",
        "Which element has atomic number 26?\nA. Copper\nB. Nickel\nC. Cobalt\nD. Zinc\nE. Iron",
        """The element with atomic number 26 is **Iron (Fe)**.

The answer is **E. Iron**.

For reference, the other options sit just after it in the periodic table:
* Cobalt (27)
* Nickel (28)
* Copper (29)
* Zinc (30)

Iron has 26 protons in its nucleus, and it's the most common element on Earth by mass, forming much of the planet's core.""",
    ),
    # Phi-4
    (
        "A",
        "Which blood type is considered the universal red-cell donor?\n(A) O negative\n(B) AB positive\n(C) A negative\n(D) B positive",
        """To determine the universal red-cell donor, we need to consider which blood type lacks the antigens that could trigger an immune reaction in the recipient.

1. **ABO antigens**: Type O red cells have neither A nor B antigens on their surface, so they won't be attacked by anti-A or anti-B antibodies in the recipient's plasma.
2. **Rh factor**: Rh-negative blood lacks the RhD antigen, so it won't trigger an anti-D response in Rh-negative recipients.

Combining these, O negative red cells can be given to patients of any ABO and Rh type, which is why they are used in emergencies when there is no time to determine the patient's blood type. (Note that AB positive is the *universal recipient*, not the universal donor.)

Therefore, the correct answer is:

**(A) O negative**""",
    ),
    # Qwen3-14B (thinking mode)
    (
        "D",
        "If all bloops are razzies and all razzies are lazzies, which statement must be true?\nA) All lazzies are bloops\nB) Some razzies are not bloops\nC) No bloops are lazzies\nD) All bloops are lazzies",
        """<think>
Okay, let's see. All bloops are razzies. All razzies are lazzies. So by transitivity, all bloops are lazzies. That's a classic syllogism.

Check the options:
A) All lazzies are bloops - no, that's the converse; there could be lazzies that aren't bloops.
B) Some razzies are not bloops - not necessarily; it could be that every razzie is a bloop.
C) No bloops are lazzies - contradicts what we just derived.
D) All bloops are lazzies - yes, must be true.

So D.
</think>

Since every bloop is a razzie, and every razzie is a lazzie, it follows that every bloop must also be a lazzie.

- **A** reverses the relationship, which doesn't follow.
- **B** might be true, but it isn't guaranteed - the sets of bloops and razzies could be identical.
- **C** directly contradicts the premises.

**Final answer: D) All bloops are lazzies**""",
    ),
    # Mistral-Small-24B-Instruct
    (
        "D",
        "How many semitones are there in one octave? A) 7 B) 8 C) 10 D) 12 E) 13",
        """An octave contains **12 semitones** (half steps). For example, going from C up to the next C on a piano, you pass through C#, D, D#, E, F, F#, G, G#, A, A#, B and back to C - twelve half-step intervals in total.

Note that a diatonic scale has 8 notes if you count both ends of the octave (that's where the word "octave" comes from), but the number of semitones is 12.

**Answer: D**""",
    ),
    # GPT-4o-style
    (
        "B",
        "Who was the first emperor of a unified China?\nA. Kublai Khan\nB. Qin Shi Huang\nC. Liu Bang\nD. Sun Yat-sen\nE. Wu Zetian",
        """**B. Qin Shi Huang**

Qin Shi Huang unified China in 221 BCE after conquering the other Warring States, and he declared himself the "First Emperor" (Shi Huangdi) of the Qin dynasty. He's known for standardizing weights, measures, currency and writing, beginning work on what became the Great Wall, and for the Terracotta Army buried with him.

The other options came later: Liu Bang founded the Han dynasty, Wu Zetian was the only woman to rule China as emperor in her own right, Kublai Khan founded the Yuan dynasty, and Sun Yat-sen was the first provisional president of the Republic of China.""",
    ),
    # Claude-style
    (
        "A",
        "In hypothesis testing, a Type I error is:\nA) Rejecting a true null hypothesis\nB) Failing to reject a false null hypothesis\nC) Rejecting a false null hypothesis\nD) Failing to reject a true null hypothesis",
        """A Type I error occurs when you **reject a null hypothesis that is actually true** - essentially a "false positive." So the answer is **A**.

The probability of making a Type I error is the significance level, α. If you test at α = 0.05, you accept a 5% chance of rejecting a true null hypothesis.

By contrast, failing to reject a false null hypothesis (option B) is a Type II error, or a "false negative." Options C and D are the correct decisions.""",
    ),
    # Llama-3.2-3B-Instruct
    (
        "D",
        "What is 15% of 240?\nA) 24\nB) 30\nC) 32\nD) 36\nE) 40",
        """To find 15% of 240, multiply 240 by 0.15:

240 × 0.15 = 36

The answer is D) 36.""",
    ),
    # DeepSeek-V3
    (
        "E",
        "Which data structure follows the LIFO (Last In, First Out) principle?\nA) Queue\nB) Heap\nC) Hash table\nD) Linked list\nE) Stack",
        """The data structure that follows the **LIFO (Last In, First Out)** principle is the **stack**.

### Explanation:
- **Stack (E)**: Elements are pushed onto the top and popped from the top, so the last element added is the first one removed. Common uses include function call stacks, undo functionality, and expression evaluation.
- **Queue (A)**: Follows **FIFO** (First In, First Out).
- **Heap (B)**: A tree-based structure ordered by priority, not insertion order.
- **Hash table (C)**: Stores key-value pairs with no inherent ordering.
- **Linked list (D)**: A general linear structure; it can be used to *implement* a stack, but it isn't LIFO by itself.

### Final Answer:
**E) Stack**""",
    ),
    # Command-R+
    (
        "C",
        "In which city were the 2016 Summer Olympics held?\nA) London\nB) Tokyo\nC) Rio de Janeiro\nD) Beijing",
        """The 2016 Summer Olympics were held in Rio de Janeiro, Brazil, from August 5 to August 21, 2016. It was the first time the Summer Games were hosted in South America. The previous Games were held in London in 2012, and the next edition took place in Tokyo (postponed to 2021).

Answer: C) Rio de Janeiro""",
    ),
    # Qwen2.5-14B-Instruct
    (
        "E",
        "Which art movement is Salvador Dalí most associated with?\nA. Cubism\nB. Impressionism\nC. Baroque\nD. Pop Art\nE. Surrealism",
        """Salvador Dalí is most associated with **Surrealism**. He was one of the most prominent figures of the Surrealist movement, known for his dreamlike, bizarre imagery such as the melting clocks in *The Persistence of Memory* (1931).

The correct answer is: **E. Surrealism**""",
    ),
    # Granite-3.2-8B-Instruct
    (
        "A",
        "Which mineral is an essential component of hemoglobin?\nA) Iron\nB) Calcium\nC) Iodine\nD) Zinc",
        """The correct answer is A) Iron.

Hemoglobin is the protein in red blood cells that carries oxygen from the lungs to the body's tissues. Each hemoglobin molecule contains four heme groups, and each heme group has an iron atom at its center that binds one oxygen molecule. Iron deficiency can therefore lead to anemia, characterized by fatigue and weakness. Good dietary sources of iron include red meat, legumes, and leafy green vegetables.""",
    ),
]

HELD_OUT_11_TEXTS: list[tuple[str, str]] = [
    # Qwen2.5-7B-Instruct -- Q: What is the capital of Australia?
    (
        "Canberra",
        """The capital of Australia is Canberra.""",
    ),
    # Llama-3.1-8B-Instruct -- Q: Who wrote "Pride and Prejudice"?
    (
        "Jane Austen",
        """"Pride and Prejudice" was written by Jane Austen. It was first published in 1813 and is one of the most popular novels in English literature. The story follows Elizabeth Bennet as she navigates issues of manners, upbringing, morality, and marriage, and her evolving relationship with the proud Mr. Darcy. Austen's other well-known works include "Sense and Sensibility" (1811) and "Emma" (1815).""",
    ),
    # Gemma-2-9B-it -- Q: What is the chemical symbol for gold?
    (
        "Au",
        """The chemical symbol for gold is **Au**, from the Latin word *aurum*, meaning "shining dawn."
""",
    ),
    # Qwen3-8B (thinking mode) -- Q: How many bones are in the adult human body?
    (
        "206",
        """<think>
The user asks how many bones are in the adult human body. The standard answer is 206. Babies are born with around 270 to 300 bones, and many of them fuse during growth, which is why adults have fewer. So the answer is 206.
</think>

An adult human body typically has **206 bones**. Newborns start with roughly 270-300 bones, but many of them fuse together as the body grows (for example, in the skull and the sacrum).""",
    ),
    # DeepSeek-R1-Distill-Qwen-14B -- Q: In what year did the Titanic sink?
    (
        "1912",
        r"""<think>
Okay, so the question is about when the Titanic sank. I remember the Titanic hit an iceberg on its maiden voyage from Southampton to New York. That was in April... April 14th, late at night, and it sank in the early hours of April 15th. The year was 1912. I'm pretty sure it's 1912, since the 1997 movie is set then, and the wreck was found in 1985 by Robert Ballard.
</think>

The RMS Titanic sank on April 15, 1912, after striking an iceberg during its maiden voyage from Southampton to New York City.

**Answer:** \boxed{1912}""",
    ),
    # SmolLM2-360M-Instruct -- Q: What is the largest planet in the solar system?
    (
        "Jupiter",
        """Jupiter""",
    ),
    # Mistral-7B-Instruct-v0.3 -- Q: Which country is the city of Marrakesh in?
    (
        "Morocco",
        """ Marrakesh is a major city in Morocco. Located at the foot of the Atlas Mountains, it is known for its historic medina, the Jemaa el-Fnaa square and the Koutoubia Mosque. It is the fourth-largest city in the country, after Casablanca, Fez and Tangier.""",
    ),
    # Phi-3-mini-4k-instruct -- Q: What is the smallest prime number?
    (
        "2",
        """ The smallest prime number is 2. It is also the only even prime number, since every other even number is divisible by 2. Note that 1 is not considered a prime number because it has only one positive divisor.""",
    ),
    # GPT-4o-style -- Q: Who painted the Mona Lisa?
    (
        "Leonardo da Vinci",
        """The *Mona Lisa* was painted by **Leonardo da Vinci**. He began working on it around 1503 and continued refining it for years. The painting is believed to depict Lisa Gherardini, the wife of Florentine merchant Francesco del Giocondo, and it now hangs in the Louvre in Paris.""",
    ),
    # Claude-style -- Q: What is the largest mammal on Earth?
    (
        "blue whale",
        """The largest mammal is the **blue whale** (*Balaenoptera musculus*). Adults can reach lengths of about 30 meters (roughly 100 feet) and weigh up to around 190 tonnes, making it not just the largest mammal but the largest animal known to have ever lived, bigger than any dinosaur. On land, the largest mammal is the African bush elephant.""",
    ),
    # DeepSeek-V3 -- Q: What is the longest river in South America?
    (
        "Amazon",
        """**Amazon**

The Amazon River is the longest river in South America, stretching roughly 6,400 km (about 4,000 miles) from the Andes in Peru to the Atlantic Ocean in Brazil. It also carries more water than any other river in the world. The Paraná, at about 4,880 km, is the continent's second-longest.""",
    ),
    # OLMo-2-7B-Instruct -- Q: Which element has atomic number 1?
    (
        "hydrogen",
        """The element with atomic number 1 is hydrogen. It is the lightest and most abundant element in the universe, consisting of a single proton and a single electron. Its chemical symbol is H.""",
    ),
    # Command-R -- Q: What is the currency of Japan?
    (
        "yen",
        """The official currency of Japan is the Japanese yen (symbol ¥, ISO code JPY). It was introduced in 1871 as part of the Meiji government's monetary reforms and is one of the most traded currencies in the world, after the US dollar and the euro.

Answer: yen""",
    ),
    # Yi-1.5-9B-Chat -- Q: Who was the first person to walk on the Moon?
    (
        "Neil Armstrong",
        """The first person to walk on the Moon was Neil Armstrong. On July 20, 1969, during NASA's Apollo 11 mission, he stepped onto the lunar surface and said, "That's one small step for man, one giant leap for mankind." He was followed about 19 minutes later by Buzz Aldrin, while Michael Collins remained in orbit in the command module.""",
    ),
    # InternLM2.5-7B-Chat -- Q: What is the square root of 144?
    (
        "12",
        """The square root of 144 is 12, because 12 × 12 = 144.""",
    ),
    # Granite-3.1-8B-Instruct -- Q: Which animal is known as the "ship of the desert"?
    (
        "camel",
        """The camel is known as the "ship of the desert." It earned this nickname because it can carry heavy loads across long stretches of desert, and its swaying gait resembles the motion of a ship at sea. Camels are well adapted to harsh, dry environments: they can go for long periods without water and their wide feet keep them from sinking into the sand.""",
    ),
    # Llama-3.3-70B-Instruct -- Q: What is the hardest naturally occurring substance?
    (
        "diamond",
        """The hardest naturally occurring substance is diamond. It scores a 10 on the Mohs scale of mineral hardness, the highest possible rating. Diamond's extreme hardness comes from its crystal structure, in which each carbon atom is strongly bonded to four other carbon atoms in a rigid three-dimensional lattice.""",
    ),
    # Qwen2.5-Math-7B-Instruct -- Q: What is 17 × 23?
    (
        "391",
        r"""To find \(17 \times 23\), we can break it down:

\[
17 \times 23 = 17 \times 20 + 17 \times 3 = 340 + 51 = 391
\]

Therefore, the answer is \(\boxed{391}\).""",
    ),
    # Gemma-3-12B-it -- Q: Which planet is known as the Red Planet?
    (
        "Mars",
        """**Mars** is known as the Red Planet.

Its reddish appearance comes from iron oxide (rust) on its surface. Mars is the fourth planet from the Sun and has two small moons, Phobos and Deimos.""",
    ),
    # Phi-4 -- Q: Who developed the theory of general relativity?
    (
        "Albert Einstein",
        """The theory of general relativity was developed by **Albert Einstein**, who published it in 1915. General relativity describes gravity not as a force, but as the curvature of spacetime caused by mass and energy. It built on his earlier special theory of relativity (1905) and has been confirmed by many observations, such as the bending of light during the 1919 solar eclipse measured by Arthur Eddington and the detection of gravitational waves in 2015.""",
    ),
    # Qwen3-4B (thinking mode) -- Q: What is the capital of Canada?
    (
        "Ottawa",
        """<think>
Okay, the user is asking for the capital of Canada. A lot of people think it's Toronto, since that's the biggest city, or maybe Montreal, but the capital is actually Ottawa, in Ontario. Queen Victoria chose it in 1857. So the answer is Ottawa.
</think>

The capital of Canada is **Ottawa**, located in the province of Ontario. Although Toronto is the country's largest city, Ottawa was chosen as the capital in 1857 and is home to Parliament Hill.""",
    ),
    # Mistral-Nemo-Instruct -- Q: In which year did World War II end?
    (
        "1945",
        """World War II ended in 1945. In Europe, Germany surrendered on May 8, 1945 (V-E Day), and in the Pacific, Japan announced its surrender on August 15, 1945, after the atomic bombings of Hiroshima and Nagasaki, formally signing the instrument of surrender on September 2, 1945.""",
    ),
    # DeepSeek-R1 -- Q: What is the boiling point of water at sea level in degrees Celsius?
    (
        "100",
        """<think>
The question asks for the boiling point of water at sea level, in Celsius. At standard atmospheric pressure (1 atm, 101.325 kPa), water boils at 100 degrees Celsius, which is 212 degrees Fahrenheit. The Celsius scale was originally defined around the freezing and boiling points of water, 0 and 100.
</think>

At sea level (standard atmospheric pressure), water boils at **100 °C** (212 °F).""",
    ),
    # GPT-4o-mini-style -- Q: What gas do plants absorb from the atmosphere for photosynthesis?
    (
        "carbon dioxide",
        """Plants absorb **carbon dioxide** (CO₂) from the atmosphere for photosynthesis. Using sunlight, they combine carbon dioxide with water to produce glucose, releasing oxygen as a by-product:

6CO₂ + 6H₂O + light → C₆H₁₂O₆ + 6O₂""",
    ),
    # Claude-style -- Q: What is the longest bone in the human body?
    (
        "femur",
        """The longest bone in the human body is the **femur**, or thigh bone. It runs from the hip to the knee and typically makes up about a quarter of a person's height, around 48 cm (19 inches) in an average adult. It's also one of the strongest bones in the body. The second-longest is the tibia, in the lower leg.""",
    ),
    # Command-R+ -- Q: What language is primarily spoken in Brazil?
    (
        "Portuguese",
        """The primary and official language of Brazil is Portuguese. Brazil is the largest Portuguese-speaking country in the world, a legacy of its colonization by Portugal beginning in 1500. Unlike most of its neighbors in South America, where Spanish is the main language, Brazil has used Portuguese since the colonial period.""",
    ),
    # SmolLM2-1.7B-Instruct -- Q: What is the tallest mountain in the world?
    (
        "Mount Everest",
        """**Mount Everest**

- Height: 8,848.86 m (29,031.7 ft) above sea level
- Location: on the border between Nepal and China (Tibet), in the Himalayas
- First summited: 1953, by Edmund Hillary and Tenzing Norgay""",
    ),
    # OLMo-2-13B-Instruct -- Q: Who composed the "Moonlight Sonata"?
    (
        "Ludwig van Beethoven",
        """The "Moonlight Sonata" (Piano Sonata No. 14 in C-sharp minor, Op. 27, No. 2) was composed by Ludwig van Beethoven in 1801. The nickname "Moonlight" was not Beethoven's own; it came from the German music critic Ludwig Rellstab, who in 1832, after Beethoven's death, compared the first movement to moonlight shining on Lake Lucerne.""",
    ),
    # Yi-1.5-34B-Chat -- Q: What is the freezing point of water in degrees Fahrenheit?
    (
        "32",
        """The freezing point of water is **32°F** (0°C) at standard atmospheric pressure.""",
    ),
    # InternLM3-8B-Instruct -- Q: Which country has the largest population in the world?
    (
        "India",
        """As of 2024, **India** is the most populous country in the world, with more than 1.4 billion people. It overtook China in 2023, according to United Nations estimates. China now ranks second, followed by the United States, Indonesia and Pakistan.""",
    ),
]

HELD_OUT_11_COUNTDOWNS: list[tuple[dict, str]] = [
    # GPT-4o-style
    (
        {"numbers": [25, 50, 75, 100, 3, 6], "target": 952},
        """Here's one way to reach 952 using each number exactly once:

1. 100 + 6 = 106
2. 106 × 3 = 318
3. 318 × 75 = 23850
4. 23850 − 50 = 23800
5. 23800 ÷ 25 = 952

**Expression:** ((100 + 6) × 3 × 75 − 50) ÷ 25 = 952""",
    ),
    # DeepSeek-R1-Distill-Qwen-7B
    (
        {"numbers": [25, 50, 75, 100, 3, 6], "target": 952},
        """<think>
We need 952 from 25, 50, 75, 100, 3, 6. That's a big target. 952 = 8 × 119 = 8 × 7 × 17. Hmm.

Try 100 × 9 = 900, but there's no 9... 6 + 3 = 9! 100 × (6 + 3) = 900. Then 952 - 900 = 52 from 25, 50, 75. 50 + 75/25 = 53. Close, that gives 953. 75 - 50 + 25 = 50, that gives 950. Not quite.

What about making the last step a division by 25? 952 × 25 = 23800. Can I make 23800 from 50, 75, 100, 3, 6? 23800 = 23850 - 50, and 23850 = 75 × 318 = 75 × 3 × 106 = 75 × 3 × (100 + 6). Yes!

So ((100 + 6) × 3 × 75 - 50) / 25. Check: 106 × 3 = 318, 318 × 75 = 23850, 23850 - 50 = 23800, 23800 / 25 = 952. All numbers used once: 100, 6, 3, 75, 50, 25.
</think>
<answer>((100 + 6) * 3 * 75 - 50) / 25</answer>""",
    ),
    # TinyZero (Qwen2.5-3B, RL-trained)
    (
        {"numbers": [19, 36, 55, 7], "target": 65},
        """Let me solve this step by step.
<think> We have the numbers 19, 36, 55, 7. Let's try 55 + 19 = 74, 74 - 7 = 67, not quite. Let's try 55 + 7 = 62, 62 + 36 = 98, 98 - 19 = 79, too high. Let's try 55 + 36 = 91, 91 - 19 = 72, 72 - 7 = 65. That works! </think>
<answer> 55 + 36 - 19 - 7 </answer>""",
    ),
    # Llama-3.1-8B-Instruct
    (
        {"numbers": [19, 36, 55, 7], "target": 65},
        """55 + 36 − 19 − 7 = 65""",
    ),
    # Qwen2.5-7B-Instruct
    (
        {"numbers": [2, 5, 9, 11], "target": 45},
        """Sure! Here is a solution:

- Step 1: 11 + 9 = 20
- Step 2: 20 × 2 = 40
- Step 3: 40 + 5 = 45

So the expression is **(11 + 9) × 2 + 5 = 45**.""",
    ),
    # Qwen2.5-Math-7B-Instruct
    (
        {"numbers": [2, 5, 9, 11], "target": 45},
        r"""We need to combine 2, 5, 9 and 11, each exactly once, to obtain 45.

First, note that $11 + 9 = 20$. Multiplying by 2 gives $20 \times 2 = 40$, and adding 5 gives $45$.

$$
(11 + 9) \times 2 + 5 = 45
$$

The answer is $\boxed{(11 + 9) \times 2 + 5}$.""",
    ),
    # Mistral-7B-Instruct-v0.3
    (
        {"numbers": [4, 6, 8, 25, 75], "target": 615},
        """ To get 615 from 4, 6, 8, 25 and 75:

75 × 8 = 600
600 + 25 = 625
625 − 6 = 619
619 − 4 = 615

Answer: 75 × 8 + 25 − 6 − 4 = 615""",
    ),
    # DeepSeek-R1-Distill-Llama-8B
    (
        {"numbers": [4, 6, 8, 25, 75], "target": 615},
        r"""<think>
Okay, target 615 with 4, 6, 8, 25, 75. 615 is close to 600 = 75 × 8. Then I need +15 from 4, 6, 25. 25 - 6 - 4 = 15. That works.

Let me also consider 75 × 6 = 450: 615 - 450 = 165 from 4, 8, 25. 25 × 8 = 200, 200 - 4 = 196, no. 25 × 4 = 100, 100 + 8 = 108, no. So go with the first one.

75 × 8 = 600, 600 + 25 = 625, 625 - 6 = 619, 619 - 4 = 615. Correct.
</think>

**Solution:**

$$75 \times 8 + 25 - 6 - 4 = 615$$

Verification: 600 + 25 − 6 − 4 = 615 ✓""",
    ),
    # Gemma-2-9B-it
    (
        {"numbers": [2, 3, 4, 10], "target": 24},
        """Here's how to make 24:

**10 × 3 − 4 − 2 = 24**

* 10 × 3 = 30
* 30 − 4 = 26
* 26 − 2 = 24
""",
    ),
    # TinyZero (Qwen2.5-3B, RL-trained)
    (
        {"numbers": [2, 3, 4, 10], "target": 24},
        """Let me solve this step by step.
<think> We have 2, 3, 4, 10 and need 24. Try 4 * 3 * 2 = 24, but then 10 is unused. Try (10 + 2) * 3 = 36, 36 - 4 = 32, no. 10 * 2 = 20, 20 + 4 = 24, but 3 is left over. 10 * 3 = 30, 30 - 4 = 26, 26 - 2 = 24. Yes! </think>
<answer> 10 * 3 - 4 - 2 </answer>""",
    ),
    # Claude-style
    (
        {"numbers": [15, 32, 48, 6, 9], "target": 113},
        """One solution:

**9 × 15 − 48 + 32 − 6 = 113**

Working it through:
- 9 × 15 = 135
- 135 − 48 = 87
- 87 + 32 = 119
- 119 − 6 = 113 ✓

Each of 15, 32, 48, 6 and 9 is used exactly once.""",
    ),
    # Phi-4
    (
        {"numbers": [15, 32, 48, 6, 9], "target": 113},
        r"""We want to reach 113 using 15, 32, 48, 6 and 9, each exactly once.

Since $9 \times 15 = 135$ is close to the target, we need to subtract 22 using 32, 48 and 6. Note that $48 - 32 + 6 = 22$, so

$$135 - (48 - 32 + 6) = 135 - 22 = 113.$$

Final answer: $9 \times 15 - (48 - 32 + 6) = 113$""",
    ),
    # Qwen3-8B (thinking mode)
    (
        {"numbers": [7, 13, 50, 2], "target": 84},
        """<think>
Numbers: 7, 13, 50, 2. Target 84.

First try: 7 × 13 = 91, then 91 - 50 / 2 = 91 - 25 = 66. No.

84 = 7 × 12. Can I make 12 from 13, 50, 2? 50 / 2 = 25, 25 - 13 = 12. Yes!

So (50 / 2 - 13) × 7 = 12 × 7 = 84. Each number used once.
</think>

Since 84 = 12 × 7, we can build 12 from the remaining numbers:

1. 50 ÷ 2 = 25
2. 25 − 13 = 12
3. 12 × 7 = 84

**Answer:** (50 ÷ 2 − 13) × 7 = 84""",
    ),
    # DeepSeek-V3
    (
        {"numbers": [7, 13, 50, 2], "target": 84},
        r"""Here's a solution:

\[
(50 \div 2 - 13) \times 7 = 84
\]

- \(50 \div 2 = 25\)
- \(25 - 13 = 12\)
- \(12 \times 7 = 84\)""",
    ),
    # Llama-3.1-8B-Instruct
    (
        {"numbers": [100, 4, 17, 9, 3], "target": 305},
        """Let's find a combination that equals 305.

Step 1: 100 - 4 = 96
Step 2: 96 / 3 = 32
Step 3: 32 * 9 = 288
Step 4: 288 + 17 = 305

The final expression is: (100 - 4) / 3 * 9 + 17 = 305""",
    ),
    # DeepSeek-R1-Distill-Qwen-14B
    (
        {"numbers": [100, 4, 17, 9, 3], "target": 305},
        """<think>
Target 305 using 100, 4, 17, 9, 3.

First idea: 100 × 3 = 300, need +5 from 4, 17, 9. 17 - 9 - 4 = 4, which gives 304. Close but no. 9 - 4 = 5, but then 17 is unused.

Another: 17 × 9 = 153, 153 + 100 = 253, then 4 and 3 can only add about 12. No.

What about working backwards: 305 - 17 = 288 = 9 × 32. Can I get 32 from 100, 4, 3? (100 - 4) / 3 = 96 / 3 = 32. Yes!

So (100 - 4) / 3 × 9 + 17 = 32 × 9 + 17 = 288 + 17 = 305.
</think>
<answer>(100 - 4) / 3 * 9 + 17</answer>""",
    ),
    # InternLM2.5-7B-Chat
    (
        {"numbers": [8, 5, 3, 1, 2], "target": 120},
        """8 × 5 × 3 × (2 − 1) = 120

Check: 8 × 5 = 40, 40 × 3 = 120, and 2 − 1 = 1, so 120 × 1 = 120.""",
    ),
    # Granite-3.1-8B-Instruct
    (
        {"numbers": [59, 21, 43, 11], "target": 92},
        """To reach the target of 92, you can combine the numbers as follows:

59 + 43 = 102
102 − 21 = 81
81 + 11 = 92

Therefore: **59 + 43 − 21 + 11 = 92**""",
    ),
]
