"""asv benchmarks of the corpus itself (cheap; no Warp program runs).

The accuracy and cost benchmarks across Warp releases come with the release
matrix; these track the size of the ground truth across the project's commits.
"""

from pathlib import Path

from defects4warp.corpus.case import load_corpus

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


class Corpus:
    version = "1"

    def track_cases(self):
        return len(load_corpus(CORPUS)[0])

    track_cases.unit = "cases"

    def track_classes_covered(self):
        cases, _ = load_corpus(CORPUS)
        return len({c for case in cases for c in case.classes})

    track_classes_covered.unit = "classes"

    def time_load_corpus(self):
        load_corpus(CORPUS)
