"""Train routing's learned gate (client/skillctl/routing/gate.py) and write its coefficients.

Reads only the training rows (``bench/data/routing/training.jsonl``); the development rows
choose between designs and the sealed set judges, neither is read here. For every training row
(and every request of a message that has several), each set's skills are installed from the
corpus as ``bench/route_real.py`` installs them, the router's candidate stages run, and each of
the best ``gate.CANDIDATES`` candidates becomes one example: its features (``gate.FEATURES``),
labelled 1 when it is one of the row's skills. A logistic regression (scikit-learn, lbfgs, fixed
seed) learns from those of whole messages and of the requests split off at sentence ends and
connectors (``LEARN_FROM``); the routing threshold and the one-threshold baseline's evidence
threshold are chosen on out-of-fold probabilities (five folds by message), maximising the mean
of single-request top-1 and no-skill accuracy. The follower model (routing/followers.py: a
second or third skill once the gate routed one) learns from the other candidates of the whole
messages the gate routed (out-of-fold gate probabilities); its bar is the lowest at which the
followers it lets in were needed ``FOLLOWER_PRECISION`` of the time, out of fold. The file
records the sha256 of the training rows: a test fails when they change without retraining.
Coefficients are written rounded to 6 significant digits, so the same data gives the same bytes.

    python bench/train_gate.py [--out client/skillctl/routing/data/gate.json] [--features F.npz]
                               [--compare DEV.npz] [--C 0.003] [--no-vector] [--learn WHICH]
                               [--follower-precision P]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "client"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from route_real import FILES, install, rows_of, skills_of  # noqa: E402

from skillctl.routing import followers, gate, normalise, semantic  # noqa: E402
from skillctl.routing.match import Match  # noqa: E402
from skillctl.routing.select import select  # noqa: E402
from skillctl.routing.text import prose  # noqa: E402
from skillctl.skillset import SkillSet  # noqa: E402

SEED = 0  # fold assignment and the solver's start: the same data gives the same file
FOLDS = 5
DIGITS = 6  # significant digits written: float noise below this never changes the bytes
GRID = [t / 100 for t in range(5, 96)]  # probability thresholds tried
CLEAR_GRID = [t / 100 for t in range(50, 100)]  # own-evidence bars tried
CLEAR_PRECISION = 0.9  # "clearly names the request": right 9 times in 10 on training (out of fold)
CLEAR_MIN = 50  # ... over enough examples to say so
EVIDENCE_GRID = [t / 100 for t in range(20, 120)]  # the baseline's evidence thresholds tried
FOLLOWER_GRID = [t / 100 for t in range(5, 96)]  # follower bars tried
# A second or third skill joins at the lowest bar where the followers it lets in were needed at
# least this often (out of fold, on training): a superfluous skill costs its instructions in the
# prompt, a missed one costs the request (bench/README, issue 37 round 2: chosen on development).
FOLLOWER_PRECISION = 0.5
FOLLOWER_C = 0.1  # the follower model's inverse regularisation (few positive examples: ~200)


# Which examples the gate learns from: whole messages and the requests split off at sentence ends
# and connectors (kept); + the halves split at a bare "and" too (their label is the row's, though
# a half may ask for neither skill: a "thanks" half then reads as a request); whole messages only.
LEARN_FROM = {
    "requests": lambda data: data["whole"] | ~data["joined"],
    "all": lambda data: np.ones(len(data["y"]), dtype=bool),
    "whole": lambda data: data["whole"],
}


def training_sha256() -> str:
    return hashlib.sha256(FILES["training"].read_bytes()).hexdigest()


def examples(rows: list[dict]) -> dict[str, np.ndarray]:
    """Features of every candidate of every row (and of each request of a row with several)."""
    x, y, group, whole, kind, evidence, invoked, trigger, vec = [], [], [], [], [], [], [], [], []
    name, part, gold, joined = [], [], [], []
    message = 0  # a running number per row: its examples share a fold
    for set_name in dict.fromkeys(r["set"] for r in rows):
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["SKILLYARD_HOME"] = str(Path(tmp) / "home")
            root = install(Path(tmp) / "skills", skills_of(set_name))
            router = SkillSet.from_dir(root, semantic=True, ignore_gates=True).router()
            for row in (r for r in rows if r["set"] == set_name):
                message += 1
                read = router.normalised(row["query"])
                if read is None:
                    continue
                texts = [read.text, *read.parts]
                by_and = bool(read.parts) and not normalise.split_at_connectors(prose(read.text))
                for at, text in enumerate(texts):
                    candidates, ev = router.candidates(text)
                    feats = router.gate_features(text, candidates, ev)
                    for match, f in zip(candidates, feats, strict=True):
                        x.append(f)
                        vec.append(ev.vectors[0])
                        y.append(match.name in row["skills"])
                        group.append(message)
                        whole.append(at == 0)
                        part.append(at)
                        name.append(match.name)
                        gold.append(len(row["skills"]))
                        joined.append(at > 0 and by_and)
                        kind.append(row["kind"])
                        evidence.append(match.components["evidence"])
                        invoked.append(bool(match.components.get("invoked")))
                        trigger.append(bool(match.components.get("trigger")))
        print(f"{set_name}: {len(x)} candidate examples so far", flush=True)
    return {
        "x": np.asarray(x, dtype=np.float64),
        "y": np.asarray(y, dtype=bool),
        "group": np.asarray(group),
        "whole": np.asarray(whole, dtype=bool),
        "kind": np.asarray(kind),
        "evidence": np.asarray(evidence),
        "invoked": np.asarray(invoked, dtype=bool),
        "trigger": np.asarray(trigger, dtype=bool),
        "vec": np.asarray(vec, dtype=np.float32),
        "name": np.asarray(name, dtype=str),  # the candidate skill
        "part": np.asarray(part),  # 0: the whole message; i: its i-th request
        "gold": np.asarray(gold),  # how many skills the row names
        "joined": np.asarray(
            joined, dtype=bool
        ),  # a request split off at a bare "and" (the gate does not learn from it)
    }


def fit(x: np.ndarray, y: np.ndarray, c: float):
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0  # a feature constant in training (no synthetic queries): weight 0
    model = LogisticRegression(C=c, solver="lbfgs", max_iter=5000, random_state=SEED)
    model.fit((x - mean) / scale, y)
    return mean, scale, model.coef_[0], float(model.intercept_[0])


def own_logits(x: np.ndarray, mean, scale, coef, intercept) -> np.ndarray:
    """The logit without the chat prior and the other candidates (gate.GateModel.own)."""
    n = len(gate.FEATURES)
    keep = np.array([name not in gate.NOT_OWN for name in gate.FEATURES], dtype=np.float64)
    return ((x[:, :n] - mean[:n]) / scale[:n] * keep) @ coef[:n] + intercept


def out_of_fold(data: dict[str, np.ndarray], c: float, learn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each example's probability, and its skill's-own-evidence probability, from a model that
    did not see its message (learnt, as the shipped one, from the examples where ``learn``)."""
    groups = np.unique(data["group"])
    rng = np.random.default_rng(SEED)
    fold_of = dict(zip(groups, rng.permutation(len(groups)) % FOLDS, strict=True))
    folds = np.array([fold_of[g] for g in data["group"]])
    p, own = np.zeros(len(data["y"])), np.zeros(len(data["y"]))
    for k in range(FOLDS):
        fold = (folds != k) & learn
        mean, scale, coef, intercept = fit(data["x"][fold], data["y"][fold], c)
        z = ((data["x"][folds == k] - mean) / scale) @ coef + intercept
        p[folds == k] = 1 / (1 + np.exp(-z))
        own[folds == k] = 1 / (1 + np.exp(-own_logits(data["x"][folds == k], mean, scale, coef, intercept)))
    return p, own


def balanced(data: dict[str, np.ndarray], passes: np.ndarray, order: np.ndarray) -> float:
    """Mean of single-request top-1 and no-skill accuracy of whole messages, when the examples
    where ``passes`` are routed, best ``order`` first (as gate.decide routes)."""
    right, quiet = [], []
    mask = data["whole"]
    for g in np.unique(data["group"][mask]):
        at = np.flatnonzero(mask & (data["group"] == g))
        kind = data["kind"][at[0]]
        routed = [i for i in at[np.argsort(-order[at], kind="stable")] if passes[i]]
        if kind == "single":
            right.append(bool(routed) and bool(data["y"][routed[0]]))
        elif kind == "none":
            quiet.append(not routed)
    return (np.mean(right) + np.mean(quiet)) / 2


def report(data: dict[str, np.ndarray], passes: np.ndarray, order: np.ndarray) -> str:
    """Top-1 of single requests and no-skill accuracy of whole messages (as :func:`balanced`)."""
    right, quiet = [], []
    for g in np.unique(data["group"][data["whole"]]):
        at = np.flatnonzero(data["whole"] & (data["group"] == g))
        routed = [i for i in at[np.argsort(-order[at], kind="stable")] if passes[i]]
        if data["kind"][at[0]] == "single":
            right.append(bool(routed) and bool(data["y"][routed[0]]))
        elif data["kind"][at[0]] == "none":
            quiet.append(not routed)
    return f"top-1 {np.mean(right):.3f}, no-skill {np.mean(quiet):.3f}"


def cached_examples(path: Path | None, kind: str) -> dict[str, np.ndarray]:
    """The examples of the ``kind`` rows, from ``path`` when it holds them (else computed, and kept there)."""
    if path and path.exists():
        with np.load(path, allow_pickle=False) as cached:
            return {k: cached[k] for k in cached.files}
    data = examples(rows_of(kind))
    if path:
        np.savez(path, **data)
    return data


def clear_bar(data: dict[str, np.ndarray], own: np.ndarray) -> float:
    """The lowest own-evidence probability at which the skill is right ``CLEAR_PRECISION`` of
    the time on training (out of fold): there the skill's own words are clear."""
    for t in CLEAR_GRID:
        hit = data["whole"] & (own >= t)
        if hit.sum() >= CLEAR_MIN and data["y"][hit].mean() >= CLEAR_PRECISION:
            return t
    return 1.0


def routed_at(data: dict[str, np.ndarray], p: np.ndarray, own: np.ndarray, t: float) -> np.ndarray:
    """The candidates gate.decide routes on their own at threshold ``t``: invoked by name, a
    probability at ``t``, or a trigger with its own evidence at ``t``."""
    return data["invoked"] | (p >= t) | (data["trigger"] & (own >= t))


def thresholds(data: dict[str, np.ndarray], p: np.ndarray, own: np.ndarray) -> tuple[float, float]:
    order = p + 2.0 * data["invoked"]
    best = max(GRID, key=lambda t: (balanced(data, routed_at(data, p, own, t), order), -abs(t - 0.5)))
    ev = data["evidence"]
    best_evidence = max(EVIDENCE_GRID, key=lambda t: balanced(data, ev >= t, ev))
    return best, best_evidence


def answers(
    data: dict[str, np.ndarray],
    p: np.ndarray,
    own: np.ndarray,
    model: gate.GateModel,
    follower: followers.FollowerModel | None = None,
) -> list[list[str]]:
    """Each message's answer as the router gives it: gate.decide on the whole message and on
    each of its requests, the whole's followers, then select."""
    out = []
    n = len(gate.FEATURES)
    for parts in _texts(data):
        candidates, whole = _decided(data, parts[0], p, own, model)
        routed = [_decided(data, ix, p, own, model)[1] for ix in parts[1:]]
        if follower is not None and whole:
            tops = frozenset(str(data["name"][ix[0]]) for ix in parts[1:])
            rows = data["x"][parts[0], :n].tolist()
            whole = whole + followers.followers(candidates, rows, whole, tops, len(parts) - 1, follower)
        out.append([m.name for m in select(whole, routed, 3)])
    return out


def _texts(data: dict[str, np.ndarray]) -> list[list[np.ndarray]]:
    """Per message, its examples per text: the whole message first, then each request."""
    if "_texts" not in data:
        groups, parts = data["group"], data["part"]
        data["_texts"] = [
            [np.flatnonzero((groups == g) & (parts == k)) for k in np.unique(parts[groups == g])]
            for g in np.unique(groups)
        ]
    return data["_texts"]


def _decided(data, at: np.ndarray, p, own, model: gate.GateModel) -> tuple[list[Match], list[Match]]:
    """The candidates of one text as Matches, and those gate.decide routes."""
    matches = [
        Match(
            str(data["name"][i]), 0.0, [], {"invoked": float(data["invoked"][i]), "trigger": float(data["trigger"][i])}
        )
        for i in at
    ]
    return matches, gate.decide(matches, list(p[at]), model, 3, list(own[at]))


def follower_examples(
    data: dict[str, np.ndarray], p: np.ndarray, own: np.ndarray, model: gate.GateModel
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Followers' features, labels and messages: every candidate of a whole message the gate
    routed a skill for, other than the skills it routed (followers.features, as the router reads them)."""
    x, y, group = [], [], []
    n = len(gate.FEATURES)
    for parts in _texts(data):
        candidates, chosen = _decided(data, parts[0], p, own, model)
        if not chosen:
            continue
        tops = {str(data["name"][ix[0]]) for ix in parts[1:]}
        first = candidates.index(chosen[0])
        gate_p = [m.components["gate"] for m in candidates]
        rows = followers.features(
            data["x"][parts[0], :n].tolist(), gate_p, first, [m.name in tops for m in candidates], len(parts) - 1
        )
        for match, row, i in zip(candidates, rows, parts[0], strict=True):
            if match not in chosen:
                x.append(row)
                y.append(bool(data["y"][i]))
                group.append(data["group"][i])
    return np.asarray(x, dtype=np.float64), np.asarray(y, dtype=bool), np.asarray(group)


def follower_model(x: np.ndarray, y: np.ndarray, group: np.ndarray, precision: float) -> followers.FollowerModel:
    """The follower model, and its bar: the lowest at which the followers it lets in were needed
    at least ``precision`` of the time (out of fold, five folds by message)."""
    rng = np.random.default_rng(SEED)
    messages = np.unique(group)
    fold_of = dict(zip(messages, rng.permutation(len(messages)) % FOLDS, strict=True))
    folds = np.array([fold_of[g] for g in group])
    q = np.zeros(len(y))
    for k in range(FOLDS):
        mean, scale, coef, intercept = fit(x[folds != k], y[folds != k], FOLLOWER_C)
        q[folds == k] = 1 / (1 + np.exp(-(((x[folds == k] - mean) / scale) @ coef + intercept)))
    bar = 1.0
    for t in sorted(FOLLOWER_GRID, reverse=True):
        if (q >= t).sum() and y[q >= t].mean() >= precision:
            bar = t
    let_in = q >= bar
    print(
        f"followers: {len(y)} examples, {y.sum()} needed; bar {bar:.2f} lets in {let_in.sum()}, {y[let_in].sum()} needed"
    )
    mean, scale, coef, intercept = fit(x, y, FOLLOWER_C)
    return followers.FollowerModel(
        tuple(rounded(mean)), tuple(rounded(scale)), tuple(rounded(coef)), rounded([intercept])[0], bar
    )


def scores(data: dict[str, np.ndarray], routed: list[list[str]]) -> str:
    """Top-1 / top-3 of single requests, no-skill accuracy, multi top-3 recall, skills per message."""
    single, none, multi = [], [], []
    for parts, names in zip(_texts(data), routed, strict=True):
        at = np.concatenate(parts)
        gold, kind = set(data["name"][at][data["y"][at]]), data["kind"][at[0]]
        if kind == "single":
            single.append((bool(names) and names[0] in gold, bool(gold & set(names[:3]))))
        elif kind == "none":
            none.append(not names)
        else:
            multi.append(len(gold & set(names[:3])) / data["gold"][at[0]])
    top1, top3 = np.mean(single, axis=0)
    per_message = np.mean([len(n) for n in routed])
    return (
        f"top-1 {top1:.3f}, top-3 {top3:.3f}, no-skill {np.mean(none):.3f}, multi {np.mean(multi):.3f}, "
        f"{per_message:.3f} skills per message"
    )


def rounded(values) -> list[float]:
    return [float(f"{float(v):.{DIGITS}g}") for v in values]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=gate.GATE_FILE)
    parser.add_argument("--features", type=Path, help="cache the training examples here (reused when present)")
    # C chosen on development with the round-3 data and features (.003 of .03 / .01 / .003 / .001;
    # bench/README, issue 37 round 3); the message's vector chosen on development (round 1).
    parser.add_argument("--C", type=float, default=0.003, help="inverse regularisation strength")
    parser.add_argument(
        "--no-vector", dest="vector", action="store_false", help="leave the message's vector (its form) out"
    )
    parser.add_argument(
        "--learn",
        choices=LEARN_FROM,
        default="requests",
        help="which examples the gate learns from (tried: bench/README, issue 37 round 2)",
    )
    parser.add_argument(
        "--follower-precision",
        type=float,
        default=FOLLOWER_PRECISION,
        help="how often the followers let in must be needed (out of fold, on training)",
    )
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="DEV.npz",
        help="also report the fitted model on the development rows' examples (cached here; computed when absent): "
        "for choosing between designs, never learnt from",
    )
    args = parser.parse_args()
    data = cached_examples(args.features, "training")
    if args.vector:
        data["x"] = np.hstack([data["x"], data["vec"].astype(np.float64)])
    learn = LEARN_FROM[args.learn](data)
    p, own = out_of_fold(data, args.C, learn)
    clear = clear_bar(data, own)
    p = np.where(own >= clear, np.maximum(p, own), p)
    dev = cached_examples(args.compare, "development") if args.compare else None
    if dev is not None and args.vector:
        dev["x"] = np.hstack([dev["x"], dev["vec"].astype(np.float64)])
    threshold, evidence_threshold = thresholds(data, p, own)
    shape = gate.GateModel((), (), (), 0.0, threshold, evidence_threshold, "", clear=clear)
    follower = follower_model(*follower_examples(data, p, own, shape), args.follower_precision)
    print(
        f"training, out of fold (the follower model fitted on all): {scores(data, answers(data, p, own, shape, follower))}"
    )
    mean, scale, coef, intercept = fit(data["x"][learn], data["y"][learn], args.C)
    passes = routed_at(data, p, own, threshold)
    print(f"{len(data['y'])} examples; out-of-fold balanced accuracy {balanced(data, passes, p):.3f}")
    print(
        f"threshold {threshold:.2f}; follower bar {follower.bar:.2f}; own evidence clear at {clear:.2f}; "
        f"baseline evidence threshold {evidence_threshold:.2f}"
    )
    if dev is not None:
        z = ((dev["x"] - mean) / scale) @ coef + intercept
        p_dev = 1 / (1 + np.exp(-z))
        own_dev = 1 / (1 + np.exp(-own_logits(dev["x"], mean, scale, coef, intercept)))
        p_dev = np.where(own_dev >= clear, np.maximum(p_dev, own_dev), p_dev)
        print(f"development (whole messages): {report(dev, routed_at(dev, p_dev, own_dev, threshold), p_dev)}")
        for name, model in (("no followers", None), ("followers", follower)):
            print(f"development, {name}: {scores(dev, answers(dev, p_dev, own_dev, shape, model))}")
        print(
            f"development, one evidence threshold: {report(dev, dev['evidence'] >= evidence_threshold, dev['evidence'])}"
        )
    for name, w in sorted(zip(gate.FEATURES, coef, strict=False), key=lambda t: -abs(t[1])):
        print(f"  {name:12} {w:+.3f}")
    out = {
        "about": "routing's learned gate: written by bench/train_gate.py, do not edit",
        "features": list(gate.FEATURES),
        "mean": rounded(mean),
        "scale": rounded(scale),
        "coef": rounded(coef),
        "intercept": rounded([intercept])[0],
        "threshold": threshold,
        "clear": clear,
        "follower": {
            "features": list(followers.FOLLOWER_FEATURES),
            "mean": list(follower.mean),
            "scale": list(follower.scale),
            "coef": list(follower.coef),
            "intercept": follower.intercept,
            "bar": follower.bar,
            "C": FOLLOWER_C,
        },
        "evidence_threshold": evidence_threshold,
        "vector_dims": int(data["vec"].shape[1]) if args.vector else 0,
        "encoder": semantic.MODEL_ID,
        "C": args.C,
        "learn": args.learn,
        "seed": SEED,
        "data": "bench/data/routing/training.jsonl",
        "data_sha256": training_sha256(),
        "examples": int(len(data["y"])),
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n", "utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
