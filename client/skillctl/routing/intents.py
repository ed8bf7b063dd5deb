"""Messages with more than one request: "book the flight, then check the weather there".

A whole message that asks for two things scores each skill on a mix of both, so the second
request (sometimes both) can fall below the threshold. The message is split where one request
ends and another begins (sentence ends, and connectors such as "then", "also", "as well as";
not a bare "and", which joins nouns as often as requests), and each part is routed on its own.
:func:`sentences` splits more finely, for scoring a long message sentence by sentence.

What a message asks for, besides: the ``asks_*``, :func:`acknowledges`, :func:`edits_given_text`
and :func:`follows_up` tests tell a general message (a concept, general knowledge, advice, a
question about code it shows, a thanks...) from a request; :func:`scoring.is_general` combines
them. Pure code.
"""

from __future__ import annotations

import re

from skillctl.routing.text import prose

MIN_PART_WORDS = 3  # "thanks." or "please" is not a request of its own
MAX_PARTS = 4  # each part costs one more encode with semantic routing
MAX_SENTENCES = 6  # ... and so does each sentence of a long message (one batch)
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_SENTENCE_ENDS = re.compile(r"(?<=[.!?;:])\s+|\n+")
# "what's a linked list", "explain dependency injection", "how does a hash map handle collisions",
# "what does ref mean":
# a question about what something is or how it works in general, not about the writer's own things
# ("what's this error", "explain our retry loop").
_CONCEPT_QUESTION = re.compile(
    r"^\W*(?:(?:so|ok|okay|hey|hi|quick question)\W+){0,2}"
    r"(?:what\s+(?:is|are)|what'?s|whats|(?:(?:can|could)\s+you\s+)?(?:please\s+)?explain|define|how\s+does"
    r"|how\s+do\s+\w+\s+work"
    r"|what\s+does\s+(?:\S+\s+){1,3}?(?:mean|stand\s+for|do)\b"
    r"|why\s+(?:would|should|do|does)?\s*(?:i|we|you|people|one|anyone|someone)?\s*use|(?:the\s+)?difference\s+between"
    # "why is snow in utah called champagne powder", "why do devs write diagrams as code": why the
    # world is as it is (not "why does this return None", "why are the checks failing on my PR")
    r"|why\s+(?:is|are|was|were|do|does|did|would|can'?t|cannot|don'?t|doesn'?t|didn'?t|isn'?t|aren'?t|won'?t))\b",
    re.IGNORECASE,
)
# "the actual difference between a latch and a flip-flop", "how is HNSW different from IVF": a
# comparison of two concepts, wherever in the message it is asked.
_COMPARISON = re.compile(
    r"\b(?:difference|differences|diff)\s+between\b|\bhow\s+(?:is|are)\s+\S+(?:\s+\S+){0,4}?\s+different\s+from\b"
    # "blazor server vs blazor webassembly, what's the difference", "em dash vs en dash, when to use which"
    # "redis hash vs a json string under one key, what's the tradeoff"
    r"|\b(?:vs\.?|versus)\s[^\n]{1,80}?\b(?:(?:the\s+)?(?:real\s+|actual\s+|main\s+)?(?:diff(?:erence)?s?|trade-?offs?)\b(?!\s+(?:of|in|on|to|from)\b)"
    r"|which\s+(?:one\s+)?(?:should|to|do|is\s+better)\b|when\s+(?:to|do\s+i|should\s+i)\s+use)",
    re.IGNORECASE,
)
# "just curious", "in plain english", "at a high level", "like I'm five", "not changing anything":
# the writer wants to understand, not to have something done.
_UNDERSTAND = re.compile(
    r"\b(?:just\s+curious|just\s+want(?:ing|s)?\s+to\s+(?:actually\s+)?understand|in\s+plain\s+english"
    r"|(?:at\s+a\s+|in\s+)?high[\s-]level\b(?=[?.,!]|\s*$)|like\s+i'?m\s+(?:five|\d+)|eli5"
    r"|not\s+(?:changing|tuning|touching|fixing)\s+anything|not\s+asking\s+(?:you\s+)?to"
    # "quick conceptual question:", "just want the big picture", "trying to understand the tradeoff"
    r"|\b(?:conceptual|theoretical|theory|general|honest|dumb|stupid|noob|newbie|beginner|basic|naive|silly)\s+question"
    r"|\b(?:the\s+)?(?:big\s+picture|general\s+idea|gist\s+of\s+it)\b|\bin\s+simple\s+terms\b"
    r"|(?:trying|want|wanting|wanted)\s+to\s+(?:actually\s+|really\s+|properly\s+)?understand\s+(?:the\s+(?:trade-?offs?"
    r"|difference|concept|idea|basics|theory|point|history|reasoning)|(?:it|this|them|that)\s+(?:before|first|better))"
    r"|(?:always|keep)\s+mix(?:ing)?\s+(?:them|these|those|the\s+two)\s+up|for\s+(?:my|a|an|our)\s+non[\s-]?technical)",
    re.IGNORECASE,
)
# "in two paragraphs, what's ...", "as a beginner, explain ...": a short clause before the question.
_LEAD_IN = re.compile(r"^\W*[^,.!?:;\n]{1,30}[,:]\s+")
_ABOUT_THE_WRITER = re.compile(r"^\W*(?:i|i'm|i've|i am|i have|we|we're|we are|as an?)\b", re.IGNORECASE)
_OWN_THINGS = re.compile(
    r"\b(?:my|our|this|these|that|those|here|mine|attached|below|above|following)\b", re.IGNORECASE
)
# "who invented the internet", "how many calories are in a banana", "tell me a joke about databases":
# general knowledge and chat, where a skill's name word ("swift", "banana") is the topic, not the ask.
_WORLD_QUESTION = re.compile(
    r"^\W*(?:(?:so|ok|okay|hey|hi|quick question|random question|just curious)\W+){0,2}"
    r"(?:who\s+(?:is|was|were|are|created|invented|wrote|made|won|founded|discovered|designed|built|owns|runs)"
    r"|when\s+(?:is|was|were|did)|where\s+(?:is|was|are|were|did|does|do)"
    r"|how\s+(?:many|much|old|tall|far|long\s+(?:is|was|does|did))|what\s+year|which\s+(?:year|country|city)"
    r"|what\s+(?:was|were)\s+the\s+(?:very\s+)?(?:first|last|largest|biggest|oldest|longest|most)\b"
    r"|(?:(?:some|any|give\s+me|got\s+any)\s+)?ideas\s+for\b"
    r"|how\s+do\s+you\s+(?:say|spell|pronounce)\s+.{1,40}?\s+in\s+(?:\w+(?:ish|ese)|french|german|italian|dutch"
    r"|russian|arabic|hindi|korean|greek|latin|hebrew|english|portuguese)"
    r"|(?:what'?s|what\s+is|tell\s+me)\s+(?:about\s+)?the\s+history\s+of"
    # "history of OCR, who built the first...", "the origin of the term bug", "how did the name
    # Gong come about", "why did microsoft call it power platform"
    r"|(?:the\s+)?(?:history|origins?)\s+of\b|how\s+did\s+(?:the\s+)?(?:name|term|word)\b"
    r"|why\s+did\s+\S+(?:\s+\S+)?\s+(?:call|name|rename)\b"
    r"|tell\s+me\s+(?:a|an|another|some)\s+(?:\w+\s+)?(?:joke|story|fun\s+fact|fact|riddle|poem)s?)\b",
    re.IGNORECASE,
)
# "what's going on in tech today": what is happening now (not "... for a review tomorrow": context).
_NOW = re.compile(
    r"\b(?:today|tonight|right\s+now|currently|at\s+the\s+moment|latest|this\s+(?:week|weekend|month)|so\s+far)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|me|we|us)\b", re.IGNORECASE)
# "how many planes are overhead right now", "when is the next flight to nyc": live data, which a
# skill (a tool) fetches and no model knows.
_LIVE = re.compile(
    r"\b(?:now|currently|today|tonight|tomorrow|next|latest|upcoming|live|at the moment|these days|so far|yet"
    r"|this\s+(?:week|weekend|month))\b",
    re.IGNORECASE,
)
# "how does a telegram bot receive messages", "should I still learn centos in 2025", "is there a
# catch with serverless", "if we migrated from jira to linear, what would we worry about", "best
# practices for naming redis keys?": a question of how things are in general or of what one
# should do, which the model answers from what it knows (not "how do I add an RPC in phantom": a
# how-to for the writer's own setup, which a skill may do).
_GENERAL_QUESTION = re.compile(
    r"^\W*(?:(?:so|ok|okay|hey|hi|hmm|honestly|quick\s+question|random\s+question|just\s+curious|question)\W+){0,2}"
    r"(?:how\s+(?:does|did|is|are|would|could)|how\s+(?:do|should|can)\s+(?!i\b|we\b)"
    r"|how\s+(?:long|often|much|many|big|short)\s+should"
    r"|what\s+(?:is|are|was|were|does|do|did|would|should|could|makes|happens)|what'?s|whats|why|who"
    r"|when\s+(?:did|was|is|should)|is\s+(?:it|there|a|an)|are\s+there|should\s+(?:i|we|you)|would\s+you|do\s+you"
    r"|does\s+(?:a|an|the)|can\s+(?:a|an|the)|if\s+(?:i|we|you|someone|my|our)\s+(?:were|had|wanted|was|did)"
    r"|best\s+practices?|any\s+(?:tips|advice|rule))\b",
    re.IGNORECASE,
)
# ... about the writer's things or a state of the world at some time ("why is this test red", "is
# there a court free sunday morning", "what did we ship last week"): data to look up.
_SPECIFIC = re.compile(
    r"\b(?:yesterday|last\s+(?:week|month|night|year)|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|weekend|morning|afternoon|evening|free|available|open)\b",
    re.IGNORECASE,
)
# "what's the weather in paris", "who is on call for payments", "what's the status of the deploy":
# the state of something now, which a skill (a tool) looks up, however it is asked.
_LIVE_STATE = re.compile(
    r"\b(?:(?:weather|forecast|temperature)\s+(?:in|for|at|near|around|tomorrow|today|tonight|this|next|like\s+(?:in|at))"
    r"|(?:going\s+to|gonna|will\s+it)\s+(?:rain|snow)|(?:price|prices|score|standings|status)\s+(?:of|for|in)"
    r"|exchange\s+rate|who(?:'?s|\s+is)\s+on[\s-]call\b)",
    re.IGNORECASE,
)
# ... and not followed by a request ("should I buy COST? want valuation and a clear buy/sell").
_ASKS_SOMETHING_DONE = re.compile(
    r"\b(?:want|need|give\s+me|show\s+me|get\s+me|pull|find|build|make|create|list|send|check|run|fix|write|add"
    r"|set\s+up|book|schedule|merge|push|publish|post|order|buy|cancel|delete|remove|rename|upload|download|install"
    r"|convert|translate|summari[sz]e|draft|remind|email|deploy|start|stop|restart|open|close)\b",
    re.IGNORECASE,
)
# "if stripe charges 2.9% + 30c, how much do I net on $19?", "a 4K video at 30fps for 90 seconds, how
# many frames is that": arithmetic on numbers the message gives, which the model does itself
# (not "how much did we spend on aws in march": data to look up).
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
MIN_NUMBERS = 2
_HOW_MUCH = re.compile(
    r"\b(?:how\s+(?:much|many|long|big|fast)|what'?s|whats|what\s+(?:is|are|would|will)|does\s+it|do\s+we"
    r"|when\s+(?:do|does|will|would)|roughly|in\s+total)\b",
    re.IGNORECASE,
)
_DATE = re.compile(
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?"
    r"|nov(?:ember)?|dec(?:ember)?|q[1-4])\b|\d{1,2}/\d{1,2}|\b\d{1,2}(?:st|nd|rd|th)\b|\b(?:19|20)\d\d\b",
    re.IGNORECASE,
)
# "can I just say draw.io is underrated", "just shipped my first telegram bot, i'm proud of it",
# "honestly kinda sad plex removed some features": a remark, a feeling or news, which asks nothing
# (not "ugh the build broke again": a problem to look into).
_REMARK = re.compile(
    r"^\W*(?:can\s+i\s+just\s+say|just\s+wanted\s+to\s+(?:say|share|let\s+you\s+know)|not\s+gonna\s+lie|ngl"
    r"|honestly|ok(?:ay)?\s+i\s+admit|lol|lmao|haha\w*|wow|yay|woo+|ugh|fun\s+fact|random\s+thought"
    r"|hey\s+it'?s\s+me)\b"
    r"|\b(?:i'?m|i\s+am|feeling|feel)\s+(?:so\s+|really\s+|weirdly\s+|kinda\s+|kind\s+of\s+|a\s+bit\s+|pretty\s+|super\s+)?"
    r"(?:excited|proud|happy|sad|scared|nervous|tired|exhausted|burn(?:t|ed)\s+out|stressed|annoyed|frustrated|bored"
    r"|thrilled|relieved)\b"
    r"|\b(?:we|i)\s+(?:finally|just)\s+(?:hit|shipped|launched|passed|reached|crossed|got\s+(?:our|my|the)\s+first)\b",
    re.IGNORECASE,
)
_PROBLEM = re.compile(
    r"\b(?:broke|broken|break|breaks|breaking|fail\w*|error\w*|crash\w*|not\s+working|doesn'?t\s+work|won'?t|can'?t"
    r"|cannot|wrong|issue|issues|bug|bugs|stuck|down|slow|missing|lost)\b",
    re.IGNORECASE,
)
_ASKS_YOU = re.compile(r"\b(?:can|could|would|will)\s+you\b|\bplease\b|\bpls\b|\bhelp\b", re.IGNORECASE)
# "thanks, that test passes now", "perfect, ship it": a short reply that acknowledges, not a request
# (unless it goes on to ask: "thanks, can you also add the docs").
_ACKNOWLEDGEMENT = re.compile(
    r"^\W*(?:thanks|thank\s+you|thx|ty|cheers|great|perfect|awesome|cool|nice|sweet|lovely|brilliant|nvm|never\s*mind|"
    r"got\s+it|ok(?:ay)?\s+(?:thanks|great|cool|perfect)|that\s+(?:worked|works|did\s+it))\b",
    re.IGNORECASE,
)
# "is it worth learning vim", "notion or obsidian, which would you pick", "should I pay off the loan
# or invest": advice and opinion, which the model gives from what it knows; a product named there
# is one of the options weighed, not a request to use its skill.
_ADVICE = re.compile(
    r"\b(?:is\s+(?:it|\w+(?:\s+\w+){0,3}?)\s+(?:really\s+)?worth\s+(?:it|\w+ing|the\s+\w+)"
    r"|worth\s+(?:learning|picking\s+up|switching|buying|getting|upgrading|it)\b.*\?"
    r"|(?:which|what)\s+(?:one\s+)?would\s+you\s+(?:pick|choose|use|recommend|suggest|go\s+with|do)"
    r"|would\s+you\s+(?:recommend|suggest|pick|choose|take|rather|accept|go)|do\s+you\s+(?:think|recommend|prefer)"
    r"|should\s+i\s+(?:\w+\s+){0,4}?or\b|or\s+should\s+i\b"
    r"|is\s+it\s+(?:ever\s+|really\s+|considered\s+)?(?:a\s+)?(?:ok|okay|fine|bad|safe|normal|acceptable|rude|polite"
    r"|weird|unprofessional|crazy|dumb|stupid|silly|legal|illegal|wise|smart|risky|overkill|good|bad)"
    r"(?:\s+(?:idea|practice|move))?\s+to"
    r"|(?:ever|really)\s+(?:ok|okay|acceptable|a\s+good\s+idea)\b"
    r"|(?:can|could)\s+you\s+recommend\s+(?:a|an|some)\s+(?:good\s+)?(?:book|course|tutorial|resource|podcast)s?"
    r"|pros\s+and\s+cons\s+of|when\s+would\s+you\s+(?:pick|choose|use|go\s+with)"
    r"|or\s+(?:am\s+i\s+overreacting|is\s+there\s+a\s+catch|is\s+it\s+just|is\s+that\s+a\s+myth))",
    re.IGNORECASE,
)
# "Notion or Obsidian for personal notes?", "index funds vs picking stocks?": two options weighed,
# in a question that opens with them (not "can you send it by slack or email?").
_EITHER_OR = re.compile(
    r"^\W*(?!(?:can|could|would|will|do|does|did|is|are|was|how|what|why|when|where|which|who|please|pls|should"
    r"|send|make|convert|export|save|create|add|put|use|run|deploy|post|upload|get|find)\b)"
    r"[^?.!\n]{1,60}?\s(?:or|vs\.?|versus)\s[^?.!\n]{1,80}\?",
    re.IGNORECASE,
)
# "what model are you", "do you have access to my drive", "do you remember my name": about the
# assistant itself.
_ABOUT_YOU = re.compile(
    r"\b(?:(?:what|which)\s+(?:model|llm|ai|version)\s+are\s+you|are\s+you\s+(?:an?\s+)?(?:ai|bot|human|robot|gpt|claude|chatgpt)"
    r"|who\s+(?:made|built|trained|created)\s+you|do\s+you\s+(?:have\s+access\s+to|remember|know\s+who|ever\s+get)"
    r"|can\s+you\s+see\s+my|(?:keep|make)\s+this\s+(?:conversation|chat)\b)\b",
    re.IGNORECASE,
)
# "fix the grammar: \"me and him has been...\"", "rewrite so it sounds friendlier: '...'": editing
# text given in the message itself.
_EDIT = re.compile(
    r"^\W*(?:(?:can|could)\s+you\s+|please\s+|pls\s+)?(?:rewrite|reword|rephrase|proofread|polish|tighten|shorten"
    r"|simplify|fix\s+(?:the\s+)?(?:grammar|typos|spelling|wording|punctuation|capitali[sz]ation)"
    r"|make\s+(?:this|it)\s+(?:\w+\s+){0,6}?(?:sound|more|less|shorter|clearer|friendlier|nicer|warmer|politer|punchier)"
    r"|help\s+me\s+(?:re)?(?:word|phrase))\b",
    re.IGNORECASE,
)
# A passage between quotes on one line: an apostrophe inside a word ("I'm", "won't") neither opens
# nor closes one. Each character matches one way only, so a long unclosed quote costs linear time.
_QUOTE = re.compile(
    r"(?<!\w)[\"\u201c\u2018']((?:[^\"\u201c\u201d\u2018\u2019'\n]|(?<=\w)['\u2019](?=\w))*)[\"\u201d\u2019'](?!\w)"
)
MIN_QUOTED_WORDS = 4  # "add 'renew passport' to ticktick": a name, not a passage
MIN_GIVEN_WORDS = 8  # ... and after a colon, a passage of its own, not "rewrite it: shorter please"
_POINTS_AT_GIVEN = re.compile(
    r"\b(?:this|these|the\s+following|grammar|typos|spelling|wording|punctuation|capitali[sz]ation)\b", re.IGNORECASE
)
# "can you add a docstring to that function", "in the snippet you wrote above, rename data to
# orders", "same thing but in typescript": a follow-up on the assistant's own last answer.
_FOLLOW_UP = re.compile(
    r"\b(?:you\s+(?:just\s+)?(?:wrote|gave|suggested|showed|posted|made)"
    r"|you\s+(?:said|mentioned|told\s+me)\s+(?:earlier|before|above|that)"
    r"|(?:to|in|on|for)\s+that\s+(?:function|snippet|code|answer|version|example|script|query|regex|paragraph)"
    r"|same\s+thing\s+but|do\s+the\s+same(?:\s+thing)?\s+(?:for|with|to)|(?:do|write)\s+(?:it|that|this)\s+(?:without|with|in|using)"
    r"|that\s+didn'?t\s+work|same\s+error)\b",
    re.IGNORECASE,
)
# "why does this deadlock? <code>", "kubectl apply gives `error converting YAML`... where is it": a
# question about code, a log or an error the message shows, which the model reads and answers
# itself (not "fix this: <trace>", "why does it fail? track it down": asks for work).
_QUESTION = re.compile(
    r"\?|(?:^\W*|[,;:.]\s+|\bso\s+)(?:why|what|where|which|how|safe\s+to|any\s+idea"
    r"|(?:is|are|does|do|did|can|could|should|would|will)\s+(?:it|this|that|these|those|there|i|we|you|my|our|the)\b)",
    re.IGNORECASE,
)
_ASKS_FOR_WORK = re.compile(
    r"(?:^\W*|[.!?;,]\s+|\b(?:please|pls|can\s+you|could\s+you|and|then|just|help\s+me)\s+)"
    r"(?:fix|debug|track\s+(?:it|this|that)?\s*down|find\s+(?:out|where|the|it)|trace|investigate|write|generate|add"
    r"|create|refactor|review|update|deploy|run|test|reproduce|patch|commit|do\s+an?|open\s+a|file\s+a|look\s+into"
    r"|dig\s+into)\b",
    re.IGNORECASE | re.MULTILINE,
)
_INLINE_CODE = re.compile(r"`[^`\n]{3,}`")
# "explain this c# snippet, why is it bad: public async void ...", "explain what the timeout in
# this url means: rtsp://...": what the message pastes after the colon is the thing to explain.
_EXPLAIN_GIVEN = re.compile(
    r"^\W*(?:(?:can|could)\s+you\s+|please\s+|pls\s+)?explain\s+(?:to\s+me\s+)?(?:what\s+)?[^:\n]{0,80}?"
    r"\b(?:this|these|the\s+following)\b[^:\n]{0,80}:\s*\S",
    re.IGNORECASE,
)
MIN_EXPLAINED_WORDS = 3
_ASKS_AGAIN = re.compile(r"\b(?:please|pls|can|could|would|will|let'?s|also|next|now\s+\w+\s+the)\b|\?", re.IGNORECASE)
MAX_ACKNOWLEDGEMENT_WORDS = 8
# "ok cool, the webhook finally returns 200 now, thanks for sticking with me": a longer thanks.
_THANKS_FOR = re.compile(r"\b(?:thanks|thank\s+you)\s+(?:for|so\s+much|a\s+lot)\b", re.IGNORECASE)
MAX_THANKS_WORDS = 20
MAX_AFTER_THANKS = 4
# A match starts at a comma or where a run of spaces starts: linear on a message of many spaces
# (",?\s+" tried every space of a run again: 20,000 spaces took 30 s).
_CONNECTORS = re.compile(
    r"(?:,|(?<![\s,]))\s+(?:and then|and also|then|also|as well as|after that|afterwards|plus|but first)\s+",
    re.IGNORECASE,
)


def split_intents(text: str) -> list[str]:
    """The requests in ``text`` (at most ``MAX_PARTS``); one element or none: nothing to split."""
    parts = [c for s in _SENTENCES.split(text) for c in _CONNECTORS.split(s)]
    parts = [p.strip() for p in parts if len(p.split()) >= MIN_PART_WORDS]
    return parts[:MAX_PARTS] if len(parts) >= 2 else []


def sentences(text: str) -> list[str]:
    """The sentences of a message that has several (each of ``MIN_PART_WORDS`` words or more);
    none for a message of one. A long message tells its story around one sentence that asks
    ("... it only happens some nights. how do we track this down?"), and that sentence alone is
    closer to the right skill than the whole is. Past ``MAX_SENTENCES``, the first and the last
    ones: the ask opens a message or closes it (an email's story sits in the middle)."""
    found = [s.strip() for s in _SENTENCE_ENDS.split(text) if len(s.split()) >= MIN_PART_WORDS]
    if len(found) > MAX_SENTENCES:
        found = found[: MAX_SENTENCES // 2] + found[-(MAX_SENTENCES - MAX_SENTENCES // 2) :]
    return found if len(found) >= 2 else []


def asks_what_it_is(text: str) -> bool:
    """Is ``text`` a question about a concept ("what's a linked list", "explain dependency
    injection"), not about the writer's own things ("what's this error", "explain our retry
    loop")? Naming a skill's topic there is not asking for the skill."""
    if _UNDERSTAND.search(text):
        return True
    parts = sentences(text) or [text]
    if any(_COMPARISON.search(s) and not _OWN_THINGS.search(s) for s in parts):
        return True
    # The question's own sentence decides (context after it, "our dev keeps saying...", does not).
    # ... unless it asks what is happening now ("what's going on in tech today?"): live data.
    if _opens_a_concept_question(parts[0]) and not (
        _OWN_THINGS.search(parts[0]) or _NOW.search(parts[0]) or _LIVE_STATE.search(parts[0])
    ):
        return True
    if _OWN_THINGS.search(text):
        return False
    # "I'm a PM with no ML background. what's the difference between fine-tuning and RAG?": who
    # asks, then the question (not "rotate the pdf pages. what is the fastest way").
    *before, last = parts
    return bool(before) and all(_ABOUT_THE_WRITER.match(s) for s in before) and _opens_a_concept_question(last)


def _opens_a_concept_question(sentence: str) -> bool:
    """Does ``sentence`` open (after a short lead-in: "in short, ...") with a concept question?"""
    return bool(_CONCEPT_QUESTION.search(_LEAD_IN.sub("", sentence, count=1)))


def asks_about_the_world(text: str) -> bool:
    """Is ``text`` general knowledge or chat ("who created the swift language", "how many calories
    are in a banana", "tell me a joke about databases"), with nothing of the writer's own ("where
    is my order", "how much time did I track this week") and nothing live ("how many planes are
    overhead right now")? A skill's name word there is the topic, not the ask."""
    opening = _WORLD_QUESTION.search(text)
    if not opening:
        return False
    rest = text[opening.end() :]  # "tell me a joke": "me" is no own thing
    return not (_OWN_THINGS.search(rest) or _FIRST_PERSON.search(rest) or _LIVE.search(rest))


def asks_a_general_question(text: str) -> bool:
    """Is ``text`` a question of how things are in general or of what one should do ("how does a
    telegram bot receive messages", "should I still learn centos", "best practices for naming
    redis keys?"), about nothing of the writer's own, at no particular time, at no address, and
    asking nothing done after it? A skill's topic there is the subject, not the ask."""
    first, *rest = sentences(text) or [text]
    return (
        bool(_GENERAL_QUESTION.search(first))
        and not any(p.search(first) for p in (_OWN_THINGS, _LIVE, _SPECIFIC, _LIVE_STATE))
        and "://" not in text
        and not any(_ASKS_SOMETHING_DONE.search(part) for part in rest)
    )


def asks_for_arithmetic(text: str) -> bool:
    """Is ``text`` arithmetic on numbers it gives ("if stripe charges 2.9% + 30c, how much do I
    net on $19?", "100 mbps link, 1.2 TB backup, does it finish in 8 hours?"), about no date, no
    time and no state of the world now, asking nothing done? The product named there is the
    setting of a sum, not a request."""
    return (
        len(_NUMBER.findall(text)) >= MIN_NUMBERS
        and bool(_HOW_MUCH.search(text))
        and "://" not in text
        and not _ASKS_SOMETHING_DONE.match(text.lstrip(" \t\n-*>\"'"))  # "book 2 tickets, how much in total"
        and not any(p.search(text) for p in (_DATE, _LIVE, _SPECIFIC, _LIVE_STATE, _ASKS_YOU, _ASKS_FOR_WORK))
    )


def remarks(text: str) -> bool:
    """Is ``text`` a remark, a feeling or news ("can I just say draw.io is underrated", "just shipped
    my first telegram bot, i'm proud of it"), with no problem in it and nothing asked? A product
    named there is talked about, not asked for."""
    return bool(_REMARK.search(text)) and not any(
        p.search(text) for p in (_PROBLEM, _ASKS_YOU, _ASKS_SOMETHING_DONE, _ASKS_FOR_WORK)
    )


def acknowledges(text: str) -> bool:
    """Is ``text`` a short reply that acknowledges ("thanks, that test passes now", "perfect,
    ship it") and asks nothing more? The words of a skill in it ("test pass") are no request."""
    n = len(text.split())
    thanks = [*_THANKS_FOR.finditer(text)]
    said = (n <= MAX_ACKNOWLEDGEMENT_WORDS and bool(_ACKNOWLEDGEMENT.search(text))) or (
        # a longer message that ends on its thanks (not "thanks for earlier, the job failed again")
        n <= MAX_THANKS_WORDS and bool(thanks) and len(text[thanks[-1].end() :].split()) <= MAX_AFTER_THANKS
    )
    return said and not _ASKS_AGAIN.search(text)


def asks_for_advice(text: str) -> bool:
    """Is ``text`` a question of advice or opinion ("is it worth learning vim", "notion or obsidian
    for a wiki?", "is it ever ok to commit secrets")? A skill's topic or product named there is
    weighed, not asked for."""
    if _ADVICE.search(text):
        return True
    # "notion or obsidian?" weighs two options; "any ai or startup meetups this week?" asks for live data
    either = _EITHER_OR.search(text)
    return either is not None and not _LIVE.search(either.group())


def asks_about_the_assistant(text: str) -> bool:
    """Is ``text`` about the assistant itself ("what model are you", "do you have access to my
    drive")? A product named there is no request."""
    return bool(_ABOUT_YOU.search(text))


def edits_given_text(text: str) -> bool:
    """Does ``text`` ask to edit words it quotes itself ("fix the grammar: \"me and him has...\"",
    "rewrite so it sounds less passive-aggressive: '...'"), or that the ask points at and gives
    ("rewrite this title: \"app broken!!!\"", "make this more formal: hey, so the invoice went
    out wrong...")? Plain writing help, no skill."""
    return edit_request(text) is not None


def edit_request(text: str) -> str | None:
    """The ask of a message that gives the text to edit (:func:`edits_given_text`), without that
    text ("polish this landing page copy: <copy>" -> "polish this landing page copy"), or None.
    The text to edit is the material, not the request: a skill for the edit (a copy editor, a
    humanizer) is found by the ask, not by the topic of what is pasted."""
    if not (edit := _EDIT.search(text)):
        return None
    if next(_quoted(text), None) is not None:
        return unquoted(text)
    # "this title: ...", "the grammar: ...": the words given are the text to edit (not "rewrite the
    # README: add install steps...", instructions; not "rewrite this email, then load it in
    # instantly: ...", a second request).
    ask, colon, given = text[edit.start() :].partition(":")
    if not _POINTS_AT_GIVEN.search(ask) or _CONNECTORS.search(ask):
        return None
    if colon and len(given.split()) >= MIN_GIVEN_WORDS:
        return text[: edit.start()] + ask
    short = [m for m in _QUOTE.finditer(text) if len(m.group(1).split()) >= 2]
    for passage in reversed(short):
        text = text[: passage.start()] + " " + text[passage.end() :]
    return text if short else None


def asks_about_shown_code(text: str) -> bool:
    """Is ``text`` a question about code, a log or an error it shows ("why does this deadlock?
    <code>", "terraform plan: <error> safe to force-unlock?"), asking for no work ("fix this:
    <trace>", "why does it fail? track it down")? The model answers from what it is shown."""
    if (given := _EXPLAIN_GIVEN.search(text)) and len(text[given.end() - 1 :].split()) >= MIN_EXPLAINED_WORDS:
        return not _ASKS_FOR_WORK.search(text[: given.end()])
    own = prose(text)
    if own == text and not _INLINE_CODE.search(text):
        return False  # nothing shown
    lines = _INLINE_CODE.sub(" ", own).splitlines()
    # The question opens the message or closes it (a line in the middle is the pasted material's).
    return any(_QUESTION.search(line) for line in {lines[0], lines[-1]}) and not any(
        _ASKS_FOR_WORK.search(line) for line in lines
    )


def unquoted(text: str) -> str:
    """``text`` without the passages it quotes (``MIN_QUOTED_WORDS`` words or more)."""
    for passage in reversed([*_quoted(text)]):
        text = text[: passage.start()] + " " + text[passage.end() :]
    return text


def _quoted(text: str):
    """The quoted passages of ``text`` (``re.Match`` objects, in order)."""
    return (m for m in _QUOTE.finditer(text) if len(m.group(1).split()) >= MIN_QUOTED_WORDS)


def follows_up(text: str) -> bool:
    """Does ``text`` ask to change the assistant's own last answer ("add a docstring to that
    function", "in the snippet you wrote above, rename x", "same thing but in typescript")?
    The skill that answer needed, if any, is the recent one; the words alone ask for none."""
    return bool(_FOLLOW_UP.search(text))
