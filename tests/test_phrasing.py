"""What a picture step is asked to show and a question step to answer (``planning/phrasing.py``)."""

from __future__ import annotations

import pytest
from scaling import grows_linearly

from graph_agent.planning.phrasing import asked, depicted


@pytest.mark.parametrize(
    ("words", "subject"),
    [
        (
            "Can you assist me in creating an illustration of an adorable cat playing with a ball",
            "an adorable cat playing with a ball",
        ),
        (
            "Can you first generate an image that succinctly captures the idea of clean energy",
            "the idea of clean energy",
        ),
        (
            "I need an image of a city skyline at sunset. Can you make it?",
            "a city skyline at sunset",
        ),
        ("draw me a cat on the moon, please", "a cat on the moon"),
        ("make a short video showcasing vintage cars downtown", "vintage cars downtown"),
        ("draw a 3.5 inch floppy disk. Then caption it", "a 3.5 inch floppy disk"),
        # Abbreviations do not end the subject; a sentence that says more is kept.
        ("Generate an image of a cat vs. a dog in the rain", "a cat vs. a dog in the rain"),
        (
            "an image of fruits, e.g. apples and pears, on a table",
            "fruits, e.g. apples and pears, on a table",
        ),
        (
            "Create an image of a cozy cabin in the woods. Make it snowy and at night.",
            "a cozy cabin in the woods. Make it snowy and at night",
        ),
        ("draw me a picture of a sheep", "a sheep"),  # the medium's subject, not "a picture"
        ("Generate an image with a cat wearing a hat", "a cat wearing a hat"),
        # Sentences that do not describe the picture stay out of its prompt.
        ("Generate an image of a dog. Use only MIT models.", "a dog"),
        ("Generate an image of a dog. My boss wants it by noon.", "a dog"),
        ("Generate an image of a dog. With the smallest model please.", "a dog"),
        ("image of the Yahoo! logo on a billboard", "the Yahoo! logo on a billboard"),
    ],
)
def test_the_subject_is_what_follows_the_medium_or_the_depicting_verb(words, subject):
    assert depicted(words) == subject


@pytest.mark.parametrize(
    "words",
    [
        "generate an image of it",
        "create a video about what's in the photo",
        "turn spoken words into an image of said animal",
        "create a picture based on the summary",
        "illustrate the story",
        "Could you help me bring this vision to life",
        "make an image of cats",  # one word is too little to tell from a pointer
        "Generate an image with stable diffusion",  # how to make it, not what it shows
        "Make a drawing with crayons of a horse",  # "with" names how, "of" what: unsure
    ],
)
def test_words_that_point_elsewhere_name_no_subject(words):
    assert depicted(words) is None


@pytest.mark.parametrize(
    ("words", "question"),
    [
        (
            "could you tell me which location is closest to the finish line",
            "Which location is closest to the finish line?",
        ),
        ("I'd like to know how many people are in the photo", "How many people are in the photo?"),
        (
            "assist me in finding out which star was vital for navigation",
            "Which star was vital for navigation?",
        ),
        (
            "I've got photo.jpg. Who is in it and what are they doing?",
            "Who is in it and what are they doing?",
        ),
        ("what's on the receipt", "What's on the receipt?"),
        ("Is the door open? Thanks", "Is the door open?"),
        ("Could you tell me what the main color is", "What is the main color?"),
        (
            "How old is Dr. Smith according to bio.txt?",
            "How old is Dr. Smith according to bio.txt?",
        ),
        # Questions right after it go with it; thanks, remarks and instructions do not.
        (
            "Could you tell me what is visible? What brand is the fridge?",
            "What is visible? What brand is the fridge?",
        ),
        ("what is the man holding? thanks", "What is the man holding?"),
        ("what color is the car? i think it's red.", "What color is the car?"),
        ("What is 5! in math?", "What is 5! in math?"),
        ("what is the man holding? Use the smallest model", "What is the man holding?"),
        # A yes/no question the clause splitter cut from its "?" still goes with it.
        ("what is the man holding? is it a phone", "What is the man holding? Is it a phone?"),
        ("what is the man holding? Is it a phone.", "What is the man holding?"),
        ("what is the man holding? Do you know", "What is the man holding?"),
        ("what is the man holding? Do not guess", "What is the man holding?"),
        ("what is the man holding? Is fine if you are unsure", "What is the man holding?"),
        (
            "how many cars are there? are there any trucks",
            "How many cars are there? Are there any trucks?",
        ),
        # ... and so does one that ends the text ("Can I ..." asks; "Can you ..." requests).
        (
            "Rules from the game:\n\ntext-1.txt\n\nCan I play two action cards in one turn",
            "Can I play two action cards in one turn?",
        ),
        # Reordered only when one subject ends on its verb; two questions keep their words.
        (
            "Tell me what the dog is doing and where the cat is",
            "What the dog is doing and where the cat is?",
        ),
    ],
)
def test_the_question_is_asked_without_its_wrapper(words, question):
    assert asked(words) == question


@pytest.mark.parametrize(
    "words",
    [
        "Give me the total on door.jpg",  # asks, but no question to lift out
        "which is a digital version of a document I wish to analyze",  # a relative clause
        "Could you help me figure out some details from this text? Dates especially",
        "What a mess.",  # exclaims
        "Do the translation of notes.txt for me",  # instructs, though "do the" can ask
    ],
)
def test_words_with_no_question_of_their_own_give_none(words):
    assert asked(words) is None


@pytest.mark.parametrize(
    ("read", "start", "unit", "end"),
    [
        (depicted, "an image of a", " ", "b"),
        (depicted, "an image of a", "\n", "b"),
        (depicted, "an image of a", "x. ", "b"),
        (depicted, "an image of a", "?!", "b"),
        (depicted, "an image of a", "draw it. ", "b"),  # many starts that name no subject
        (depicted, "an image of a", " an image of it", "b"),
        (asked, "an image of a", "Dr. ", "b"),
        (asked, "What is ", ".", "x"),
        (asked, "tell me what the cat", " ", "isx"),  # the word-order check
    ],
)
def test_reading_ten_times_the_text_takes_about_ten_times_as_long(read, start, unit, end):
    # "an image of a" + 20,000 spaces took 15 s when the courtesy pattern backtracked,
    # 20,000 "?!" 14 s when every mark of the run started a sentence end, and "tell me what
    # the cat" + 20,000 spaces + "isx" 18 s in the word-order check.
    assert grows_linearly(read, lambda n: start + unit * 500 * n + end)
