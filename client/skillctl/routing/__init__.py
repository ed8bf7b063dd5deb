"""Routing: pick the skills a message needs, offline, in milliseconds, and say why.

A pipeline, one stage per module (DESIGN section 7; ``router`` runs it):

1. ``normalise``: continuations joined, typos read (``spelling``), code left out, requests split
2. candidates: ``lexical`` (keywords, phrases, triggers, BM25; lexical-only routing) and
   ``candidates`` (semantic evidence from ``semantic``'s MiniLM + WordLlama vectors)
3. ``gate``: a learned model (coefficients in ``data/gate.json``, trained by
   ``bench/train_gate.py``) decides whether the message needs a skill and which; ``llm_gate``,
   when configured, where it is unsure
4. ``select``: at most three skills, each request of a message heard
5. ``explain``: what matched, the stage that decided, what stopped the others

Beside them: ``manifests`` (routing manifests and their storage), ``compiled`` (a manifest's
words stemmed once), ``weights`` (the ranking numbers), ``index`` (the on-disk index),
``aggregation`` (short continuations), ``approval`` (``route --ask``), ``match`` (what routing
answers), ``scoring`` (the ranking functions other parts of Skillyard import).
"""
