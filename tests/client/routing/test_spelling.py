"""Typos read as the installed skills' words (skillctl.routing.spelling), and routing with them."""

from __future__ import annotations

import random

import pytest

from skillctl.routing.manifests import build_offline
from skillctl.routing.router import Router
from skillctl.routing.spelling import KNOWN_WORDS, KnownWords, Speller, known_words

SKILLS = [
    build_offline(
        name="algorithmic-art",
        description="Generative art with p5.js: seeded randomness, flow fields, particles and parameter sliders.",
    ),
    build_offline(name="pptx", description="Create and edit slide decks: layouts, speaker notes, slides."),
    build_offline(name="doc-coauthoring", description="Co-write a proposal, technical spec or design doc."),
]


@pytest.fixture
def speller() -> Speller:
    return Speller.of(SKILLS)


def test_known_words_are_found_by_binary_search_in_the_file(tmp_path):
    words = sorted(random.Random(7).sample(KNOWN_WORDS.read_text("ascii").split(), 2000))
    path = tmp_path / "words.txt"
    path.write_text("\n".join(words[::2]) + "\n", encoding="ascii")
    known = KnownWords(path)
    assert all(w in known for w in words[::2])
    assert not any(w in known for w in words[1::2])  # each between two listed words
    assert "" not in known and "zzzzzz" not in known and "aaaa" not in known and "café" not in known
    assert len(known) == len(words[::2]) and known.all() == frozenset(words[::2])
    assert "x" not in KnownWords(tmp_path / "missing.txt")  # a broken install: nothing is known


def test_the_shipped_list_knows_english_and_programming_words():
    known = known_words()
    assert {"difference", "between", "sliders", "backend", "grep", "const", "rebase"} <= known.all()
    assert not {"diffrence", "betwen", "recieve", "generaative"} & known.all()


@pytest.mark.parametrize(
    "typed, meant",
    [
        ("make generaative art", "make generative art"),  # a letter doubled
        ("tweak it with slidrrs", "tweak it with sliders"),  # a neighbour key: the skills say "sliders"
        ("a prposal doc", "a proposal doc"),  # a letter dropped
        ("let's co-wrtie it", "let's co-write it"),  # two letters swapped
        ("Generaative art please", "Generative art please"),  # the case as typed
    ],
)
def test_a_typo_is_read_as_the_skill_word_one_edit_away(speller, typed, meant):
    text, fixes = speller.correct(typed)
    assert text == meant and len(fixes) == 1


@pytest.mark.parametrize(
    "text",
    [
        "I love sliders and generative art",  # spelled right
        "see run.sh, api/slidrs and getSlidrs",  # paths, files and identifiers are not prose
        "call reconcile(slidrs) then https://slidrs.example",  # a call, an address
        "the SLIDRS team",  # an acronym or a name
        "zliders and xlides",  # the first letter is taken as typed
        "a slider for the serializer",  # another form of a known word (serialized), not a typo
        "sld",  # too short to tell
    ],
)
def test_what_is_not_a_typo_stays_as_typed(speller, text):
    assert speller.correct(text) == (text, [])


def test_a_likely_typo_wins_over_a_word_more_skills_use():
    # "goid": o and i are neighbours on the keyboard (good), u is not next to o (guid).
    speller = Speller({"guid": 5, "good": 1})
    assert speller.nearest("goid") == "good"
    assert Speller({"guid": 5, "godi": 1}).nearest("goid") == "godi"  # two letters swapped: likely too
    assert Speller({"guid": 1}).nearest("goid") is None  # a distant key on a four-letter word: too unsure


def test_a_typo_of_a_word_no_skill_uses_is_read_as_the_one_known_word_it_can_be(speller):
    assert speller.correct("wat is the diffrence") == ("wat is the difference", [("diffrence", "difference")])
    assert speller.nearest("moorning") is None  # morning or mooring: left to the reader


def test_routing_reads_typos_and_says_so():
    router = Router(SKILLS)
    [clean] = router.route("write a proposal doc with me")
    [typed] = router.route("write a prposal doc with me")
    assert clean.name == typed.name == "doc-coauthoring"
    assert "read 'prposal' as 'proposal'" in typed.reasons
    [(near, _), *_] = router.nearest("co-wrtie a prposal")
    assert near.name == "doc-coauthoring" and any("as 'proposal'" in r for r in near.reasons)


def test_a_capitalised_word_inside_a_sentence_is_a_name_unless_it_is_a_likely_typo_of_a_skills_word():
    speller = Speller({"power": 3, "sarah": 2})
    assert speller.correct("facts about Salah please") == ("facts about Salah please", [])  # l -> r: distant keys
    assert speller.correct("my report in Pwoer BI")[0] == "my report in Power BI"  # two letters swapped
    assert speller.correct("I apologise") == ("I apologise", [])  # British spelling is not a typo


def test_british_and_american_spellings_are_read_as_the_skills_spell_them():
    speller = Speller({"summarize": 2, "organise": 1, "color": 1})
    assert speller.correct("summarise this paper")[0] == "summarize this paper"
    assert speller.correct("organize my files")[0] == "organise my files"
    assert speller.correct("a colour palette")[0] == "a color palette"
    assert speller.correct("summarize it and apologise") == ("summarize it and apologise", [])
    assert Speller({"for": 9, "sise": 1}).correct("four sizes") == ("four sizes", [])  # not variants
    router = Router([build_offline(name="summarizer", description="Summarize research papers.")])
    assert any("as 'summarize'" in r for r in router.route("summarise this paper")[0].reasons)


def test_programming_words_are_not_read_as_skill_words():
    memory = [build_offline(name="flashcards", description="Memorization drills and spaced repetition for exams.")]
    text, fixes = Speller.of(memory).correct("add memoization to the fibonacci function")
    assert fixes == [] and "memoization" in text  # not "memorization", one letter away
    kitchen = [build_offline(name="recipes", description="Cast iron skillet recipes and a navarin of lamb.")]
    assert Speller.of(kitchen).correct("list the skillset we need and fix the navbar") == (
        "list the skillset we need and fix the navbar",
        [],
    )  # not "skillet", "navarin"


def test_a_message_of_many_unknown_words_reads_only_the_first_few(speller):
    from skillctl.routing.spelling import MAX_UNKNOWN_WORDS

    rng = random.Random(7)
    gibberish = ["".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(8)) for _ in range(MAX_UNKNOWN_WORDS)]
    assert not any(known_words().__contains__(w) for w in gibberish)
    text, fixes = speller.correct("generaative art " + " ".join(gibberish))
    assert text.startswith("generative art") and len(fixes) == 1  # read: among the first unknown words
    text, fixes = speller.correct(" ".join(gibberish) + " generaative art")
    assert text.endswith("generaative art") and fixes == []  # past the budget: left as typed
    text, fixes = speller.correct(" ".join(["generaative"] * 100) + " art")  # one word, read once
    assert text.count("generative") == 100


def test_a_pasted_run_of_letters_or_blank_space_is_read_in_one_pass(speller):
    """A run of 200,000 letters took the old speller minutes (each one-edit candidate stemmed
    the whole run again); a capitalised word after a long blank stretch searched all of it."""
    run = "x" * 200_000
    assert speller.correct(f"wat is the diffrence {run}") == (
        f"wat is the difference {run}",
        [("diffrence", "difference")],
    )
    # a capitalised word after a long blank stretch starts afresh: a typo, not a name
    text, fixes = speller.correct("notes:" + " " * 200_000 + "Pwoer BI")
    assert text.endswith("Power BI") and fixes == [("Pwoer", "power")]
