"""The scanner's rules: a stable id, a severity and what each looks for (docs/scanner.md).

Where a match sits decides how much it weighs: code in ``scripts/`` (or any code file) runs;
a fenced block in SKILL.md or a reference is an instruction the agent may run; prose is prose.
Patterns are simple and linear (no nested quantifiers); lines are cut to ``MAX_LINE`` first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Bump when rules change: published versions are re-scanned with the new rules (docs/scanner.md).
RULES_VERSION = "2026.11.1"
SEVERITIES = ("info", "low", "medium", "high", "critical")
MAX_LINE = 4000  # longer lines are minified code or data: their start is enough to judge


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str  # the severity in executed code; docs and prose may weigh less (see ``weigh``)
    title: str


RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("unicode.tag_characters", "critical", "invisible Unicode tag characters (hidden text for the model)"),
        Rule(
            "unicode.bidi_override",
            "high",
            "bidirectional override characters (text that reads differently than it runs)",
        ),
        Rule("unicode.zero_width", "medium", "zero-width characters inside instructions"),
        Rule("injection.override", "high", "asks the model to ignore earlier instructions"),
        Rule("injection.conceal", "high", "asks the model to hide something from the user"),
        Rule("injection.exfiltrate", "critical", "asks the model to send secrets or conversation data out"),
        Rule("injection.credentials", "medium", "tells the agent to read credential files (by path or in words)"),
        Rule("injection.destructive", "high", "tells the agent to delete the user's files or home folder"),
        Rule(
            "injection.combined",
            "critical",
            "credentials read and sent out or hidden, or deletion with an override or concealment",
        ),
        Rule("mcp.command", "medium", "an MCP server command that runs on the user's host when the skill loads"),
        Rule("shell.pipe_to_shell", "high", "downloads a script and pipes it into a shell"),
        Rule("shell.reverse_shell", "critical", "opens a reverse shell"),
        Rule("shell.destructive_rm", "critical", "recursively deletes the home folder or the root"),
        Rule(
            "exec.obfuscated",
            "critical",
            "runs decoded or assembled text (base64, hex, zlib, escapes, chr, concatenation), or looks up "
            "exec/system under a name built from pieces",
        ),
        Rule("exec.dynamic_lookup", "high", "reaches exec, eval or a shell through getattr, __builtins__ or globals"),
        Rule("js.eval", "medium", "JavaScript eval or new Function on text that is not a literal"),
        Rule("credentials.exfiltration", "critical", "reads credential files and sends data over the network"),
        Rule(
            "credentials.read", "medium", "reads credential files (SSH, cloud, package managers, keychains, browsers)"
        ),
        Rule("env.dump_to_network", "critical", "sends the whole environment over the network"),
        Rule("secrets.hardcoded", "high", "a hard-coded secret (cloud key, private key, token)"),
        Rule(
            "requires.undeclared_env", "low", "a script reads an environment variable `requires.env` does not declare"
        ),
        Rule("requires.undeclared_bin", "low", "a script runs a program `requires.bins` does not declare"),
        Rule("archive.binary", "high", "a compiled executable or library in the archive"),
    )
}

# Executed code weighs what the rule says; an instruction in a code block one step less for
# rules about commands (a person may read it first); prose mentioning it is left alone.
DOC_CODE_DOWNGRADE = {"shell.pipe_to_shell", "shell.reverse_shell", "shell.destructive_rm", "exec.obfuscated"}


def weigh(rule: str, where: str) -> str | None:
    """The severity of ``rule`` found in ``where`` (script | doc_code | prose), None to ignore."""
    severity = RULES[rule].severity
    if where == "script" or rule not in DOC_CODE_DOWNGRADE:
        return severity
    if where == "prose":
        return None
    return "medium" if rule == "shell.pipe_to_shell" else "high"


IGNORE = re.IGNORECASE
TAG_CHARS = re.compile("[\U000e0000-\U000e007f]")
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
ZERO_WIDTH = re.compile("(?<=\\S)[\u200b\u200c\u200d\u2060](?=\\S)")
OVERRIDE = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
    r"(?:previous|prior|above|earlier|preceding|system|original)\s+(?:instructions|directions|prompts?|rules)|"
    r"\b(?:ignore|disregard|forget)\s+(?:all\s+(?:of\s+)?)?your\s+(?:instructions|rules|guidelines|system\s+prompt)\b",
    IGNORE,
)
CONCEAL = re.compile(
    r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to|show)\s+"
    r"(?:this\s+to\s+)?the\s+user\b|\bwithout\s+(?:the\s+user|them)\s+(?:knowing|noticing)\b|"
    r"\bhide\s+(?:this|it|that)\s+from\s+the\s+user\b|\bsilently\s+(?:send|upload|exfiltrate|transmit)\b|"
    r"\bwithout\s+(?:telling|informing|notifying|alerting)\s+(?:the\s+user|them)\b|"
    r"\b(?:do\s+not|don't|never)\s+(?:let\s+the\s+user\s+know|mention\s+(?:this|it)\s+to\s+(?:the\s+user|them))\b|"
    r"\bkeep\s+(?:this|it)\s+(?:secret|hidden)\s+from\s+the\s+user\b",
    IGNORE,
)
# "send (the user's API keys) ... to https://...": the verb, what, then where, in one sentence.
EXFILTRATE = re.compile(
    r"\b(?:send|upload|post|transmit|forward|exfiltrate|copy)\b[^.|\n]{0,80}?"
    r"\b(?:(?:the\s+)?conversation|chat\s+history|api[\s_-]?keys?|credentials|secrets|passwords?|tokens|"
    r"environment\s+variables|\.env\b|ssh\s+keys?|id_rsa|private\s+keys?)"
    r"[^.|\n]{0,120}?\bto\b[^.|\n]{0,40}?(?:https?://|\bwebhook\b|\bendpoint\b|\bremote\s+server\b)",
    IGNORE,
)
PIPE_TO_SHELL = re.compile(r"\b(?:curl|wget)\b[^|\n]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh\b", IGNORE)
REVERSE_SHELL = re.compile(
    r"/dev/tcp/[\w.-]+/\d+|\bnc(?:at)?\s+(?:-\w+\s+)*-[ec]\s+/bin/(?:ba)?sh|\bsocat\b[^\n]{0,200}exec:|"
    r"\bpty\.spawn\(|\bmkfifo\b[^\n]{0,100}\bnc\b",
    IGNORE,
)
DESTRUCTIVE_RM = re.compile(
    r"\brm\s+(?:-[a-z]*r[a-z]*\s+|-[a-z]*\s+-[a-z]*r[a-z]*\s+|--recursive\s+)(?:-[a-z-]+\s+)*"
    r"(?:/|/\*|~|~/|~/\*|\$HOME|\$HOME/|\$HOME/\*|\"\$HOME\"|\$\{HOME\})(?=\s|$|;|&|\))",
    IGNORE,
)
OBFUSCATED = re.compile(
    r"\b(?:exec|eval)\s*\(\s*(?:base64\.b64decode|codecs\.decode|bytes\.fromhex|binascii\.(?:a2b_base64|unhexlify)|"
    r"zlib\.decompress|marshal\.loads|__import__\(['\"]base64)|\beval\s*\(\s*(?:atob|Buffer\.from\([^)]{0,200}base64)|"
    r"\bnew\s+Function\s*\(\s*atob|\bbase64\s+(?:-d|--decode|-D)\b[^|\n]{0,200}\|\s*(?:ba|z)?sh\b|"
    r"\bxxd\s+-r\s+-p\b[^|\n]{0,200}\|\s*(?:ba)?sh\b",
    IGNORE,
)
CREDENTIAL_PATHS = re.compile(
    r"\.ssh/(?:id_\w+|authorized_keys|config)|~/\.ssh\b|\.aws/credentials|\.config/gh/hosts\.yml|\.npmrc\b|"
    r"\.pypirc\b|pip/pip\.conf|Library/Keychains|login\.keychain|security\s+find-(?:generic|internet)-password|"
    r"Google/Chrome/[^'\"\n]{0,60}(?:Login Data|Cookies)|\.mozilla/firefox|\.docker/config\.json|\.kube/config",
    IGNORE,
)
NETWORK_SEND = re.compile(
    r"\brequests\.(?:post|put|get)\(|urllib\.request|http\.client|\bfetch\s*\(|\baxios\b|\bcurl\b|\bwget\b|"
    r"\bsocket\.(?:socket|create_connection)|\bnc\s|Invoke-WebRequest|\bhttpx\.",
    IGNORE,
)
ENV_DUMP = re.compile(
    r"dict\(\s*os\.environ\s*\)|os\.environ\.copy\(\)|json\.dumps\(\s*(?:dict\()?os\.environ|"
    r"JSON\.stringify\(\s*process\.env\s*\)|\b(?:env|printenv)\s*\|\s*(?:curl|nc|wget)\b|\$\((?:env|printenv)\)",
    IGNORE,
)
SECRETS = (
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY-----"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36}\b"),
    re.compile(r"\bxox[baprs]-[0-9A-Za-z-]{20,}"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    re.compile(r"\b(?:sk|rk)_live_[0-9A-Za-z]{24,}\b"),
    re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}"),
    re.compile(r"\bglpat-[0-9A-Za-z_-]{20}\b"),
)
PLACEHOLDER = re.compile(r"EXAMPLE|XXXX|xxxx|your[_-]|<[a-z_]+>|\.\.\.|REDACTED|dummy|fake|sample", IGNORE)
PY_ENV = re.compile(r"os\.(?:environ\s*\[\s*|environ\.get\(\s*|getenv\(\s*)['\"]([A-Z][A-Z0-9_]{2,})['\"]")
JS_ENV = re.compile(r"process\.env\.([A-Z][A-Z0-9_]{2,})|process\.env\[['\"]([A-Z][A-Z0-9_]{2,})['\"]\]")
PY_BIN = re.compile(
    r"(?:subprocess\.(?:run|call|check_call|check_output|Popen)|shutil\.which)\(\s*\[?\s*['\"]([\w.+-]+)['\"]"
)
COMMON_ENV = frozenset(
    "HOME PATH USER PWD SHELL LANG LC_ALL TERM TMPDIR TEMP TMP CI DEBUG NO_COLOR TZ EDITOR PYTHONPATH "
    "XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME SKILL_INPUT SKILL_DIR SKILL_INPUT_FILE SKILL_OUTPUT_DIR".split()
)
COMMON_BINS = frozenset("python python3 sh bash node npm npx git ls cat echo env which uv pip pip3".split())
BINARY_MAGIC = (b"\x7fELF", b"MZ", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")
CODE_SUFFIXES = (".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".ps1", ".php", ".go")
