"""Lexical routing and the normalise stage (DESIGN section 7), one behaviour per test (pure code, no files)."""

from __future__ import annotations

from skillctl.routing.aggregation import is_continuation, routing_text
from skillctl.routing.manifests import build_offline, split_negative
from skillctl.routing.match import Stage
from skillctl.routing.router import Router
from skillctl.routing.weights import LexicalWeights, Weights


def manifest(name, description, **kw):
    return build_offline(name=name, description=description, **kw)


SKILLS = [
    manifest("k8s-deploy", "Deploy services to Kubernetes clusters with kubectl and helm charts."),
    manifest("pdf-tools", "Fill PDF forms, merge PDF files and extract text from PDF documents."),
    manifest(
        "sql-analyst", "Write and optimise SQL queries for PostgreSQL databases. Do not use for NoSQL or MongoDB."
    ),
    manifest(
        "release-notes",
        "Draft release notes from the git log.",
        trigger_keywords=["changelog"],
        trigger_patterns=[r"\bv\d+\.\d+\.\d+\b"],
    ),
]


def names(matches):
    return [m.name for m in matches]


def test_keywords_and_phrases_pass_the_threshold_with_reasons():
    [match] = Router(SKILLS).route("deploy the service to my kubernetes cluster")
    assert match.name == "k8s-deploy"
    assert match.score >= 3
    assert any(r.startswith("keywords:") and "kubernet" in r for r in match.reasons)


def test_one_keyword_is_below_the_threshold():
    assert Router(SKILLS).route("what is kubernetes") == []


def test_threshold_is_configurable():
    assert names(Router(SKILLS, weights=Weights(lexical=LexicalWeights(threshold=1))).route("what is kubernetes")) == [
        "k8s-deploy"
    ]


def test_explicit_name_mention_wins():
    matches = Router(SKILLS).route("use pdf-tools to deploy services to kubernetes clusters")
    assert names(matches)[0] == "pdf-tools"
    assert "name mentioned" in matches[0].reasons


def test_trigger_keyword_matches_on_word_boundaries_only():
    router = Router(SKILLS, weights=Weights(lexical=LexicalWeights(threshold=2)))
    assert names(router.route("update the changelog")) == ["release-notes"]
    assert router.route("update the changelogs2 file") == []


def test_a_trigger_keyword_routes_its_skill_under_the_threshold():
    [match] = Router(SKILLS).route("update the changelog")  # 2 points, the threshold is 3
    assert match.name == "release-notes" and match.stage is Stage.TRIGGER


def test_a_trigger_verb_counts_only_beside_a_trigger_keyword():
    greeter = manifest("greeter", "Greets people.", trigger_keywords=["greeting"], trigger_verbs=["wave"])
    router = Router([greeter])
    assert router.route("wave goodbye to the old build") == []
    [match] = router.route("wave a greeting at the new team")
    assert "triggers: greet, wave" in match.reasons  # stemmed, as every word is matched


def test_trigger_pattern_alone_selects_the_skill():
    [match] = Router(SKILLS).route("we are shipping v2.4.1 tomorrow")
    assert match.name == "release-notes"
    assert any(r.startswith("triggers:") for r in match.reasons)


def test_negative_constraint_costs_points():
    router = Router(SKILLS, weights=Weights(lexical=LexicalWeights(threshold=0.5)))
    plain = router.route("optimise my sql queries for the database")[0]
    negative = router.route("optimise my sql queries for the mongodb nosql database")
    assert plain.name == "sql-analyst"
    hit = [m for m in negative if m.name == "sql-analyst"]
    assert not hit or hit[0].score < plain.score
    assert not hit or any(r.startswith("negative constraint") for r in hit[0].reasons)


def test_recent_use_boosts_a_skill_that_already_matched():
    router = Router(SKILLS)
    base = router.route("merge these pdf files")[0]
    boosted = router.route("merge these pdf files", recent=frozenset({"pdf-tools"}))[0]
    assert boosted.score > base.score
    assert router.route("hello", recent=frozenset({"pdf-tools"})) == []


def test_at_most_three_skills():
    many = [manifest(f"pdf-skill-{i}", "Merge PDF files and split PDF pages.") for i in range(6)]
    assert len(Router(many).route("merge pdf files and split pdf pages")) == 3


def test_small_talk_routes_to_nothing():
    router = Router(SKILLS)
    for text in ("hi!", "thanks a lot", "how are you?", ""):
        assert router.route(text) == []


def test_offline_manifest_separates_the_negative_constraint():
    positive, negative = split_negative("Query SQL databases. Do not use for MongoDB or NoSQL stores.")
    assert "MongoDB" in negative and "MongoDB" not in positive
    m = manifest("sql", "Query SQL databases. Not for MongoDB.")
    assert "mongodb" not in m.keywords and m.negative == "MongoDB"


def test_offline_manifest_uses_headings_and_caps_lists():
    m = build_offline(name="x", description="Tool.", body="# Intro\n## Rotating API keys\ntext\n")
    assert "rotat" in " ".join(m.keywords) and "rotating api" in m.phrases
    assert len(m.keywords) <= 20 and len(m.phrases) <= 15


def test_a_very_long_message_is_routed_on_its_opening_and_its_end():
    from skillctl.routing.aggregation import MAX_ROUTED_CHARS

    pasted = "deploy the services to kubernetes clusters with helm. " + "lorem ipsum dolor " * 20_000 + "cheers, sam"
    text = routing_text(pasted)
    assert len(text) <= MAX_ROUTED_CHARS + 2
    assert text.startswith("deploy the services") and text.endswith("cheers, sam")
    assert names(Router(SKILLS).route(pasted)) == ["k8s-deploy"]


def test_short_continuation_is_routed_with_the_previous_message():
    assert is_continuation("and for staging too")
    assert not is_continuation("deploy the api to production please right now with helm")
    text = routing_text("and for staging too", ["deploy the api to kubernetes"])
    assert "kubernetes" in text
    router = Router(SKILLS)
    assert router.route("and for staging too") == []
    assert names(router.route("and for staging too", history=["deploy the services to kubernetes"])) == ["k8s-deploy"]


def test_split_intents_cuts_at_sentences_and_request_connectors():
    from skillctl.routing.normalise import split_intents

    assert split_intents("merge these pdf files, then deploy the api to kubernetes") == [
        "merge these pdf files",
        "deploy the api to kubernetes",
    ]
    assert split_intents("Fill the PDF form. Also optimise my slow SQL query please!") == [
        "Fill the PDF form.",
        "Also optimise my slow SQL query please!",
    ]
    # Where nothing else splits, a bare "and" does (the gate reads each half; a noun's half
    # routes to the same skill or to none) ...
    assert split_intents("resize the header image and email the press kit to the editor") == [
        "resize the header image",
        "email the press kit to the editor",
    ]
    # ... but not where a sentence end or a connector already splits the message
    assert split_intents("merge the pdf and docx files, then deploy the api") == [
        "merge the pdf and docx files",
        "deploy the api",
    ]
    assert split_intents("merge pdf and docx") == []  # a half under three words is no request
    assert split_intents("deploy the api to kubernetes. cheers, sam") == []  # a sign-off is no request
    assert split_intents("one two three. " * 9) == ["one two three."] * 4  # at most four parts


def test_sentences_of_a_long_message():
    from skillctl.routing.normalise import MAX_SENTENCES, sentences

    assert sentences("deploy the api to kubernetes") == []  # one sentence: nothing to split
    assert sentences("the build broke after the upgrade. no idea. how do we track it down?") == [
        "the build broke after the upgrade.",
        "how do we track it down?",  # "no idea." is too short to say anything alone
    ]
    assert sentences("here is the log:\nit fails every night") == ["here is the log:", "it fails every night"]
    assert len(sentences("one two three. " * 20)) == MAX_SENTENCES
    story = " ".join(f"this is sentence number {i}." for i in range(1, 11))
    kept = sentences(story + " can you turn this into a changelog?")  # the ask closes a long email
    assert kept[0] == "this is sentence number 1." and kept[-1] == "can you turn this into a changelog?"
    assert len(kept) == MAX_SENTENCES


def test_prose_leaves_out_pasted_code_and_logs():
    from skillctl.routing.text import prose

    message = (
        "the nightly job started failing with this:\n\n"
        "Traceback (most recent call last):\n"
        '  File "jobs/nightly.py", line 88, in run\n'
        "    total = reconcile(batch)\n"
        "ZeroDivisionError: division by zero\n\n"
        "```python\nfor t in txns:\n    print(t)\n```\n"
        '{"items": [{"id": 7}]}\n'
        "-    if token.expires_at < now:\n"
        "what is going on? the `reconcile` step was fine last week"
    )
    assert prose(message).splitlines() == [
        "the nightly job started failing with this:",
        "ZeroDivisionError: division by zero",
        "what is going on? the `reconcile` step was fine last week",  # inline code is still prose
    ]
    assert prose("deploy the api to kubernetes") == "deploy the api to kubernetes"
    only_code = "```\nx = [3, 1, 2].sort()\n```"
    assert prose(only_code) == only_code  # all code: still what was asked


def test_each_request_of_a_message_gets_its_skill():
    router = Router(SKILLS)
    message = "merge these pdf files and fill the pdf forms, then deploy the services to my kubernetes cluster"
    matches = router.route(message)
    assert names(matches)[:2] == ["pdf-tools", "k8s-deploy"]
    assert "one of several requests in the message" in matches[1].reasons


def test_two_requests_stand_without_the_whole_message_passing(monkeypatch):
    from skillctl.routing.normalise import split_intents
    from skillctl.routing.router import Routed

    router = Router(SKILLS)
    real = router._routed
    whole = "merge the pdf files. deploy it to kubernetes now"
    monkeypatch.setattr(
        router, "_routed", lambda text, recent, qv=None, **kw: Routed([]) if text == whole else real(text, recent)
    )
    assert names(router.route(whole)) == ["pdf-tools", "k8s-deploy"]
    # ... but one request alone in a message that passes nothing is not enough
    lone = "merge the pdf files. what a lovely morning it is"
    monkeypatch.setattr(
        router, "_routed", lambda text, recent, qv=None, **kw: Routed([]) if text == lone else real(text, recent)
    )
    assert router.route(lone) == []
    assert split_intents(lone) == ["merge the pdf files.", "what a lovely morning it is"]


def test_a_skill_named_for_a_product_is_named_by_the_product_alone():
    from skillctl.routing.scoring import ScoringIndex, lexical_hits

    index = ScoringIndex(
        [
            build_offline(name="zenserp-automation", description="Automate Zenserp tasks via Rube MCP (Composio)."),
            build_offline(name="reply-automation", description="Automate Reply tasks via Rube MCP (Composio)."),
            build_offline(name="email-drafts", description="Draft a reply to an email in the user's voice."),
        ]
    )
    hits = lexical_hits(index, "use zenserp to grab the top 10 google results")
    assert hits[0].named  # "zenserp" is zenserp-automation's alone
    hits = lexical_hits(index, "write a reply to this email")
    assert not hits.get(1) or not hits[1].named  # "reply" is in another skill's words: no mention


def test_a_product_of_two_words_is_named_however_it_is_written():
    from skillctl.routing.scoring import ScoringIndex, lexical_hits

    index = ScoringIndex(
        [
            build_offline(name="re-amaze-automation", description="Automate Re Amaze tasks via Rube MCP (Composio)."),
            build_offline(name="to-do-automation", description="Automate To Do tasks via Rube MCP (Composio)."),
            build_offline(name="email-drafts", description="Draft a reply to an email in the user's voice."),
        ]
    )
    for said in ("list open re:amaze conversations", "reamaze tickets tagged refund", "in re amaze, close the ticket"):
        assert lexical_hits(index, said)[0].named, said
    hits = lexical_hits(index, "what to do about this email")  # a product of stopwords alone is no mention
    assert not hits.get(1) or not hits[1].named


def test_a_message_with_a_long_blank_stretch_is_split_in_one_pass():
    """ ",?\\s+then" tried every space of a run again: 20,000 spaces took 30 s, 200,000 hours."""
    from skillctl.routing.normalise import split_intents

    gap = " " * 200_000
    assert split_intents(f"merge these pdf files{gap}then deploy the api to kubernetes") == [
        "merge these pdf files",
        "deploy the api to kubernetes",
    ]
