"""Train routing's learned gate (client/skillctl/routing/gate.py) and write its coefficients.

Reads only the training rows (``bench/data/routing/training.jsonl``); the development rows
choose between designs and the sealed set judges, neither is read here. For every training row
(and every request of a message that has several), each set's skills are installed from the
corpus as ``bench/route_real.py`` installs them, the router's candidate stages run, and each of
the best ``gate.CANDIDATES`` candidates becomes one example: its features (``gate.FEATURES``),
labelled 1 when it is one of the row's skills. A logistic regression (scikit-learn, lbfgs, fixed
seed) learns from them; the routing threshold and the one-threshold baseline's evidence
threshold are chosen on out-of-fold probabilities (five folds by message), maximising the mean
of single-request top-1 and no-skill accuracy. The file records the sha256 of the training rows:
a test fails when they change without retraining. Coefficients are written rounded to 6
significant digits, so the same data gives the same bytes.

    python bench/train_gate.py [--out client/skillctl/routing/data/gate.json] [--features F.npz]
                               [--compare DEV.npz] [--C 0.01] [--no-vector]
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

from skillctl.routing import gate, semantic  # noqa: E402
from skillctl.skillset import SkillSet  # noqa: E402

SEED = 0  # fold assignment and the solver's start: the same data gives the same file
FOLDS = 5
DIGITS = 6  # significant digits written: float noise below this never changes the bytes
GRID = [t / 100 for t in range(5, 96)]  # probability thresholds tried
CLEAR_GRID = [t / 100 for t in range(50, 100)]  # own-evidence bars tried
CLEAR_PRECISION = 0.9  # "clearly names the request": right 9 times in 10 on training (out of fold)
CLEAR_MIN = 50  # ... over enough examples to say so
EVIDENCE_GRID = [t / 100 for t in range(20, 120)]  # the baseline's evidence thresholds tried


def training_sha256() -> str:
    return hashlib.sha256(FILES["training"].read_bytes()).hexdigest()


def examples(rows: list[dict]) -> dict[str, np.ndarray]:
    """Features of every candidate of every row (and of each request of a row with several)."""
    x, y, group, whole, kind, evidence, invoked, trigger, vec = [], [], [], [], [], [], [], [], []
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
                for is_whole, text in [(True, read.text), *((False, p) for p in read.parts)]:
                    candidates, ev = router.candidates(text)
                    feats = router.gate_features(text, candidates, ev)
                    for match, f in zip(candidates, feats, strict=True):
                        x.append(f)
                        vec.append(ev.vectors[0])
                        y.append(match.name in row["skills"])
                        group.append(message)
                        whole.append(is_whole)
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
    """The logit without the chat prior (gate.GateModel.own)."""
    n = len(gate.FEATURES)
    keep = np.array([name not in gate.PRIOR for name in gate.FEATURES], dtype=np.float64)
    return ((x[:, :n] - mean[:n]) / scale[:n] * keep) @ coef[:n] + intercept


def out_of_fold(data: dict[str, np.ndarray], c: float) -> tuple[np.ndarray, np.ndarray]:
    """Each example's probability, and its skill's-own-evidence probability, from a model that
    did not see its message."""
    groups = np.unique(data["group"])
    rng = np.random.default_rng(SEED)
    fold_of = dict(zip(groups, rng.permutation(len(groups)) % FOLDS, strict=True))
    folds = np.array([fold_of[g] for g in data["group"]])
    p, own = np.zeros(len(data["y"])), np.zeros(len(data["y"]))
    for k in range(FOLDS):
        mean, scale, coef, intercept = fit(data["x"][folds != k], data["y"][folds != k], c)
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


def thresholds(data: dict[str, np.ndarray], p: np.ndarray) -> tuple[float, float]:
    forced = data["invoked"] | data["trigger"]
    order = p + 2.0 * data["invoked"]
    best = max(GRID, key=lambda t: (balanced(data, (p >= t) | forced, order), -abs(t - 0.5)))
    ev = data["evidence"]
    best_evidence = max(EVIDENCE_GRID, key=lambda t: balanced(data, ev >= t, ev))
    return best, best_evidence


def rounded(values) -> list[float]:
    return [float(f"{float(v):.{DIGITS}g}") for v in values]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=gate.GATE_FILE)
    parser.add_argument("--features", type=Path, help="cache the training examples here (reused when present)")
    # C chosen by out-of-fold accuracy on training (.01 of 1 / .1 / .03 / .01 / .003 / .001);
    # the message's vector chosen on development (bench/README, "Routing").
    parser.add_argument("--C", type=float, default=0.01, help="inverse regularisation strength")
    parser.add_argument(
        "--no-vector", dest="vector", action="store_false", help="leave the message's vector (its form) out"
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
    p, own = out_of_fold(data, args.C)
    clear = clear_bar(data, own)
    p = np.where(own >= clear, np.maximum(p, own), p)
    dev = cached_examples(args.compare, "development") if args.compare else None
    if dev is not None and args.vector:
        dev["x"] = np.hstack([dev["x"], dev["vec"].astype(np.float64)])
    threshold, evidence_threshold = thresholds(data, p)
    mean, scale, coef, intercept = fit(data["x"], data["y"], args.C)
    forced = data["invoked"] | data["trigger"]
    print(
        f"{len(data['y'])} examples; out-of-fold balanced accuracy {balanced(data, (p >= threshold) | forced, p):.3f}"
    )
    print(
        f"threshold {threshold:.2f}; own evidence clear at {clear:.2f}; baseline evidence threshold {evidence_threshold:.2f}"
    )
    if dev is not None:
        z = ((dev["x"] - mean) / scale) @ coef + intercept
        p_dev = 1 / (1 + np.exp(-z))
        own_dev = 1 / (1 + np.exp(-own_logits(dev["x"], mean, scale, coef, intercept)))
        p_dev = np.where(own_dev >= clear, np.maximum(p_dev, own_dev), p_dev)
        forced_dev = dev["invoked"] | dev["trigger"]
        print(f"development (whole messages): {report(dev, (p_dev >= threshold) | forced_dev, p_dev)}")
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
        "evidence_threshold": evidence_threshold,
        "vector_dims": int(data["vec"].shape[1]) if args.vector else 0,
        "encoder": semantic.MODEL_ID,
        "C": args.C,
        "seed": SEED,
        "data": "bench/data/routing/training.jsonl",
        "data_sha256": training_sha256(),
        "examples": int(len(data["y"])),
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n", "utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
