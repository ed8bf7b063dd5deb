"""The router: the routing pipeline, one stage per module (DESIGN section 7).

normalise (:mod:`.normalise`) -> candidates, lexical (:mod:`.lexical`) and semantic
(:mod:`.candidates`) -> gate (:mod:`.gate`, learned; :mod:`.llm_gate` when it is unsure and
configured) -> select (:mod:`.select`: at most ``limit``, several requests) -> explain
(:mod:`.explain`). Without semantic vectors, lexical-only routing: points and a threshold,
without importing numpy or onnxruntime. ``vectors`` is a ``semantic.SkillVectors`` (centroid +
example vectors per skill) or a plain (n, DIM) array of centroids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from skillctl.routing import followers
from skillctl.routing import gate as gates
from skillctl.routing.candidates import Evidence, rank_semantic, semantic_evidence
from skillctl.routing.compiled import CompiledManifest
from skillctl.routing.explain import why_not_routed
from skillctl.routing.lexical import ScoringIndex, rank_lexical
from skillctl.routing.manifests import RoutingManifest
from skillctl.routing.match import Match, Stage
from skillctl.routing.normalise import Normalised, normalise, views
from skillctl.routing.select import select
from skillctl.routing.spelling import Speller, maybe_typos
from skillctl.routing.weights import DEFAULT_WEIGHTS, Weights


class Router:
    def __init__(
        self,
        manifests: Sequence[RoutingManifest],
        *,
        compiled: Sequence[CompiledManifest | None] | None = None,  # compile_manifest of each, if cached
        vectors=None,  # semantic.SkillVectors, or numpy (n, DIM) centroids in manifest order, or None
        encoder=None,  # something with .encode(texts) -> one vector per text; needed with vectors
        weights: Weights = DEFAULT_WEIGHTS,
        learned_gate: bool = True,  # False: one evidence threshold instead (bench's "semantic" baseline)
        llm_gate=None,  # an llm_gate.LlmGate, consulted where the gate is unsure
    ) -> None:
        self.index = ScoringIndex(manifests, compiled)
        if vectors is not None and not hasattr(vectors, "scores"):
            from skillctl.routing.semantic import SkillVectors

            vectors = SkillVectors(vectors)
        self.vectors = vectors
        self.encoder = encoder
        self.weights = weights
        self.learned_gate = learned_gate
        self.llm_gate = llm_gate
        self._no_skill = None
        self._offline_mask: tuple | None = None  # (mask or None,) once computed
        self._speller: Speller | None = None
        self._position: dict[str, int] | None = None  # skill name -> its row, built on first use
        self._own_likeness: dict[str, float] | None = None  # skill name -> its centroid's no-skill likeness

    def no_skill(self):
        """The "needs no skill" reference (``semantic.NoSkillReference``), loaded on first use."""
        if self._no_skill is None:
            from skillctl.routing.semantic import no_skill_reference

            self._no_skill = no_skill_reference(self.encoder)
        return self._no_skill

    def speller(self) -> Speller:
        """Reads typos as the installed skills' words (:mod:`skillctl.routing.spelling`), built on first use."""
        if self._speller is None:
            self._speller = Speller.of(self.index.manifests)
        return self._speller

    @property
    def semantic(self) -> bool:
        return self.vectors is not None and self.encoder is not None and len(self.index) > 0

    def route(
        self,
        message: str,
        *,
        history: Sequence[str] = (),
        recent: frozenset[str] = frozenset(),
        query_vector=None,
    ) -> list[Match]:
        """The skills ``message`` needs, best first; ``history`` joins a short continuation."""
        read = self.normalised(message, history)
        if read is None or len(self.index) == 0:
            return []
        if read.typos or read.text != message:
            query_vector = None  # the caller encoded the words as typed, or the whole message
        encoded: dict[str, object] = {}  # text -> vector, within this message
        if read.parts and self.semantic:
            # The whole message and each request in one call to the encoder, before any is routed.
            texts = [view for text in (read.text, *read.parts) for view in self.views(text)]
            self.encode(texts, encoded, query_vector)
        whole = self._routed(read.text, recent, query_vector, encoded=encoded, consult=True)
        if whole.final:  # the LLM classifier read the whole message and chose: its answer stands
            return _read_as(whole.chosen, read.typos)
        parts = [self._routed(part, recent, encoded=encoded) for part in read.parts]
        chosen = whole.chosen + self._followers(whole, parts)
        return _read_as(select(chosen, [p.chosen for p in parts], self.weights.limit), read.typos)

    def _followers(self, whole: Routed, parts: list[Routed]) -> list[Match]:
        """Stage 4a: the whole message's other candidates that follow its first routed skill."""
        follower = followers.model() if whole.rows else None
        if follower is None or not whole.chosen or whole.evidence is None:
            return []
        tops = frozenset(p.candidates[0].name for p in parts if p.candidates)
        found = followers.followers(whole.candidates, whole.rows, whole.chosen, tops, len(parts), follower)
        self._add_closest(found, whole.evidence)
        return found

    def nearest(self, message: str, *, history: Sequence[str] = ()) -> list[tuple[Match, str]]:
        """The best few skills with thresholds and gates unapplied, each with what stopped it
        (for explaining a message that routed to nothing)."""
        read = self.normalised(message, history)
        if read is None or len(self.index) == 0:
            return []
        ranked = _read_as(self._route_text(read.text, frozenset(), gated=False), read.typos)
        threshold = self.gate().threshold if self.semantic and self.learned_gate else None
        return [(m, why_not_routed(m, best=i == 0, w=self.weights, threshold=threshold)) for i, m in enumerate(ranked)]

    def normalised(self, message: str, history: Sequence[str] = ()) -> Normalised | None:
        """Stage 1: what the later stages read of ``message``."""
        return normalise(message, history, self._read)

    def gate(self) -> gates.GateModel:
        return gates.model()

    def _read(self, text: str) -> tuple[str, list[tuple[str, str]]]:
        """``text`` with its typos read as the skills' words (the speller is built only for a
        message with a word it could read otherwise), and the (typo, word) pairs."""
        return self.speller().correct(text) if maybe_typos(text) else (text, [])

    def _route_text(
        self,
        text: str,
        recent: frozenset[str],
        query_vector=None,
        *,
        gated: bool = True,
        encoded: dict[str, object] | None = None,
    ) -> list[Match]:
        """What ``text`` routes to (``gated``: False, its best candidates, each gate's number set)."""
        return self._routed(text, recent, query_vector, gated=gated, encoded=encoded).chosen

    def _routed(
        self,
        text: str,
        recent: frozenset[str],
        query_vector=None,
        *,
        gated: bool = True,
        encoded: dict[str, object] | None = None,
        consult: bool = False,
    ) -> Routed:
        """As :meth:`_route_text`, with what the followers read (``consult``: ask the LLM classifier
        where the gate is unsure)."""
        if not self.semantic:
            return Routed(rank_lexical(self.index, text, recent=recent, w=self.weights, gated=gated))
        candidates, evidence = self.candidates(text, recent, query_vector, encoded=encoded)
        if not candidates:
            return Routed([])
        routed = self._gated(text, candidates, evidence, consult=consult and gated)
        if not gated:
            routed.chosen = candidates[: self.weights.limit]
        self._add_closest(routed.chosen, evidence)
        return routed

    def candidates(
        self,
        text: str,
        recent: frozenset[str] = frozenset(),
        query_vector=None,
        *,
        encoded: dict[str, object] | None = None,
    ) -> tuple[list[Match], Evidence]:
        """Stage 2 with semantic vectors: the gate's candidates for ``text``, best rank first."""
        evidence = semantic_evidence(self, text, query_vector, {} if encoded is None else encoded)
        candidates = rank_semantic(
            self.index,
            text,
            evidence.cosines,
            examples=evidence.examples,
            whitened=evidence.whitened,
            no_skill=evidence.no_skill,
            recent=recent,
            w=self.weights,
            keep=gates.CANDIDATES,
        )
        self._skill_no_skill(candidates, evidence)
        return candidates, evidence

    def _skill_no_skill(self, candidates: list[Match], evidence: Evidence) -> None:
        """Each candidate's own likeness to messages that need no skill (its centroid's, once per
        skill): a skill whose stated use is chat-like work (a calculator, a translator) is judged
        against its own topic's chattiness, not against every skill's."""
        reference, at, k = self.no_skill(), self._positions(), self.weights.semantic.no_skill_k
        if self._own_likeness is None:
            self._own_likeness = {}
        for match in candidates:
            if match.name not in self._own_likeness:
                centroid = self.vectors.centroids[at[match.name]] if hasattr(self.vectors, "centroids") else None
                self._own_likeness[match.name] = reference.score(centroid, k) if centroid is not None else 0.0
            match.components["skill_no_skill"] = self._own_likeness[match.name]
            match.components["no_skill"] = evidence.no_skill

    def gate_features(self, text: str, candidates: list[Match], evidence: Evidence) -> list[list[float]]:
        """What the gate reads of each candidate (bench/train_gate.py learns from these)."""
        form = gates.MessageForm.of(text, evidence.views[0], len(evidence.views))
        return gates.features(candidates, form, [self.index.has_queries(m.name) for m in candidates])

    def _gated(self, text: str, candidates: list[Match], evidence: Evidence, *, consult: bool) -> Routed:
        """Stage 3: the learned gate (or the one-threshold baseline), and the LLM classifier
        where the gate is unsure."""
        model, limit = self.gate(), self.weights.limit
        if not self.learned_gate:
            return Routed(_by_evidence(candidates, model.evidence_threshold, limit), candidates)
        rows = self.gate_features(text, candidates, evidence)
        probabilities = model.probabilities(rows, evidence.vectors[0])
        chosen = gates.decide(candidates, probabilities, model, limit, model.own(rows))
        if self.llm_gate is not None and consult:
            chosen, final = self._consult(text, candidates, chosen, gates.margin(probabilities, model))
            return Routed(chosen, candidates, rows, evidence, final)
        return Routed(chosen, candidates, rows, evidence)

    def _consult(
        self, text: str, candidates: list[Match], offline: list[Match], margin: float
    ) -> tuple[list[Match], bool]:
        """The LLM classifier's choice among the candidates when the gate's margin is small;
        the offline decision when it is wide, or the classifier fails (then False)."""
        from skillctl.routing.llm_gate import Candidate

        descriptions = {m.name: m.description for m in self.index.manifests}
        shown = [Candidate(m.name, descriptions.get(m.name, ""), m.score) for m in candidates]
        decision = self.llm_gate.decide(text, shown, margin=margin)
        if decision is None:
            return offline, False
        by_name = {m.name: m for m in candidates}
        chosen = [by_name[name] for name in decision.names if name in by_name]
        for match in chosen:
            match.stage = Stage.LLM
            match.reasons.append(f"LLM classifier: {decision.reason}")
        return chosen[: self.weights.limit], True

    def _add_closest(self, matches: list[Match], evidence: Evidence) -> None:
        """Each match's closest sentence of the message and closest passage of its SKILL.md."""
        at = self._positions()
        for match in matches:
            view = int(evidence.closest[at[match.name]]) if evidence.closest is not None else 0
            if view:
                match.reasons.append(f"closest sentence: {_clip(evidence.views[view])!r}")
            if (passage := self._closest_passage(at[match.name], evidence.vectors[view])) is not None:
                match.reasons.append(f"closest passage of its SKILL.md: {_clip(passage)!r}")

    def _positions(self) -> dict[str, int]:
        """Skill name -> its row in the index and the vectors (the same for every message)."""
        if self._position is None:
            self._position = {name: i for i, name in enumerate(self.index.names)}
        return self._position

    def _closest_passage(self, skill: int, vector) -> str | None:
        """The body passage that brought skill ``skill`` closest to the message, if one did."""
        if not hasattr(self.vectors, "closest_passage"):
            return None
        found = self.vectors.closest_passage(skill, vector)
        passages = self.index.manifests[skill].passages
        return passages[found] if found is not None and found < len(passages) else None

    def views(self, text: str) -> list[str]:
        """What semantic routing encodes of ``text`` (:func:`skillctl.routing.normalise.views`):
        its sentences too when some skill has no synthetic queries."""
        return views(text, sentences_too=self.offline_mask() is not None)

    def encode(self, texts: list[str], encoded: dict[str, object], first=None) -> list:
        """One vector per text: ``first`` for the first when given, known ones from ``encoded``,
        the rest in one call to the encoder (which runs texts of like length together) and kept
        there."""
        if first is not None:
            encoded.setdefault(texts[0], first)
        if missing := [t for t in dict.fromkeys(texts) if t not in encoded]:
            encoded.update(zip(missing, self.encoder.encode(missing), strict=True))
        return [encoded[t] for t in texts]

    def offline_mask(self):
        """Which skills have no synthetic queries (numpy booleans), or None when all have some."""
        if self._offline_mask is None:
            import numpy as np

            mask = np.array([not self.index.has_queries(name) for name in self.index.names], dtype=bool)
            self._offline_mask = (mask,) if mask.any() else (None,)
        return self._offline_mask[0]

    def whitened(self, vector):
        """Centroid + example cosines in the whitened space, or None (no whitening)."""
        sem = self.weights.semantic
        if sem.whitened_weight and hasattr(self.vectors, "whitened_scores"):
            if (white := self.vectors.whitened_scores(vector)) is not None:
                return white[0] + sem.example_weight * white[1]
        return None


@dataclass
class Routed:
    """What one text (a whole message, or one of its requests) routed to, and what the followers read."""

    chosen: list[Match]
    candidates: list[Match] = field(default_factory=list)  # the gate's candidates, best rank first
    rows: list[list[float]] = field(default_factory=list)  # their gate features (learned gate only)
    evidence: Evidence | None = None
    final: bool = False  # the LLM classifier decided: its answer stands


def _by_evidence(candidates: list[Match], threshold: float, limit: int) -> list[Match]:
    """The one-threshold baseline: every candidate whose semantic evidence reaches ``threshold``."""
    chosen = [m for m in candidates if m.components["evidence"] >= threshold]
    for match in chosen:
        match.stage = Stage.GATE
    return chosen[:limit]


def _read_as(matches: list[Match], typos: list[tuple[str, str]]) -> list[Match]:
    """``matches``, the best one saying which typos the message was read with."""
    if matches and typos:
        matches[0].reasons.append("read " + ", ".join(f"{typo!r} as {word!r}" for typo, word in typos))
    return matches


def _clip(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
