"""Scoring rules of DESIGN section 7, one behaviour per test (pure code, no files)."""

from __future__ import annotations

from skillctl.routing.aggregation import is_continuation, routing_text
from skillctl.routing.manifests import build_offline, split_negative
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

    pasted = "deploy the services to kubernetes clusters with helm. " + "lorem ipsum dolor " * 20_000 + "thanks!"
    text = routing_text(pasted)
    assert len(text) <= MAX_ROUTED_CHARS + 2
    assert text.startswith("deploy the services") and text.endswith("thanks!")
    assert names(Router(SKILLS).route(pasted)) == ["k8s-deploy"]


def test_short_continuation_is_routed_with_the_previous_message():
    assert is_continuation("and for staging too")
    assert not is_continuation("deploy the api to production please right now with helm")
    text = routing_text("and for staging too", ["deploy the api to kubernetes"])
    assert "kubernetes" in text
    router = Router(SKILLS)
    assert router.route("and for staging too") == []
    assert names(router.route("and for staging too", history=["deploy the services to kubernetes"])) == ["k8s-deploy"]


def test_split_intents_cuts_at_sentences_and_request_connectors_only():
    from skillctl.routing.intents import split_intents

    assert split_intents("merge these pdf files, then deploy the api to kubernetes") == [
        "merge these pdf files",
        "deploy the api to kubernetes",
    ]
    assert split_intents("Fill the PDF form. Also optimise my slow SQL query please!") == [
        "Fill the PDF form.",
        "Also optimise my slow SQL query please!",
    ]
    assert split_intents("merge the pdf and docx files for me") == []  # a bare "and" joins nouns
    assert split_intents("deploy the api to kubernetes. thanks!") == []  # "thanks!" is no request
    assert split_intents("one two three. " * 9) == ["one two three."] * 4  # at most four parts


def test_sentences_of_a_long_message():
    from skillctl.routing.intents import MAX_SENTENCES, sentences

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


def test_a_question_about_a_concept_is_told_from_one_about_the_writers_things():
    from skillctl.routing.intents import asks_what_it_is

    for concept in (
        "what's a linked list",
        "What is a race condition?",
        "explain dependency injection",
        "ok so how does a hash map handle collisions",
        "why would you use a monorepo",
        "difference between a process and a thread",
        "what does ref mean in a git reflog",
        "what does SLA stand for",
        "what does the -p flag do in mkdir -p",
        "kubernetes: what's the difference between a deployment and a statefulset?",
        "building a synth at home. what's the actual difference between an LFO and an envelope?",
        "how is a b-tree different from an lsm tree",
        "can you explain what a CDN is at a high level? our designer keeps mentioning it",
        "kafka vs rabbitmq in plain english",
        "why would anyone use graphql instead of rest",
        "in short, what is a monad",
        "I'm a PM with no ML background. in two paragraphs, what's the difference between fine-tuning and RAG?",
        "why do airlines overbook flights?",
        "why is rust's borrow checker so strict",
        "vue options api vs composition api, which should a new project use",
        "tabs vs spaces, what's the real difference besides taste",
        "general question: do message queues guarantee ordering?",
        "grpc streaming, just want the big picture before the meeting",
        "trying to understand the tradeoff between eventual and strong consistency",
        "explain CORS for my non-technical cofounder",
        "redis hash vs storing a json string under a single key, what's the tradeoff",
    ):
        assert asks_what_it_is(concept), concept
    for own in (
        "what's this error in my build",
        "explain our retry loop",
        "what does the following regex match",
        "rotate the pdf pages",
        "can you explain dependency injection in this file",
        "deploy the api, what is left after that",  # the question is not how it opens
        "what does this error mean",
        "rotate the pdf pages. what is the fastest way",  # a request, then a question about it
        "what is the difference between our staging and prod configs",
        "I want to understand why the nightly build fails, debug it please",
        "why does this return None",
        "why are the checks failing on my pull request",
        "diff my branch vs main and list what changed",  # "diff" asked of the writer's things
        "the job crashes on this line, I want to understand what is going on",
        "what's trending on hacker news today?",  # live data
    ):
        assert not asks_what_it_is(own), own


def test_a_general_question_on_a_skills_topic_is_told_from_a_request_phrased_as_a_question():
    from skillctl.routing.intents import asks_a_general_question

    for general in (
        "how does a Telegram bot receive messages, is it long polling or webhooks or both",
        "should I still learn CentOS in 2025 given the whole CentOS Stream thing",
        "best practices for naming redis keys? colons, prefixes, versioning?",
        "if I were to migrate from jira to linear, what would I worry about?",
        "is there a catch with serverless for a side project",
        "why is telegram's bot api so popular compared to other messengers",
        "how long should a github issue title be",
    ):
        assert asks_a_general_question(general), general
    for ask in (
        "how do i add a custom solana devnet RPC in phantom",  # a how-to for the writer's own setup
        "why does my cron job work manually but not from crontab",  # the writer's things
        "why is this test red on CI",
        "is there a padel court free sunday morning?",  # a state at some time: a lookup
        "what did we ship last week",
        "what's this video about? https://example.invalid/watch?v=1",  # an address to read
        "should I buy COST at these levels? want valuation, fundamentals and a clear buy/hold/sell",
        "what's the weather in paris",  # the state of something now
        "is it going to rain in berlin",
        "who is on call for payments",
        "deploy the api to staging",  # no question at all
    ):
        assert not asks_a_general_question(ask), ask


def test_a_question_about_the_state_of_something_now_is_no_concept_question():
    from skillctl.routing.intents import asks_what_it_is

    for live in ("what's the weather in paris", "what's the price of bitcoin", "what's the status of the deploy"):
        assert not asks_what_it_is(live), live
    for concept in ("what's the weather like on mars", "what's a 404 status code", "what's an exchange"):
        assert asks_what_it_is(concept), concept


def test_general_knowledge_and_chat_are_told_from_questions_about_the_writers_things_or_live_data():
    from skillctl.routing.intents import asks_about_the_world

    for world in (
        "who created the swift programming language?",
        "how many calories are in a banana",
        "tell me a joke about databases",
        "what's the history of the swap meet",
        "hey, when was react first released",
        "what year did the berlin wall fall",
        "how do you say 'deadline' in german",
        "what was the first website ever made?",
        "history of OCR, who built the first practical OCR machine",
        "the origin of the term 'bug' in computing, is the moth story real",
        "how did the name Gong for the sales call software come about",
        "why did microsoft call it Power Platform",
    ):
        assert asks_about_the_world(world), world
    for ask in (
        "where is my foodora order",
        "how much time did I track this week in toggl",
        "how many planes are flying overhead right now",  # live data: a tool fetches it
        "when is the next flight from paris to nyc",
        "how many users signed up in supabase this week",
        "tell me the history of our billing service",
        "make a joke generator, who knows",  # not how it opens
        "how do you write tests in jest",  # a how-to, not a language question
        "history of my git branch, squashed",  # the writer's own thing
    ):
        assert not asks_about_the_world(ask), ask


def test_advice_and_opinion_are_told_from_requests():
    from skillctl.routing.intents import asks_for_advice

    for advice in (
        "is it worth learning emacs in 2026?",
        "is a standing desk really worth the money",
        "postgres or mysql for a small saas, which would you pick?",
        "should I rent or buy a flat in lisbon",
        "I mostly write go. should I learn rust next or stick with what I know?",
        "is it ever ok to push straight to main",
        "is it rude to decline a meeting without a reason?",
        "can you recommend a good book on distributed systems?",
        "what are the pros and cons of microservices",
        "do you think tabs are better than spaces",
        "vim or emacs for a beginner?",
        "renting vs buying in a city you might leave in 3 years?",
        "would you rather work remote or hybrid",
        "is it bad practice to squash every merge",
        "is it crazy to self-host email in 2026",
        "for a blog with 50 readers, would you go hugo or astro?",
        "our sprint board has 9 columns. is that too many or am i overreacting",
        "serverless vs containers for a cron job. when would you pick one over the other",
    ):
        assert asks_for_advice(advice), advice
    for ask in (
        "which index does this query need?",
        "is the padel court free on saturday",
        "set up a worthwhile backup schedule",
        "track what my portfolio is worth today",
        "should the retry loop back off exponentially",  # about the writer's own code
        "can you send the report by slack or email?",  # a request that offers a choice
        "export the table as csv or json?",
        "any jazz or blues gigs in lisbon this weekend?",  # live data, not two options weighed
    ):
        assert not asks_for_advice(ask), ask


def test_a_question_about_the_assistant_is_no_request():
    from skillctl.routing.intents import asks_about_the_assistant

    for about in (
        "which model are you?",
        "do you have access to my calendar?",
        "who trained you",
        "are you an AI",
        "can we keep this conversation about kotlin only? i'll ask about the frontend later",
    ):
        assert asks_about_the_assistant(about), about
    for ask in ("give the bot access to my calendar", "what model should we fine-tune for this?"):
        assert not asks_about_the_assistant(ask), ask


def test_editing_text_the_message_quotes_is_told_from_editing_a_file():
    from skillctl.routing.intents import edits_given_text

    for edit in (
        'fix the grammar: "their going to the meeting with we"',
        "rewrite this so it sounds warmer: 'Your request has been denied due to policy.'",
        'can you rephrase "per my last email, see attached" so it is less curt',
        "make this reply friendlier: 'send me the numbers by noon'",
        # given after a colon, or quoted short, where the ask points at it
        "make this more formal for a customer email: hey, so the invoice went out wrong, we charged u twice",
        "tighten this abstract, it's over the 80 word limit: We present a novel approach to protein function",
        'rewrite this bug report title so it\'s actually useful: "app broken!!!"',
        'fix the punctuation and capitalization: "we use supabase for auth postgres and storage"',
        'make this listing description for my used bike more appealing: "Selling my bike. 3 years old."',
    ):
        assert edits_given_text(edit), edit
    for ask in (
        "rewrite my cover letter for this job posting",  # the text is elsewhere: a skill may help
        "fix the grammar in README.md",
        'add a "Contact" page to the site',
        "rewrite the README: add install steps and a usage section for the new cli flags",  # instructions
        "rewrite it: shorter please",  # nothing given after the colon
        # a second request before the colon
        "rewrite this cold email so it doesn't read as AI, then load it as step 1 of the campaign in instantly:"
        "\n\nHi {{firstName}}, I hope this email finds you well. In today's competitive landscape...",
    ):
        assert not edits_given_text(ask), ask


def test_the_ask_of_an_edit_is_the_message_without_the_text_it_gives():
    from skillctl.routing.intents import edit_request

    assert edit_request("polish this landing page copy: The all-in-one platform for modern teams, built to ship") == (
        "polish this landing page copy"
    )
    assert edit_request('fix the grammar: "their going to the meeting with we"').split() == ["fix", "the", "grammar:"]
    assert edit_request('rewrite this title so it\'s useful: "app broken!!!"').split() == [
        "rewrite",
        "this",
        "title",
        "so",
        "it's",
        "useful:",
    ]
    assert edit_request("rewrite the README: add install steps and a usage section for the new cli flags") is None
    assert edit_request("deploy the api") is None


def test_arithmetic_on_numbers_the_message_gives_is_told_from_data_to_look_up():
    from skillctl.routing.intents import asks_for_arithmetic

    for sum_ in (
        "if stripe charges 2.9% + 30c, how much do i actually net on a $19/month subscription",
        "100 mbps link, 1.2 TB nightly backup, does it finish in an 8 hour window?",
        "a 4K video at 30fps for 90 seconds in remotion, how many frames is that",
    ):
        assert asks_for_arithmetic(sum_), sum_
    for ask in (
        "how much did we spend on aws in march 2024 across 3 accounts",  # data to look up
        "what is 250 usd in eur and 100 gbp at today's rate",  # a rate now
        "book 2 tickets for the 7pm show, how much in total",  # a request first
        "what's the weather for the next 3 days in 2 cities",
        "can you total the 12 invoices from 3 vendors",
        "how many users signed up",  # no numbers given
    ):
        assert not asks_for_arithmetic(ask), ask


def test_a_remark_a_feeling_or_news_is_told_from_a_problem_or_a_request():
    from skillctl.routing.intents import remarks

    for remark in (
        "can I just say draw.io is the most underrated tool in our company",
        "just shipped my first telegram bot, it only says hello but i'm proud of it",
        "honestly kinda sad plex removed some features i liked, anyway",
        "we finally hit 1000 paying customers on our shopify store today!",
        "my manager just told me we're switching to linear next month and i'm weirdly excited",
    ):
        assert remarks(remark), remark
    for ask in (
        "ugh the build broke again",  # a problem to look into
        "honestly just deploy it",
        "yay! now merge the PR",
        "lol can you check my calendar",
        "i'm so tired of the flaky e2e suite failing on CI",
        "the deploy is done",  # no remark at all
    ):
        assert not remarks(ask), ask


def test_a_question_about_code_the_message_shows_is_told_from_asking_for_work_on_it():
    from skillctl.routing.intents import asks_about_shown_code

    # "explain this <thing>: <pasted>": the pasted thing is what to explain
    assert asks_about_shown_code("explain this c# snippet, why is it bad: public async void Click(object s) { }")
    assert not asks_about_shown_code("explain this diff and then fix the tests: a b c d e")
    assert not asks_about_shown_code("explain this codebase to me")

    trace = "Traceback (most recent call last):\n  File \"app/jobs.py\", line 12, in run\nKeyError: 'sku'"
    for question in (
        f"is this a bug in the library or in my code?\n\n{trace}",
        f"the importer died with this, what does it mean\n\n{trace}",
        "docker compose up says `port is already allocated` for 5432. so how do people run two stacks at once",
        "```\nSELECT * FROM t WHERE x = NULL\n```\nwhy no rows",
    ):
        assert asks_about_shown_code(question), question
    for work in (
        f"fix this please\n\n{trace}",
        f"why does the importer fail? track it down and patch it\n\n{trace}",
        f"write a test that reproduces this\n\n{trace}",
        "why is the nightly build failing?",  # nothing shown: the build is there to look at
        "here's the diff:\n\n-    retries = 3\n+    retries = 0\n\ndo a security focused review of it",
    ):
        assert not asks_about_shown_code(work), work


def test_quoted_passages_are_found_in_linear_time_and_apostrophes_open_none():
    from skillctl.routing.intents import unquoted

    assert unquoted("what does she mean by 'it lacks a clear thesis statement'?").split() == [
        "what",
        "does",
        "she",
        "mean",
        "by",
        "?",
    ]
    kept = "tell my brother I'm stuck and won't make it, he's waiting"
    assert unquoted(kept) == kept  # apostrophes inside words are no quotes
    assert unquoted("add 'renew passport' to ticktick") == "add 'renew passport' to ticktick"  # a name
    # An unclosed quote over a long line: one pass, not a backtracking search per word (the
    # pattern this replaced took minutes here; pytest's timeout stops a regression).
    unclosed = "'" + "word " * 20000
    assert unquoted(unclosed) == unclosed


def test_a_follow_up_on_the_last_answer_is_told_from_a_new_request():
    from skillctl.routing.intents import follows_up

    for follow in (
        "can you add type hints to that function",
        "in the query you wrote above, use a left join",
        "same thing but for the orders table",
        "do the same for the other two endpoints",
        "can we do it without pandas?",
        "that didn't work, same error as before",
        "now do the same thing for the update endpoint",
        "you said earlier that HNSW is approximate. does that mean results can change between runs?",
    ):
        assert follows_up(follow), follow
    for ask in ("add type hints to utils/pricing.py", "write a query for the top customers", "do it again tomorrow"):
        assert not follows_up(ask), ask


def test_a_short_thanks_is_told_from_one_that_asks_for_more():
    from skillctl.routing.intents import acknowledges

    for thanks in (
        "thanks, that test passes now",
        "perfect, ship it",
        "got it",
        "Thank you!! that worked",
        "alright, the import finally runs without errors now, thanks so much for the patience",
        "nvm, figured it out",
    ):
        assert acknowledges(thanks), thanks
    for ask in (
        "thanks, can you also add the docs",
        "thanks! now write the tests for the parser",
        "cool, deploy it to staging please",
        "great, what about the staging cluster?",
        "thanks for the help earlier, the nightly job failed again with a KeyError in the importer",
        "run the tests",
    ):
        assert not acknowledges(ask), ask


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
    import skillctl.routing.router as router_module

    router = Router(SKILLS)
    real = router._route_text
    whole = "merge the pdf files. deploy it to kubernetes now"
    monkeypatch.setattr(
        router, "_route_text", lambda text, recent, qv=None, **kw: [] if text == whole else real(text, recent)
    )
    assert names(router.route(whole)) == ["pdf-tools", "k8s-deploy"]
    # ... but one request alone in a message that passes nothing is not enough
    lone = "merge the pdf files. what a lovely morning it is"
    monkeypatch.setattr(
        router, "_route_text", lambda text, recent, qv=None, **kw: [] if text == lone else real(text, recent)
    )
    assert router.route(lone) == []
    assert router_module.split_intents(lone) == ["merge the pdf files.", "what a lovely morning it is"]


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
    from skillctl.routing.intents import split_intents

    gap = " " * 200_000
    assert split_intents(f"merge these pdf files{gap}then deploy the api to kubernetes") == [
        "merge these pdf files",
        "deploy the api to kubernetes",
    ]
