"""Stage 3, the gate: does the message need a skill, and which of the candidates? Learned.

One logistic model reads, for each of the best few candidates, what the earlier stages measured
(semantic evidence, BM25 and lexical points, a name said or invoked, the skill's own triggers,
the negative constraint, its rank and its margins to the others, how far its evidence and BM25
stand above the other candidates') beside how close the message is to
messages that need no skill and how close the skill itself is to them (a calculator's stated use
reads like chat: its requests are judged against that) and the message's length and form, and gives the
probability that the message needs that skill. Candidates at or over the model's threshold are
routed, most probable first; once one is, :mod:`skillctl.routing.followers` judges the others. It was fitted with scikit-learn by ``bench/train_gate.py`` on the
training rows of ``bench/data/routing`` (never on the development or sealed rows) and ships as
coefficients in ``data/gate.json``, with the sha256 of the data it learned from; inference is a
dot product in numpy. No phrase lists: what reads as chat is learned, not written down.

A skill invoked by name ("use pdf-editor") is never the model's to refuse. A skill whose own
trigger (a keyword or a pattern its author wrote) matched, or whose own words clearly name the
request, is judged on its own evidence alone (:meth:`GateModel.own`: the model without the
message's "looks like chat" prior and its standing against the other candidates): no general
prior outranks a skill's own words (DESIGN
section 7), but an author's broad trigger word ("test", "database") in a chat message is not a
request by itself (training and development: that override routed more no-skill messages than
lexical-only routing did).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skillctl.routing.match import Match, Stage

GATE_FILE = Path(__file__).with_name("data") / "gate.json"
CANDIDATES = 5  # candidates the gate reads: past the fifth, the right skill is rarely there (dev)
MAX_FORM_SENTENCES = 6  # a message's sentence count, capped: more says nothing new about its form

# The features, in the order the model's coefficients are; each is a number the earlier stages
# computed (components of a Match) or a plain measure of the message.
FEATURES = (
    "evidence",  # semantic evidence: centroid + .5 x closest example (+ name, - negative, + recent)
    "semantic",  # cosine to the skill's centroid
    "example",  # cosine to its closest example or passage
    "bm25",  # weighted, normalised BM25 over the skill's own text
    "lexical",  # capped lexical points (keywords, phrases, triggers), scaled
    "mention",  # its name said in passing
    "invoked",  # its name said the way one calls a skill
    "trigger",  # one of its own triggers matched
    "negative",  # the message matched its negative constraint
    "name_words",  # distinctive words of its name in the message (0-2)
    "first",  # ranked first
    "rank",  # rank among the candidates (0 = first)
    "gap_to_best",  # rank score below the first candidate's
    "gap_to_next",  # rank score above the next candidate's
    "no_skill",  # the message's closeness to messages that need no skill
    "skill_no_skill",  # the skill's own closeness to them (a chat-like stated use: a calculator)
    "chat_margin",  # evidence - 2 x no_skill
    "queries",  # the skill's manifest has synthetic queries
    "log_words",  # log(1 + words in the message)
    "question",  # the message has a question mark
    "code",  # the message pastes code or a log (its prose is shorter than it)
    "sentences",  # sentences in the message (capped)
    "evidence_over_rest",  # its semantic evidence above the best other candidate's (below: negative)
    "bm25_over_rest",  # its BM25 above the best other candidate's
    "evidence_z",  # its evidence against the candidates' mean, in their standard deviations
)


# What reads the message alone, not the skill: the "looks like chat" prior. The model's other
# terms are the skill's own evidence; when they alone say the skill is needed (``own`` reaches
# the model's ``clear`` bar), the prior cannot take the skill away (DESIGN section 7).
PRIOR = frozenset({"no_skill", "chat_margin", "log_words", "question", "code", "sentences"})
# How the skill stands against the other candidates, not what its own words say: left out of its
# own evidence too (held at the mean), so a skill's own words are judged as if it were alone
# (bench/README, issue 37 round 3: the clear bar then sits lower and no-skill rose with top-1).
RELATIVE = frozenset({"evidence_over_rest", "bm25_over_rest", "evidence_z"})
NOT_OWN = PRIOR | RELATIVE


@dataclass(frozen=True)
class MessageForm:
    """What the gate reads of the message itself."""

    words: int
    question: bool
    code: bool
    sentences: int

    @classmethod
    def of(cls, text: str, prose_text: str, sentence_count: int) -> MessageForm:
        return cls(
            words=len(text.split()),
            question="?" in text,
            code=len(prose_text) < len(text.strip()),
            sentences=min(max(sentence_count, 1), MAX_FORM_SENTENCES),
        )


def features(candidates: Sequence[Match], form: MessageForm, has_queries: Sequence[bool]) -> list[list[float]]:
    """One row of :data:`FEATURES` per candidate (best rank first)."""
    rows = []
    best = candidates[0].score if candidates else 0.0
    evidence = [m.components["evidence"] for m in candidates]
    bm25 = [m.components["bm25"] for m in candidates]
    mean_evidence = sum(evidence) / max(len(evidence), 1)
    spread = math.sqrt(sum((e - mean_evidence) ** 2 for e in evidence) / max(len(evidence), 1))
    for rank, match in enumerate(candidates):
        c = match.components
        after = candidates[rank + 1].score if rank + 1 < len(candidates) else match.score
        invoked = c.get("invoked", 0.0)
        others = [i for i in range(len(candidates)) if i != rank]
        rows.append(
            [
                c["evidence"],
                c["semantic"],
                c["example"],
                c["bm25"],
                c["lexical"],
                float(c["name"] > 0 and not invoked),
                invoked,
                c.get("trigger", 0.0),
                float(c["negative"] < 0),
                min(c.get("name_words", 0.0), 2.0),
                float(rank == 0),
                float(rank),
                best - match.score,
                match.score - after,
                c["no_skill"],
                c.get("skill_no_skill", 0.0),
                c["evidence"] - 2 * c["no_skill"],
                float(has_queries[rank]),
                math.log1p(form.words),
                float(form.question),
                float(form.code),
                float(form.sentences),
                c["evidence"] - max((evidence[i] for i in others), default=c["evidence"]),
                c["bm25"] - max((bm25[i] for i in others), default=0.0),
                (c["evidence"] - mean_evidence) / (spread + 1e-6),
            ]
        )
    return rows


@dataclass(frozen=True)
class GateModel:
    """The shipped coefficients: standardise each feature, weigh, add, squash."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float  # route a candidate whose probability reaches this
    evidence_threshold: float  # the one-threshold baseline (bench's "semantic" router), same data
    data_sha256: str  # of the training rows it learned from (a test checks it is current)
    # The message's own vector after the features (its form: a request, or a question, a remark,
    # a thanks), this many dimensions of it; 0: none. Read only under the encoder it was trained on.
    vector_dims: int = 0
    clear: float = 1.0  # the skill's own evidence alone (:meth:`own`) reaching this routes it; 1.0: never

    @classmethod
    def load(cls, path: Path = GATE_FILE) -> GateModel:
        data = json.loads(path.read_text("utf-8"))
        if tuple(data["features"]) != FEATURES:
            raise ValueError(f"{path} was trained on other features; run bench/train_gate.py")
        if data.get("vector_dims") and data.get("encoder") != _encoder_id():
            raise ValueError(f"{path} was trained on another encoder's vectors; run bench/train_gate.py")
        return cls(
            mean=tuple(data["mean"]),
            scale=tuple(data["scale"]),
            coef=tuple(data["coef"]),
            intercept=float(data["intercept"]),
            threshold=float(data["threshold"]),
            evidence_threshold=float(data["evidence_threshold"]),
            data_sha256=str(data["data_sha256"]),
            vector_dims=int(data.get("vector_dims", 0)),
            clear=float(data.get("clear", 1.0)),
        )

    def probabilities(self, rows: Sequence[Sequence[float]], vector=None) -> list[float]:
        """P(the message needs this candidate) for each row of features; ``vector``: the
        message's vector, read when the model has ``vector_dims``."""
        import numpy as np

        if not rows:
            return []
        x = np.asarray(rows, dtype=np.float64)
        if self.vector_dims:
            # A vector of another encoder (a stand-in in tests) says nothing: held at the mean.
            usable = vector is not None and len(vector) == self.vector_dims
            form = np.asarray(vector, dtype=np.float64) if usable else np.asarray(self.mean[len(FEATURES) :])
            x = np.hstack([x, np.tile(form, (len(x), 1))])
        x = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        z = x @ np.asarray(self.coef) + self.intercept
        return [float(p) for p in 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))]

    def own(self, rows: Sequence[Sequence[float]]) -> list[float]:
        """P(needed) from the skill's own evidence alone: the model without its chat prior (the
        message's form, length, vector and closeness to chat) and without how it stands against
        the other candidates (:data:`RELATIVE`), those held at their training mean."""
        import numpy as np

        if not rows:
            return []
        n = len(FEATURES)
        keep = np.array([name not in NOT_OWN for name in FEATURES], dtype=np.float64)
        x = (np.asarray(rows, dtype=np.float64) - np.asarray(self.mean[:n])) / np.asarray(self.scale[:n])
        z = (x * keep) @ np.asarray(self.coef[:n]) + self.intercept
        return [float(p) for p in 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))]


def _encoder_id() -> str:
    from skillctl.routing.semantic import MODEL_ID

    return MODEL_ID


_model: GateModel | None = None


def model() -> GateModel:
    """The shipped gate, read once per process."""
    global _model
    if _model is None:
        _model = GateModel.load()
    return _model


def decide(
    candidates: Sequence[Match],
    probabilities: Sequence[float],
    gate: GateModel,
    limit: int,
    own: Sequence[float] | None = None,
) -> list[Match]:
    """The candidates the message needs, best first: invoked by name, then by probability;
    a skill invoked by name; one whose own trigger matched and whose own evidence alone (``own``,
    :meth:`GateModel.own`) reaches the threshold, or whose own evidence is clear, whatever the
    chat prior says."""
    chosen = []
    for i, (match, p) in enumerate(zip(candidates, probabilities, strict=True)):
        clear = own is not None and own[i] >= gate.clear
        p = max(p, own[i]) if clear and own is not None else p
        match.components["gate"] = p
        match.reasons.append(f"gate: needs it with probability {p:.2f} (threshold {gate.threshold:.2f})")
        if match.components.get("invoked"):
            match.stage = Stage.NAME
        elif p >= gate.threshold:
            match.stage = Stage.GATE
            if clear:
                match.reasons.append("its own words name the request: no chat prior overrules them")
        elif match.components.get("trigger") and (own is None or own[i] >= gate.threshold):
            match.stage = Stage.TRIGGER
        else:
            continue
        chosen.append(match)
    chosen.sort(key=lambda m: (m.stage is not Stage.NAME, -m.components["gate"]))
    return chosen[:limit]


def margin(probabilities: Sequence[float], gate: GateModel) -> float:
    """How sure the gate is of its decision on the best candidate: |p - threshold|."""
    return abs(max(probabilities, default=0.0) - gate.threshold)
