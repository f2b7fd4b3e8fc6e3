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
