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
