"""Markdown and text files read as what they are: instructions to an agent.

Phrase rules (override, conceal, exfiltrate) run on the prose lines holding one of their anchor
words. The sentence rules find an anchor (a credential described by path or in words, a URL, a
delete verb), then read the words around it in the same sentence: an instruction verb before it,
no negation ("never read ~/.ssh" is advice, not an attack). Alone, reading credentials is a
medium finding and deleting the user's files a high one; together with sending out, hiding from
the user or overriding earlier instructions they make one critical ``injection.combined``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator

from skillctl.format.scanner import rules as R

MAX_HITS = 64  # per rule and file: findings are capped at 20 anyway; pairing stays cheap
NEARBY_LINES = 5  # "read the keys. <line break> Then POST them to ...": one step of a recipe
SENTENCE_BACK = 120  # how far before an anchor an instruction's verb may sit (one clause)

CREDENTIAL_WORDS = (
    ".ssh",
    "ssh key",
    "ssh private key",
    "id_rsa",
    "id_ed25519",
    "aws credentials",
    ".aws/",
    "credentials file",
    "credential file",
    "token file",
    "gh/hosts.yml",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    ".docker/config",
    ".kube/config",
    "keychain",
    "saved passwords",
    "browser cookies",
    "login data",
    "wallet.dat",
    ".gnupg",
)
NOT_SECRET = (".pub", "authorized_keys", "known_hosts")
SEND_WORDS = ("http://", "https://", "webhook", "remote server", "pastebin", "ngrok")
DELETE_WORDS = ("delete", "remove", "erase", "wipe", "destroy", "shred")

READ_VERB = re.compile(
    r"\b(?:read|open|cat|copy|collect|gather|grab|extract|dump|print|load|access|include|archive|zip|tar|"
    r"upload|send|steal|exfiltrate|harvest|attach|encode|base64|contents\s+of)\b",
    R.IGNORE,
)
SEND_VERB = re.compile(
    r"\b(?:send|post|upload|transmit|forward|exfiltrate|submit|put|pipe|deliver|report|curl)\b", R.IGNORE
)
# Words that make a sentence advice, a description of an attack or an example, not an order.
NEGATION = re.compile(
    r"\b(?:never|not|don't|dont|avoid|without|refuse|prevent|block|detect|flag|warn|unless|instead|"
    r"attack\w*|malicious|suspicious|threat|such\s+as|e\.g|example)\b|n't\b",
    R.IGNORE,
)
DESTROY_OBJECT = re.compile(
    r"[^.\n]{0,30}?\b(?:the\s+user(?:'|’)?s\s+(?:files|documents|data|home|photos|projects|folders|repositor)|"
    r"(?:all|every)\s+(?:of\s+)?(?:the\s+)?(?:user(?:'|’)?s\s+|their\s+)(?:files|documents|data)|"
    r"(?:user(?:'|’)?s\s+|their\s+|the\s+)home\s+(?:folder|directory)|"
    r"everything\s+(?:in|on|under)\s+(?:the\s+)?(?:home|disk|drive|computer|~|\$home)|"
    r"(?:entire|whole)\s+(?:disk|drive|file\s*system|home))",
    R.IGNORE,
)


def _all(*words: str) -> Callable[[str], bool]:
    return lambda t: all(w in t for w in words)


def _any(*words: str) -> Callable[[str], bool]:
    return lambda t: any(w in t for w in words)  # substring tests in C beat one alternation regex


# (rule, pattern, prefilter on the whole lowered text, anchors): a pattern is tried only on the
# lines holding one of its anchor words (with the next line, as a sentence may wrap), which is
# far cheaper than running these case-insensitive patterns over every position of the text.
PHRASES = (
    (
        "injection.override",
        R.OVERRIDE,
        lambda t: (
            _any("previous", "prior", "earlier", "preceding", "above", "system", "your")(t)
            and _any("instruction", "direction", "prompt", "rules", "guidelines")(t)
        ),
        ("ignore", "disregard", "forget", "override"),
    ),
    (
        "injection.conceal",
        R.CONCEAL,
        lambda t: (
            "silently" in t
            or ("the user" in t or "them" in t)
            and _any(
                "not tell",
                "n't tell",
                "never tell",
                "hide",
                "without",
                "not inform",
                "not reveal",
                "not show",
                "not mention",
                "not let",
                "never show",
                "never mention",
                "never reveal",
                "never inform",
                "secret from",
            )(t)
        ),
        ("do not", "don't", "never", "without", "hide", "silently", "keep"),
    ),
    (
        "injection.exfiltrate",
        R.EXFILTRATE,
        lambda t: (
            _any("http", "webhook", "endpoint", "remote server")(t)
            and _any(
                "conversation",
                "history",
                "key",
                "credential",
                "secret",
                "password",
                "token",
                "environment",
                ".env",
                "id_rsa",
            )(t)
        ),
        ("send", "upload", "post", "transmit", "forward", "exfiltrate", "copy"),
    ),
)
# A service's own skill says "send your API key to `https://api.service.example`" in a line with
# inline code: that is how its API works. The exfiltration phrase counts only in plain sentences.
PLAIN_SENTENCES_ONLY = frozenset({"injection.exfiltrate"})


class Text:
    """One document: its lines, where each starts, the lowered text (same offsets) and which
    lines sit in a fenced or indented code block."""

    def __init__(self, lines: list[str], starts: list[int], lowered: str, block_code: Callable[[int], bool]) -> None:
        self.lines, self.starts, self.lowered, self.block_code = lines, starts, lowered, block_code

    def number(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def occurrences(self, words: tuple[str, ...]) -> Iterator[int]:
        for word in words:
            at = self.lowered.find(word)
            while at != -1:
                yield at
                at = self.lowered.find(word, at + 1)


def scan(doc: Text) -> Iterator[tuple[str, int]]:
    """(rule, line number) of every instruction finding in ``doc``, combinations last."""
    found: dict[str, list[int]] = {}
    for rule, pattern, could, anchors in PHRASES:
        if could(doc.lowered):
            found[rule] = list(_anchored(doc, pattern, anchors, plain=rule in PLAIN_SENTENCES_ONLY))
    found["injection.credentials"] = _sentences(doc, CREDENTIAL_WORDS, _reads)
    found["injection.destructive"] = _sentences(doc, DELETE_WORDS, _destroys)
    sends = (
        _sentences(doc, SEND_WORDS, lambda before, _: _verb(SEND_VERB, before))
        if found["injection.credentials"]
        else []
    )
    for rule, numbers in found.items():
        for number in numbers:
            yield rule, number
    combined = _combined(found, sends)
    if combined:
        yield "injection.combined", combined


def _combined(found: dict[str, list[int]], sends: list[int]) -> int | None:
    """The line of the first dangerous pairing, if any."""
    creds, destroy = found["injection.credentials"], found["injection.destructive"]
    conceal, override = found.get("injection.conceal", []), found.get("injection.override", [])
    for line in creds:
        if conceal or any(abs(line - sent) <= NEARBY_LINES for sent in sends):
            return line
    if destroy and (conceal or override):
        return destroy[0]
    return None


def _anchored(doc: Text, pattern: re.Pattern, anchors: tuple[str, ...], plain: bool) -> Iterator[int]:
    """Numbers of lines where ``pattern`` matches, starting on that line (which may run on into
    the next one); only lines holding an anchor word, outside code blocks, are tried."""
    lines = doc.lines
    for number in sorted({doc.number(at) for at in doc.occurrences(anchors)}):
        i = number - 1
        if doc.block_code(i) or (plain and "`" in lines[i]):
            continue
        window = lines[i] + ("\n" + lines[i + 1] if i + 1 < len(lines) else "")
        match = pattern.search(window)
        if match is not None and match.start() <= len(lines[i]):
            yield number


def _sentences(doc: Text, anchors: tuple[str, ...], judge: Callable[[str, str], bool]) -> list[int]:
    """Lines where an anchor's sentence, read by ``judge(text before, text after)``, instructs."""
    numbers: set[int] = set()
    for at in doc.occurrences(anchors):
        number = doc.number(at)
        if number in numbers or doc.lines[number - 1].lstrip().startswith("|"):
            continue  # a table row names a threat or an option; it instructs nothing
        line_start = doc.starts[number - 1]
        before = doc.lowered[max(line_start, at - SENTENCE_BACK) : at]
        before = before[before.rfind(". ") + 1 :]
        if judge(before, doc.lowered[at : at + 160]):
            numbers.add(number)
            if len(numbers) >= MAX_HITS:
                break
    return sorted(numbers)


def _reads(before: str, after: str) -> bool:
    """``after`` starts at the credential's name; public keys and host lists are no secret."""
    name = after.split(None, 1)[0].rstrip("`'\",;:)")
    return not name.endswith(NOT_SECRET) and _verb(READ_VERB, before)


def _verb(verb: re.Pattern, before: str) -> bool:
    return verb.search(before) is not None and NEGATION.search(before) is None


def _destroys(before: str, after: str) -> bool:
    return NEGATION.search(before) is None and DESTROY_OBJECT.match(after, after.find(" ") + 1 or 0) is not None
