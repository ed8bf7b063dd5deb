"""Stage 4a, followers: a second or third skill once the gate has routed one. Learned; pure code.

The gate (:mod:`skillctl.routing.gate`) judges every candidate against the same bar, as if each
were the message's only skill; a second skill rarely reaches it, and a lower bar lets in skills
that are needed about 1 time in 7 (training, out of fold). Once the gate has routed a skill,
each other candidate of the whole message is judged by a second logistic model instead: the
probability that it is needed too, from its gate probability and the first's, how far it is
below the first (rank, score, evidence), whether it is the best candidate of one of the
requests the message was split into (:func:`skillctl.routing.normalise.split_intents`), and the
message's form. It ships beside the gate's coefficients in ``data/gate.json`` (``follower``),
trained by ``bench/train_gate.py`` on the training rows; a candidate joins at its ``bar``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skillctl.routing.gate import FEATURES, GATE_FILE
from skillctl.routing.match import Match, Stage

# The follower's features, in the order of its coefficients (gate.FEATURES names where shared).
FOLLOWER_FEATURES = (
    "log_odds",  # its gate probability, as log-odds
    "first_log_odds",  # the routed first's
    "rank",  # its rank among the whole message's candidates
    "gap_to_best",  # its rank score below the first candidate's
    "evidence_below_first",  # the first's semantic evidence minus its own
    "semantic_below_first",  # the same for the centroid cosine
    "evidence",
    "bm25",
    "lexical",
    "trigger",
    "name_words",
    "mention",
    "requests",  # requests the message was split into (0: one)
    "tops_a_request",  # it is the best candidate of one of them
    "no_skill",
    "skill_no_skill",
    "log_words",
    "sentences",
    "question",
    "code",
)
_AT = {name: i for i, name in enumerate(FEATURES)}


def features(
    rows: Sequence[Sequence[float]], probabilities: Sequence[float], first: int, tops: Sequence[bool], requests: int
) -> list[list[float]]:
    """One row of :data:`FOLLOWER_FEATURES` per candidate, each against candidate ``first`` (the
    gate's rows and probabilities, best rank first; ``tops``: which candidates are a request's best)."""
    lead = rows[first]
    out = []
    for row, p, top in zip(rows, probabilities, tops, strict=True):
        g = {name: row[i] for name, i in _AT.items()}
        out.append(
            [
                _log_odds(p),
                _log_odds(probabilities[first]),
                g["rank"],
                g["gap_to_best"],
                lead[_AT["evidence"]] - g["evidence"],
                lead[_AT["semantic"]] - g["semantic"],
                g["evidence"],
                g["bm25"],
                g["lexical"],
                g["trigger"],
                g["name_words"],
                g["mention"],
                float(requests),
                float(top),
                g["no_skill"],
                g["skill_no_skill"],
                g["log_words"],
                g["sentences"],
                g["question"],
                g["code"],
            ]
        )
    return out


def _log_odds(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


@dataclass(frozen=True)
class FollowerModel:
    """Standardise, weigh, add, squash; a candidate whose probability reaches ``bar`` follows."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    bar: float

    @classmethod
    def load(cls, path: Path = GATE_FILE) -> FollowerModel | None:
        """The shipped follower model, or None when the gate file has none."""
        data = json.loads(path.read_text("utf-8")).get("follower")
        if data is None:
            return None
        if tuple(data["features"]) != FOLLOWER_FEATURES:
            raise ValueError(f"{path}'s follower was trained on other features; run bench/train_gate.py")
        return cls(
            tuple(data["mean"]), tuple(data["scale"]), tuple(data["coef"]), float(data["intercept"]), float(data["bar"])
        )

    def probabilities(self, rows: Sequence[Sequence[float]]) -> list[float]:
        out = []
        for row in rows:
            z = self.intercept + sum(
                c * (x - m) / s for x, m, s, c in zip(row, self.mean, self.scale, self.coef, strict=True)
            )
            out.append(1.0 / (1.0 + math.exp(-min(max(z, -40.0), 40.0))))
        return out


_model: tuple[FollowerModel | None] | None = None


def model() -> FollowerModel | None:
    """The shipped follower model, read once per process."""
    global _model
    if _model is None:
        _model = (FollowerModel.load(),)
    return _model[0]


def followers(
    candidates: Sequence[Match],
    rows: Sequence[Sequence[float]],
    chosen: Sequence[Match],
    tops: frozenset[str],
    requests: int,
    follower: FollowerModel,
) -> list[Match]:
    """The candidates that follow ``chosen[0]`` (the gate's first), most probable first, each
    marked so; ``tops``: the names that are the best candidate of one of the message's ``requests``."""
    if not chosen or chosen[0] not in candidates:
        return []
    first = list(candidates).index(chosen[0])
    gate_p = [m.components["gate"] for m in candidates]
    found = []
    on_top = [m.name in tops for m in candidates]
    for match, row in zip(candidates, features(rows, gate_p, first, on_top, requests), strict=True):
        if match in chosen:
            continue
        (q,) = follower.probabilities([row])
        match.components["follower"] = q
        if q >= follower.bar:
            match.stage = Stage.FOLLOWER
            match.reasons.append(
                f"follows {chosen[0].name}: needed too with probability {q:.2f} (bar {follower.bar:.2f})"
            )
            found.append(match)
    return sorted(found, key=lambda m: -m.components["follower"])
