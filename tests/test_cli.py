"""The fastcredit command line (the demo) on a small run."""
import io
import re

import numpy as np
import pytest

import fastcredit as fc
from fastcredit import _progress, cli


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "demo.npz"
    text, bars = io.StringIO(), io.StringIO()
    assert cli.run_demo(3000, seed=4, out=str(out), threads=None, stream=text,
                        progress=bars) == 0
    return text.getvalue(), np.load(out)


def test_saved_tables_and_credits_match_the_library(demo_run):
    _, saved = demo_run
    pools = fc.synthetic.sponsored_search(3000, seed=4)
    for mode in cli.MODES:
        table = fc.auction_replay(pools, slots=cli.SLOTS, mode=mode)
        np.testing.assert_array_equal(saved[f"table_{mode}"], table)
        for rule in cli.RULES:
            np.testing.assert_array_equal(saved[f"{rule}_{mode}"], getattr(fc, rule)(table))


def test_report_sections_and_figures(demo_run):
    text, saved = demo_run
    for heading in ("Coalition dependence", "Filter vs rerun", "Alignment with Shapley",
                    "Throughput", "replay filter", "replay rerun", "generate pools"):
        assert heading in text
    f, r = saved["table_filter"], saved["table_rerun"]
    identical = np.all(f == r, axis=1).mean()
    assert f"identical tables: {100 * identical:.1f} %" in text
    stuck = np.mean((f[:, -1] == 0) & (f[:, :-1].max(axis=1) > 0))
    assert f"({100 * stuck:.1f} %)" in text
    # centered cosine by hand: NaN where Shapley is constant, 0 where Banzhaf is
    a = saved["banzhaf_filter"] - saved["banzhaf_filter"].mean(1, keepdims=True)
    b = saved["shapley_filter"] - saved["shapley_filter"].mean(1, keepdims=True)
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.where(nb > 1e-12, np.where(na > 1e-12, (a * b).sum(1) / (na * nb), 0.0),
                       np.nan)
    row = re.search(r"Banzhaf\s+(-?\d\.\d{3})", text)
    assert float(row.group(1)) == pytest.approx(np.nanmedian(cos), abs=6e-4)


def test_insertion_sign_agreement_by_hand():
    # m = 1: one marginal per request, v({0}) - v({})
    tables = {"filter": np.array([[0., 1.], [0., 0.], [0., 2.]]),
              "rerun": np.array([[0., 3.], [0., -1.], [0., 0.]])}
    same, same_nonzero, total, nonzero = cli._insertion_signs(tables, 1)
    assert (same, total, nonzero) == (1 / 3, 3, 3) and same_nonzero == 1 / 3


def test_interaction_report_counts():
    pairs = np.zeros((2, 3, 3))
    pairs[0, 0, 1] = pairs[0, 1, 0] = -2.0
    pairs[1, 1, 2] = pairs[1, 2, 1] = 1.0
    pairs[1, 0, 2] = pairs[1, 2, 0] = 1e-15  # rounding, counted as zero
    lines = "\n".join(cli._interaction_report(pairs, 3))
    assert ("negative (substitutes) 16.7 % (1), positive (complements) 16.7 % (1), "
            "zero 66.7 %") in lines
    assert "0 over all pairs, 1.5 over the nonzero ones" in lines


def test_progress_bar_only_after_a_second(monkeypatch):
    clock = iter([0.0, 0.5, 1.6, 2.0])
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: next(clock))
    bars = io.StringIO()
    with _progress.Stage("work", 4, bars) as stage:
        stage.advance(1)    # at 0.5 s: nothing drawn
        assert bars.getvalue() == ""
        stage.advance(1)    # at 1.6 s: a bar at 50 %
    assert "work" in bars.getvalue() and "50.0 %" in bars.getvalue()
    assert stage.seconds == 2.0 and stage.done == 2


def test_main_runs_the_demo(capsys):
    assert cli.main(["demo", "--requests", "500", "--seed", "2", "--threads", "1"]) == 0
    assert "500 synthetic sponsored-search requests" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [[], ["demo", "--requests", "0"], ["demo", "--seed", "-1"],
                                  ["demo", "--requests", "many"], ["play"],
                                  ["demo", "--threads", "0"]])
def test_main_rejects_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert "usage" in capsys.readouterr().err
