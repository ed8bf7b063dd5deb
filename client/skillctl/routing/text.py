"""Words for routing: one tokenizer and one light stemmer, shared by manifests and scoring.

Both sides of a match (a manifest's keywords and a user's message) go through ``terms`` so
"deploying", "deploys" and "deploy" meet. The stemmer only strips common English endings; it is
deliberately crude and fast (routing runs on every message).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9][a-z0-9+#]*(?:['’][a-z]+)?")

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each either else etc even ever every few for from further
    get gets getting give given go going got had hadn't has hasn't have haven't having he her
    here hers herself him himself his how however i i'd i'll i'm i've if in into is isn't it
    it's its itself just let let's like ll make makes many may me might more most much must my
    myself need needs no nor not now of off on once one only or other ought our ours ourselves
    out over own please re really same say says shall she should shouldn't so some such than
    that that's the their theirs them themselves then there there's these they they're this
    those through thus to too under until up upon us use used uses using ve very via want wants
    was wasn't way we we're we've well were weren't what what's when where where's whether which
    while who who's whom why will with within without won't would wouldn't yes yet you you'd
    you'll you're you've your yours yourself yourselves able across already always another
    anything around ask asked asks based best better come could current currently different
    done e eg ie etc find found help helps know looking look new next per possible provide
    provides related see sure take tell thing things try unless used user users way ways work
    works s t d m o y
    """.split()
)


def stem(word: str) -> str:
    """Strip one common English ending: deploying -> deploy, queries -> query, boxes -> box."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, repl, min_len in (
        ("ies", "y", 5),
        ("sses", "ss", 5),
        ("xes", "x", 5),
        ("ches", "ch", 6),
        ("shes", "sh", 6),
        ("ing", "", 6),
        ("ed", "", 5),
        ("es", "e", 5),
        ("s", "", 4),
    ):
        if word.endswith(suffix) and len(word) >= min_len and not word.endswith("ss"):
            return word[: -len(suffix)] + repl
    return word


def words(text: str) -> list[str]:
    """Lower-cased words of ``text`` (apostrophes normalised, possessive 's dropped)."""
    found = _WORD.findall(text.lower().replace("’", "'"))
    return [w[:-2] if w.endswith("'s") else w for w in found]


def terms(text: str) -> list[str]:
    """Stemmed content words, in order (stopwords dropped)."""
    return [stem(w) for w in words(text) if w not in STOPWORDS]


def all_stems(text: str) -> list[str]:
    """Stemmed words in order, stopwords kept (phrases and names are matched on these)."""
    return [stem(w) for w in words(text)]


# Pasted code and logs are not the writer's words: a fenced block, an indented line, a line dense in
# code characters (inline `spans` aside) or a stack-trace line.
_FENCED = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_CODE_CHARS = frozenset("=(){}[];<>\\|$#*&^~_@")
_TRACE_LINE = re.compile(r"(?:Traceback \(most recent call last\)|File \"[^\"]*\", line \d+|at \S+:\d+(?::\d+)?\)?$)")
CODE_SHARE = 0.08  # a line with more code characters than this share of its length is code
MIN_PROSE_WORDS = 3


def _is_code(line: str) -> bool:
    if line.startswith(("    ", "\t", "@@")) or re.match(r"[+-](?: {2,}|\t)", line):  # indented, or a diff line
        return True
    bare = _INLINE_CODE.sub("x", line.strip())
    return sum(c in _CODE_CHARS for c in bare) > CODE_SHARE * len(bare) or bool(_TRACE_LINE.match(bare))


def without_code_blocks(text: str) -> str:
    """``text`` with its fenced code blocks (``` or ~~~, closed or running to the end) left out."""
    return _FENCED.sub("\n", text)


def prose(text: str) -> str:
    """``text`` in its writer's own words: pasted code and logs left out (fenced blocks, indented
    lines, lines dense in code characters, stack-trace lines). The text as it is when that leaves
    fewer than ``MIN_PROSE_WORDS`` words: a message that is all code is still what was asked."""
    kept = [line.strip() for line in without_code_blocks(text).splitlines() if line.strip() and not _is_code(line)]
    own = "\n".join(kept)
    return own if len(own.split()) >= MIN_PROSE_WORDS else text


def split_name(name: str) -> list[str]:
    """A skill or tool name as words: "pdf-editor" -> [pdf, editor], "NewsTool" -> [news, tool]."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]
