"""Explorer batch work: the PCA fit of 10,000 x 256 vectors and the static report's build.

Each is printed beside a baseline measured in the same run: for the PCA, scikit-learn's
default ``PCA(n_components=2)`` on the same matrix; for the report, plotly writing the same
figures to HTML on its own (the floor for a self-contained page).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from _common import best_of, print_table

from placeborag import FakeEmbedder
from placeborag.explore import (
    AnchorsDisplay,
    FilterModesDisplay,
    ProjectionDisplay,
    RankingDisplay,
    demo_scenario,
    fit_projector,
    write_report,
)


def main() -> None:
    from sklearn.decomposition import PCA

    scenario = demo_scenario(10_000)
    vectors = FakeEmbedder(dimensions=256).embed_batch([d.text for d in scenario.documents])
    ours = best_of(lambda: fit_projector(vectors, 2), repeat=3)
    sklearn_default = best_of(lambda: PCA(n_components=2).fit(vectors), repeat=3)

    small = demo_scenario()
    out = Path(tempfile.mkdtemp()) / "report.html"
    report = best_of(lambda: write_report(out, small), repeat=3)

    def plotly_alone() -> None:
        figures = [
            ProjectionDisplay.from_scenario(small).plot().figure_,
            RankingDisplay.from_scenario(small).plot().figure_,
            AnchorsDisplay.from_scenario(small).plot().figure_,
            FilterModesDisplay.from_scenario(small).plot().figure_,
        ]
        for i, figure in enumerate(figures):
            figure.write_html(out.with_name(f"fig{i}.html"), include_plotlyjs=i == 0)

    floor = best_of(plotly_alone, repeat=3)
    print_table(
        "Explorer batch work",
        [
            ("PCA fit, 10,000 x 256 (deterministic)", f"{ours * 1e3:.1f} ms", "", ""),
            ("sklearn PCA(n_components=2) default", f"{sklearn_default * 1e3:.1f} ms", "", ""),
            ("ratio", f"{ours / sklearn_default:.2f}x", "report", ""),
            ("placeborag report (demo scenario)", f"{report * 1e3:.0f} ms", "", ""),
            ("same figures through plotly alone", f"{floor * 1e3:.0f} ms", "", ""),
            ("ratio", f"{report / floor:.2f}x", "report", ""),
            ("report size", f"{out.stat().st_size / 2**20:.1f} MiB", "self-contained", ""),
        ],
    )


if __name__ == "__main__":
    main()
