"""One sentence describing an everyday thing, rewarded by the critic alone, for a pretrained
chat model ("k2rl/Describe-v0").

``"Describe a kettle in one sentence."`` The reply is free text: no verifier is in the
reward. The episode ends with reward 0 and ``info["judged"] = True``, and the trainer rewards
each reply of a sampled group with its pairwise win rate under the policy-as-critic
(k2rl.step.critic_engine, critic.compare) against the core and prescriptive rubrics and
``chat_concise`` ("Answers the actual request concisely.", critic/rubrics/tasks.yaml), which
the critic reads; it never sees the reference check below.

`correct` (and ``info["reference_reward"]``) is a reference check used only for reporting,
written apart from the critic (rewards.chat.describe_reference): one sentence of 5 to 25
words that names the thing and does not repeat the request (rewards.sentence, as
ShortWriting-v1 reads a sentence), without praise of the question or claims of its own
quality (rewards.chat.flattery). It measures what the rubrics ask for, so a run whose critic
rewards good descriptions moves it; a critic fooled by length or flattery does not.

The thing is the problem's identity (``"describe:kettle"``, whatever template asks), so a
held-out thing is held out under every template; the things are k2rl/Chat-v1's 373 words,
and 365 more (`MORE_THINGS`), 77 of the 738 held out.

>>> env = DescribeEnv()
>>> env.reset(seed=3)[0]
'Describe a skirt in one sentence.'
>>> reward, info = env.step("A skirt is a piece of clothing that hangs from the waist.")[1::3]
>>> reward, info["judged"], info["reference_reward"]
(0.0, True, 1.0)
"""

from __future__ import annotations

from envs.base import Problem, TextEnv
from envs.chat import WORDS

# More everyday things, none of them in WORDS: 738 in all, 77 held out.
MORE_THINGS: tuple[str, ...] = tuple("""
    acorn airplane alarm alligator almond anchor ankle antenna apricot apron aquarium
    armchair asteroid attic avalanche avocado backpack badge bagpipe bakery balloon bamboo
    banana bandage bandana banjo barber barrel basement basin battery beaver beehive beetle
    bicycle billboard binoculars biscuit blanket blender blossom blueberry bonfire bookcase
    bouquet bracelet bracket branch breeze briefcase broccoli bubble buckle buffalo bulb
    bulldozer butterfly cabbage cactus cafeteria calendar canal canary candlestick canoe
    canyon cardboard carousel carpet caterpillar cathedral cauliflower ceiling cellar cereal
    chandelier cheetah chess chimney chipmunk chisel chopsticks cinema cinnamon circus
    clarinet clipboard closet clover cobweb cockpit coconut coffee collar compass compost
    computer concrete coral cork cottage cotton cranberry crayon cricket crocodile crossword
    cucumber cupboard cupcake curtain cushion dandelion deer diamond dinosaur dishwasher
    dolphin domino doorbell dough doughnut dragonfly drawer driveway drone dumpling earring
    eggplant elephant elevator emerald envelope eraser escalator faucet feather fern ferry
    fireplace firework flamingo flashlight fossil fountain freezer fridge frisbee galaxy
    garage garlic gazelle giraffe glacier globe gondola gorilla grasshopper grater
    greenhouse guitar hairbrush hammock hamster handbag harbor harmonica harp headphones
    hedgehog helicopter highway hippo honeycomb hoodie horseshoe hourglass hummingbird
    hurricane iceberg icicle igloo jellyfish jigsaw kaleidoscope kangaroo kayak keyboard
    kiwi koala ladybug lantern laptop lawnmower lemonade lettuce library lighthouse lobster
    locket lollipop luggage mailbox mango marble marshmallow mattress meadow meteor
    microphone microscope microwave mitten moccasin mosaic mosquito motorcycle mountain
    mushroom napkin necklace newspaper noodle notebook oatmeal octopus orchard ostrich oven
    paddle padlock pagoda pajamas palace pancake pancreas paperclip parachute parsley
    passport peacock peanut pebble pelican pendulum penguin pepperoni perfume pharmacy
    pickle picnic pineapple pinecone pinwheel pizza planet platypus pliers pocket popcorn
    porcupine postcard potato pretzel printer pumpkin puzzle pyramid quill raccoon radish
    rainbow raincoat raspberry rattlesnake recipe refrigerator reindeer rhino ribbon rocket
    rooster ruler sailboat sandal sandwich satellite saucepan sausage saxophone scissors
    scooter screwdriver seahorse seashell shampoo shark shovel shower skeleton skyscraper
    slipper snowman sombrero sparrow spatula spinach sprinkler squirrel stadium stapler
    starfish stethoscope stopwatch strawberry submarine subway suitcase sunflower sweater
    swing tablet tambourine taxi teapot telescope television thermometer thimble thunder
    ticket toothbrush tortoise toucan tractor traffic trampoline treasure trombone trumpet
    tunnel turnip tuxedo typewriter umbrella unicorn vacuum valley vegetable volcano waffle
    wallet walnut walrus wardrobe waterfall watermelon weathervane wheelbarrow whistle
    windmill wristwatch xylophone yogurt zipper
""".split())
THINGS: tuple[str, ...] = tuple(sorted(set(WORDS) | set(MORE_THINGS)))
TEMPLATES = ("Describe {} in one sentence.", "Write one sentence that describes {}.",
             "In one sentence, what is {}?", "Give a one-sentence description of {}.")
MIN_WORDS, MAX_WORDS = 5, 25


def article(word: str) -> str:
    """The thing with its indefinite article.

    >>> article("kettle"), article("owl")
    ('a kettle', 'an owl')
    """
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


class DescribeEnv(TextEnv):
    """One sentence about a thing; the critic rewards it (see module docstring)."""

    task = "describe"
    budget = 64
    max_turns = 1
    reward_name = "describe_reference"
    judged = True

    def _draw(self) -> Problem:
        rng = self.np_random
        word = THINGS[int(rng.integers(len(THINGS)))]
        template = TEMPLATES[int(rng.integers(len(TEMPLATES)))]
        prompt = template.format(article(word))
        answer = {"sentence": {"about": [word, word + "s", word + "es"], "min_words": MIN_WORDS,
                               "request": [prompt]},
                  "max_words": MAX_WORDS}
        return Problem(f"describe:{word}", prompt, answer)

    def expert_action(self, rng) -> str:
        """A plain sentence about the thing (for `k2rl envs check` and the tests): what the
        reference check asks for, nothing more."""
        word = self._require_active().key.split(":", 1)[1]
        return f"{article(word).capitalize()} is a common thing that people know well."

    def step(self, action: str):
        obs, reward, terminated, truncated, info = super().step(action)
        if terminated:  # the critic scores it in the rollout; keep the reference for reports
            info["judged"], info["reference_reward"] = True, reward
            reward = 0.0
        return obs, reward, terminated, truncated, info
