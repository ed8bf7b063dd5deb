"""Train the request-form probe that routing ships (skillctl/routing/data/request-form.npz).

    python bench/train_request_form.py [--check] [--loso]

A logistic regression on the routing vector of a message (MiniLM + WordLlama, semantic.Encoder):
a request for work (the single- and multi-skill requests of every set's dev split in
bench/data/real) against a message that needs no skill (every set's dev no-skill messages and
data/no-skill.txt). Only dev rows: the test splits stay unseen. Routing adds
``chat_form_weight`` x the probe's log-odds against "a request" (when it reads as chat) to the
message's no-skill likeness (NoSkillReference.chat_form).

``--check``: train and compare with the shipped file, write nothing (exit 1 if they differ:
the data changed and the probe was not retrained). ``--loso``: per set, a probe trained without
that set's rows, and how many of its dev messages each side would mark as chat, as routing
does: the estimate that chose C (what a set written later would see).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "client"))

from skillctl.routing import semantic  # noqa: E402

DATA = ROOT / "bench" / "data" / "real"
C = 1.0  # inverse regularisation: .3, 1, 3 and 10 tried with --loso (bench/README)


def rows() -> list[tuple[str, bool, str]]:
    """(set, is a request, message) for every dev row of bench/data/real, file by file."""
    out = []
    for path in sorted(DATA.glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            row = json.loads(line)
            if row["split"] == "dev":
                out.append((path.stem, row["kind"] != "none", row["query"]))
    return out


def fit(vectors, labels):
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=C, max_iter=5000, class_weight="balanced")
    model.fit(vectors, labels)
    return model.coef_[0].astype("float32"), float(model.intercept_[0])


def main() -> None:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped probe, write nothing")
    parser.add_argument("--loso", action="store_true", help="leave each set out: how it would mark that set")
    args = parser.parse_args()

    data = rows()
    reference = semantic.no_skill_texts()
    texts = [text for _, _, text in data] + reference
    labels = np.array([request for _, request, _ in data] + [False] * len(reference))
    sets = np.array([name for name, _, _ in data] + ["no-skill.txt"] * len(reference))
    encoder = semantic.encoder()
    vectors = encoder.encode(texts)
    print(f"{len(data)} dev rows ({int(labels.sum())} requests) + {len(reference)} reference messages")

    if args.loso:
        for name in sorted(set(sets) - {"no-skill.txt"}):
            out = sets == name
            weights, bias = fit(vectors[~out], labels[~out])
            chat = (vectors[out] @ weights + bias) < 0
            requests, others = labels[out], ~labels[out]
            print(
                f"  {name:10} requests read as chat {chat[requests].sum():3}/{requests.sum():3}"
                f"   no-skill messages read as chat {chat[others].sum():3}/{others.sum():3}"
            )

    weights, bias = fit(vectors, labels)
    digest = hashlib.sha256(json.dumps([texts, labels.tolist()]).encode()).hexdigest()
    if args.check:
        shipped = semantic.request_form()
        same = shipped is not None and np.allclose(shipped[0], weights, atol=1e-4) and abs(shipped[1] - bias) < 1e-4
        print("the shipped probe matches the data" if same else "the shipped probe is stale: run without --check")
        raise SystemExit(0 if same else 1)
    with open(semantic.REQUEST_FORM, "wb") as f:
        np.savez(f, model=np.array(semantic.MODEL_ID), sha256=np.array(digest), weights=weights, bias=np.array(bias))
    train = ((vectors @ weights + bias) > 0) == labels
    print(f"wrote {semantic.REQUEST_FORM.relative_to(ROOT)} (training accuracy {train.mean():.3f})")


if __name__ == "__main__":
    main()
