"""Routing: pick the skills a message needs, offline, in milliseconds, and say why.

- ``manifests``: routing manifests (registry or offline-built) and their storage
- ``text``: the tokenizer and stemmer both sides of a match use
- ``compiled``: a manifest's words stemmed once, at index time (pure)
- ``scoring``: lexical / trigger / name / negative / recent / semantic scores (pure)
- ``weights``: the numbers both scorers score with, one frozen dataclass per scorer
- ``semantic``: MiniLM int8 ONNX sentence vectors (the ``semantic`` extra, lazily imported)
- ``index``: the on-disk index under ``paths.state_dir()`` (``route --reindex`` rebuilds it)
- ``router``: compiled index in, ranked matches out
- ``aggregation``: short continuations routed with the previous message
- ``approval``: the interactive ``route --ask`` flow and session memory
- ``prompt``: the four disclosure tiers of the agent's skills block
"""
