"""Confusable skill and owner names (DESIGN §5), pure.

Two names that map to the same canonical form may not belong to different owners, so nobody can
squat ``pdf-too1s`` next to ``pdf-tools``. The mapping, in order:

1. Unicode NFKC, then case folding (``PDF`` ~ ``pdf``);
2. every run of ``-``, ``_`` and ``.`` becomes one ``-`` (the PyPI rule: ``a_b`` ~ ``a.b`` ~ ``a-b``,
   ``a--b`` ~ ``a-b``; ``ab`` stays distinct from ``a-b``);
3. the look-alikes ``1`` and ``i`` become ``l``, and ``0`` becomes ``o``.
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
