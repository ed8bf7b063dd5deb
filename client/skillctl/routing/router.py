"""The router: compiled manifests (+ optional semantic vectors) in, ranked matches out.

One encode per message when semantic vectors are present (one more batch for the sentences of a
message that has several); otherwise pure lexical scoring, without importing numpy or
onnxruntime. ``vectors`` is a ``semantic.SkillVectors`` (centroid + synthetic-query vectors per
skill) or a plain (n, DIM) array of centroids.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillctl.routing.aggregation import routing_text
from skillctl.routing.compiled import CompiledManifest
from skillctl.routing.intents import edit_request, sentences, split_intents
from skillctl.routing.manifests import RoutingManifest
from skillctl.routing.scoring import (
    Match,
    ScoringIndex,
    is_general,
    rank_lexical,
    rank_semantic,
    why_not_routed,
)
from skillctl.routing.spelling import Speller, maybe_typos
from skillctl.routing.text import prose
from skillctl.routing.weights import DEFAULT_WEIGHTS, Weights


class Router:
    def __init__(
        self,
        manifests: Sequence[RoutingManifest],
        *,
        compiled: Sequence[CompiledManifest | None] | None = None,  # compile_manifest of each, if cached
        vectors=None,  # semantic.SkillVectors, or numpy (n, DIM) centroids in manifest order, or None
        encoder=None,  # something with .encode_one(text) -> vector; needed with vectors
        weights: Weights = DEFAULT_WEIGHTS,
    ) -> None:
        self.index = ScoringIndex(manifests, compiled)
        if vectors is not None and not hasattr(vectors, "scores"):
            from skillctl.routing.semantic import SkillVectors

            vectors = SkillVectors(vectors)
        self.vectors = vectors
        self.encoder = encoder
        self.weights = weights
        self._no_skill = None
        self._offline_mask: tuple | None = None  # (mask or None,) once computed
        self._speller: Speller | None = None
        self._position: dict[str, int] | None = None  # skill name -> its row, built on first use

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
        """The skills ``message`` needs, best first; ``history`` joins a short continuation.

        A message with several requests (:mod:`skillctl.routing.intents`) also has each request
        routed alone: the best skill of each joins the answer after the whole message's best.
        When the whole message passes no threshold, two requests routed to two different skills
        still make an answer; one alone does not (a long chatty message is not a request).
        """
        text = routing_text(message, history)
        if not text.strip() or len(self.index) == 0:
            return []
        text, typos = self._read(text)
        if typos or text != message:
            query_vector = None  # the caller encoded the words as typed, or the whole message
        if (ask := self._ask(text)) != text:
            text, query_vector = ask, None
        encoded: dict[str, object] = {}  # text -> vector, within this message
        # Judged once, for the whole message and each of its parts: a part of a general message is
        # general too ("what's the difference between SPF and DKIM? our emails from resend land in
        # spam" asks to understand, whatever its second half says).
        general = self.semantic and is_general(text)
        matches = self._route_text(text, recent, query_vector, encoded=encoded, general=general)
        parts = split_intents(prose(text))
        if not parts:
            return _read_as(matches, typos)
        firsts: dict[str, Match] = {}
        for part in parts:
            if (found := self._route_text(part, recent, encoded=encoded, general=general)) and found[
                0
            ].name not in firsts:
                firsts[found[0].name] = found[0]
        if not matches and len(firsts) < 2:
            return []
        merged = {m.name: m for m in matches[:1]}
        for name, match in firsts.items():
            if name not in merged:
                match.reasons.append("one of several requests in the message")
                merged[name] = match
        for match in matches[1:]:
            merged.setdefault(match.name, match)
        return _read_as(list(merged.values())[: self.weights.limit], typos)

    def nearest(self, message: str, *, history: Sequence[str] = ()) -> list[tuple[Match, str]]:
        """The best few skills with thresholds and gates unapplied, each with what stopped it
        (for explaining a message that routed to nothing)."""
        text = routing_text(message, history)
        if not text.strip() or len(self.index) == 0:
            return []
        text, typos = self._read(text)
        ranked = _read_as(self._route_text(self._ask(text), frozenset(), gated=False), typos)
        return [
            (m, why_not_routed(m, best=i == 0, w=self.weights, offline=not self.index.has_queries(m.name)))
            for i, m in enumerate(ranked)
        ]

    def _ask(self, text: str) -> str:
        """What semantic routing reads of ``text``: a message that gives the text to edit ("polish
        this landing page copy: <copy>") by its ask alone, the pasted text being the material and
        its topic no request (a copy editor is asked for, not a skill about what the copy sells)."""
        if self.semantic and (ask := edit_request(text)) is not None:
            return ask
        return text

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
        general: bool | None = None,
    ) -> list[Match]:
        if not self.semantic:
            return rank_lexical(self.index, text, recent=recent, w=self.weights, gated=gated)
        own = prose(text)
        offline = self._offline()
        views = [own, *sentences(own)] if offline is not None else [own]
        vectors = self._vectors(views, {} if encoded is None else encoded, query_vector)
        sem = self.weights.semantic
        cosines, examples = self.vectors.scores(vectors[0])
        whitened = self._whitened(vectors[0])
        reference = self.no_skill()
        no_skill = whole = reference.score(vectors[0], sem.no_skill_k)
        closest = None
        if len(views) > 1:
            # Per skill without synthetic queries, the view (the whole message or one of its
            # sentences) closest to it; skills with queries keep the gate calibrated on whole
            # messages (MetaTool). The message is as chatty as its chattiest view, so a sentence
            # never lowers the gate.
            import numpy as np

            scored = [self.vectors.scores(v) for v in vectors[1:]]
            share = sem.sentence_share
            per_sentence = np.stack([c + sem.example_weight * e for c, e in scored])
            nearer = offline & (per_sentence.max(axis=0) > cosines + sem.example_weight * examples)
            closest = np.where(nearer, per_sentence.argmax(axis=0) + 1, 0)
            best_cosine = np.max([c for c, _ in scored], axis=0)
            best_example = np.max([e for _, e in scored], axis=0)
            cosines = np.where(offline, np.maximum(cosines, (1 - share) * cosines + share * best_cosine), cosines)
            examples = np.where(offline, np.maximum(examples, (1 - share) * examples + share * best_example), examples)
            no_skill = max(no_skill, *(reference.score(v, sem.no_skill_k) for v in vectors[1:]))
        # The whole message's form counts, a sentence's does not (a long request's aside, "thanks,
        # this helps a lot", reads as chat on its own): at the gate of a skill without queries the
        # message is as chatty as the whole with its form or as its chattiest sentence.
        form = sem.chat_form_weight * reference.chat_form(vectors[0]) if sem.chat_form_weight else 0.0
        matches = rank_semantic(
            self.index,
            text,
            cosines,
            examples=examples,
            whitened=whitened,
            no_skill=no_skill,
            chat_form=max(0.0, whole + form - no_skill),
            recent=recent,
            w=self.weights,
            gated=gated,
            general=general,
        )
        at = self._positions()
        for match in matches:
            view = int(closest[at[match.name]]) if closest is not None else 0
            if view:
                match.reasons.append(f"closest sentence: {_clip(views[view])!r}")
            if (passage := self._closest_passage(at[match.name], vectors[view])) is not None:
                match.reasons.append(f"closest passage of its SKILL.md: {_clip(passage)!r}")
        return matches

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

    def _vectors(self, texts: list[str], encoded: dict[str, object], first=None) -> list:
        """One vector per text: ``first`` for the first when given, known ones from ``encoded``,
        the rest encoded (the sentences in one batch) and kept there."""
        if first is not None:
            encoded.setdefault(texts[0], first)
        if missing := [t for t in dict.fromkeys(texts) if t not in encoded]:
            if texts[0] in missing:  # the whole message alone: padding the sentences to its length wastes time
                encoded[texts[0]] = self.encoder.encode_one(texts[0])
                missing.remove(texts[0])
            if missing:
                encoded.update(zip(missing, self.encoder.encode(missing), strict=True))
        return [encoded[t] for t in texts]

    def _offline(self):
        """Which skills have no synthetic queries (numpy booleans), or None when all have some."""
        if self._offline_mask is None:
            import numpy as np

            mask = np.array([not self.index.has_queries(name) for name in self.index.names], dtype=bool)
            self._offline_mask = (mask,) if mask.any() else (None,)
        return self._offline_mask[0]

    def _whitened(self, vector):
        """Centroid + example cosines in the whitened space, or None (no whitening)."""
        sem = self.weights.semantic
        if sem.whitened_weight and hasattr(self.vectors, "whitened_scores"):
            if (white := self.vectors.whitened_scores(vector)) is not None:
                return white[0] + sem.example_weight * white[1]
        return None


def _read_as(matches: list[Match], typos: list[tuple[str, str]]) -> list[Match]:
    """``matches``, the best one saying which typos the message was read with."""
    if matches and typos:
        matches[0].reasons.append("read " + ", ".join(f"{typo!r} as {word!r}" for typo, word in typos))
    return matches


def _clip(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
