"""Declared theme groups (`group`: a domain, a parent theme or a category): read from every
format, carried into the ingested theme table, and served by io.themes.theme_groups."""

import pyarrow as pa
import pyarrow.parquet as pq

from themesim.io.themes import (
    read_theme_file,
    read_themes_parquet,
    theme_groups,
    write_themes_parquet,
)


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_csv_group_column_and_parent_fallback(tmp_path):
    p = _write(tmp_path, "a.csv", "name,group\nTrust,relations\nCost,\nWaiting,access\n")
    df = read_theme_file(p)
    assert df["group"].tolist() == ["relations", None, "access"]
    assert theme_groups(df) == {"T01": "relations", "T02": None, "T03": "access"}
    # a CAQDAS export's parent column serves where no group is given
    p = _write(tmp_path, "b.csv", "name,parent\nTrust,Care\nCost,\n")
    assert read_theme_file(p)["group"].tolist() == ["Care", None]
    # domain and category are read as group
    p = _write(tmp_path, "c.csv", "name,domain\nTrust,interpretive\n")
    assert read_theme_file(p)["group"].tolist() == ["interpretive"]


def test_json_yaml_and_markdown_groups(tmp_path):
    p = _write(tmp_path, "a.json", '[{"name": "Trust", "group": "relations"}, {"name": "Cost"}]')
    assert read_theme_file(p)["group"].tolist() == ["relations", None]
    p = _write(tmp_path, "a.yaml", "- name: Trust\n  category: relations\n- name: Cost\n")
    assert read_theme_file(p)["group"].tolist() == ["relations", None]
    p = _write(tmp_path, "a.md", "## Trust\nGroup: relations\nPatients trust.\n\n## Cost\nMoney.\n")
    df = read_theme_file(p)
    assert df["group"].tolist() == ["relations", None]
    assert df["description"].tolist() == ["Patients trust.", "Money."]


def test_ingested_table_carries_groups_and_old_tables_read(tmp_path):
    p = _write(tmp_path, "a.csv", "name,group\nTrust,relations\nCost,\n")
    out = tmp_path / "a.parquet"
    write_themes_parquet(read_theme_file(p), out)
    assert theme_groups(out) == {"T01": "relations", "T02": None}
    # a table written before `group` existed: no theme has a group
    t = pq.read_table(out).drop(["group"])
    pq.write_table(t, out)
    df = read_themes_parquet(out)
    assert df["group"].tolist() == [None, None]
    assert theme_groups(out) == {"T01": None, "T02": None}
    assert isinstance(pa.Table.from_pandas(df), pa.Table)


def test_group_labels_are_matched_as_theme_names_are(tmp_path, caplog):
    """`Money` and `money` (in one file, or in two analysts' files) are one group, as theme
    names are one theme ignoring case and spacing; the file that spells one group two ways
    says so in the ingest log."""
    import logging

    caplog.set_level(logging.INFO)
    p = _write(tmp_path, "a.csv", "name,group\nRent,money\nBills,Money \nShifts,Work\nCare,\n")
    assert theme_groups(read_theme_file(p)) == {
        "T01": "money", "T02": "money", "T03": "work", "T04": None,
    }  # fmt: skip
    notes = [r.getMessage() for r in caplog.records if "one group" in r.getMessage()]
    assert notes == [
        f"{p}: groups 'money' and 'Money' are one group (group labels are matched as theme "
        "names are, case and spacing ignored)"
    ]


def test_a_groups_spelling_does_not_move_the_verdicts_interval(tmp_path):
    """Two analysts declare 7 domains of 14 themes each, one in lower case, the other in
    capitals: the verdict's units are the 7 domains, and its interval is the one consistent
    spelling gives (before, 14 groups: a different interval)."""
    import numpy as np

    from themesim.metrics.verdicts.difference import Study, difference

    rng = np.random.default_rng(3)
    n = 14
    tables = {}
    for pair in (("a", "g0"), ("a", "g1"), ("a", "g2"), ("b", "g0"), ("b", "g1"), ("b", "g2"),
                 ("a", "b")):  # fmt: skip
        S = rng.random((n, n))
        tables[pair] = (S, S)

    def interval(spell_a, spell_b):
        groups = {}
        for name, spell in (("a", spell_a), ("b", spell_b)):
            rows = "".join(f"Theme {i},{spell(f'domain {i % 7}')}\n" for i in range(n))
            found = theme_groups(read_theme_file(_write(tmp_path, f"{name}.csv",
                                                        "name,group\n" + rows)))  # fmt: skip
            groups[name] = [found[t] for t in sorted(found)]
        groups |= {g: [None] * n for g in ("g0", "g1", "g2")}
        res = difference(Study(["a", "b"], ["g0", "g1", "g2"], tables, groups))
        return res.ci_low, res.ci_high

    same = interval(str.lower, str.lower)
    assert interval(str.lower, str.upper) == same
    assert interval(str.lower, lambda x: x.replace(" ", "_")) != same  # 14 groups: it moves
