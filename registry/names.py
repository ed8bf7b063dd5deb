"""Confusable skill and owner names (DESIGN §5), pure.

Two names that map to the same canonical form may not belong to different owners, so nobody can
squat ``pdf-too1s`` next to ``pdf-tools``. The mapping, in order:

1. Unicode NFKC, then case folding (``PDF`` ~ ``pdf``);
2. every run of ``-``, ``_`` and ``.`` becomes one ``-`` (the PyPI rule: ``a_b`` ~ ``a.b`` ~ ``a-b``,
   ``a--b`` ~ ``a-b``; ``ab`` stays distinct from ``a-b``);
3. the look-alikes ``1`` and ``i`` become ``l``, and ``0`` becomes ``o``.

Reserved names (:data:`RESERVED_NAMES`) are compared the same way and without separators, so
``Adm1n`` and ``ad-min`` are reserved with ``admin``.
"""

from __future__ import annotations

import re
import unicodedata

_SEPARATORS = re.compile(r"[-_.]+")
_LOOKALIKES = str.maketrans({"1": "l", "i": "l", "0": "o"})


def canonical_name(name: str) -> str:
    folded = unicodedata.normalize("NFKC", name).casefold()
    return _SEPARATORS.sub("-", folded).translate(_LOOKALIKES)


def names_confusable(a: str, b: str) -> bool:
    return canonical_name(a) == canonical_name(b)


# Names no user or organisation may take (registry/services/accounts.py): the registry's own
# brand and roles (nobody may pose as its staff), words of its URLs and host names, and the
# mailboxes RFC 2142 gives meaning to. An operator's own account may still use one
# (``createsuperuser`` creates users outside the services).
RESERVED_NAMES = frozenset(
    """
    skillyard official verified registry catalog
    admin administrator admins root sudo superuser staff moderator mod mods system sysadmin
    support help helpdesk security abuse noc hostmaster postmaster webmaster billing legal
    privacy terms tos status info contact mail email ftp www
    about login logout signin signout signup register account accounts me profile settings
    api api-docs docs doc openapi schema well-known static media assets
    new search explore skills skill orgs org organisations organizations users user owners
    tokens token publish healthz readyz metrics blog
    null none undefined anonymous nobody everyone
    """.split()
)


def _reserved_form(name: str) -> str:
    return canonical_name(name).replace("-", "")


_RESERVED_FORMS = frozenset(_reserved_form(name) for name in RESERVED_NAMES)


def name_reserved(name: str) -> bool:
    """Is ``name``, or a look-alike of it (case, separators, ``1``/``i``/``l``, ``0``/``o``), reserved?"""
    return _reserved_form(name) in _RESERVED_FORMS


def name_edits(a: str, b: str, most: int) -> int:
    """Edits (insert, delete, change, swap two neighbours) from ``a`` to ``b``, or ``most + 1``
    when it takes more than ``most`` (a "did you mean" only wants the near ones, fast)."""
    if abs(len(a) - len(b)) > most:
        return most + 1
    before: list[int] | None = None
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if before is not None and i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        before, row = row, current
        if min(row) > most:
            return most + 1
    return min(row[-1], most + 1)
