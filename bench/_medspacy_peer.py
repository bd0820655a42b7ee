"""The peer side of bench/labeller_openi.py, run in the medspacy venv (not a cxreval dependency).

Reads ``{"texts": [...], "phrases": {finding: [phrase, ...]}}`` (JSON), labels each text with medspacy's
default pipeline (PyRuSH sentences, TargetMatcher with the same finding phrases as cxreval, ConText with
its default rules), one ``nlp(text)`` call per report, and writes per-report states (2 positive, 1
uncertain/hypothetical, 0 negated, -1 not mentioned) and the labelling time.
"""

import json
import sys
import time


def main(inp: str, out: str) -> None:
    from loguru import logger

    logger.remove()  # PyRuSH logs every sentence at DEBUG level
    import medspacy
    from medspacy.ner import TargetRule

    data = json.loads(open(inp).read())
    nlp = medspacy.load()
    nlp.get_pipe("medspacy_target_matcher").add(
        [TargetRule(p, f) for f, ps in data["phrases"].items() for p in ps]
    )
    findings = list(data["phrases"])
    nlp("warm up: no pleural effusion.")
    states = {f: [] for f in findings}
    t0 = time.perf_counter()
    docs = [nlp(t) for t in data["texts"]]
    seconds = time.perf_counter() - t0
    for doc in docs:
        st = dict.fromkeys(findings, -1)
        for e in doc.ents:
            s = 0 if e._.is_negated else 1 if (e._.is_uncertain or e._.is_hypothetical) else 2
            st[e.label_] = max(st[e.label_], s)
        for f in findings:
            states[f].append(st[f])
    json.dump(
        {"states": states, "seconds": seconds, "n": len(docs), "version": medspacy.__version__},
        open(out, "w"),
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
