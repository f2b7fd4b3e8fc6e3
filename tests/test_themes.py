"""Theme readers: every format, the text template, and every input error."""

import json
import re

import pandas as pd
import pytest
from helpers import HUMAN

from themesim.errors import InputError
from themesim.io.themes import (
    TEXT_TEMPLATE_DEFAULT,
    read_theme_file,
    read_themes_parquet,
    theme_columns,
    write_themes_parquet,
)


def write(tmp_path, name, content, encoding="utf-8"):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding=encoding, newline="")
    return path


def at(path, location=""):
    """Regex for an error message that starts with the file (and location)."""
    return re.escape(f"{path}, {location}" if location else f"{path}:")


def column(df, name):
    return df[name].tolist()


# ---------------------------------------------------------------- CSV / TSV


def test_csv_all_columns(tmp_path):
    path = write(
        tmp_path,
        "coder_a.csv",
        "ID,Theme,Description,Keywords,Codes,Quotes\n"
        'T1,Trust,Patients trust their GP,"trust; GP ;",c1;c2,"""I felt safe"""\n'
        "T2,NA,,,,\n",
    )
    df = read_theme_file(path)
    assert list(df.columns) == theme_columns()
    assert theme_columns() == [
        "set",
        "theme_id",
        "name",
        "description",
        "keywords",
        "codes",
        "quotes",
        "text",
        "source_row",
        "group",
    ]
    assert column(df, "set") == ["coder_a", "coder_a"]
    assert column(df, "theme_id") == ["T1", "T2"]
    assert column(df, "name") == ["Trust", "NA"]  # "NA" is a name, not a missing value
    assert column(df, "description") == ["Patients trust their GP", ""]
    assert column(df, "keywords") == [["trust", "GP"], []]
    assert column(df, "codes") == [["c1", "c2"], []]
    assert column(df, "quotes") == [['"I felt safe"'], []]
    assert column(df, "text") == ["Trust: Patients trust their GP", "NA"]
    assert column(df, "source_row") == [2, 3]
    assert df["source_row"].dtype == "int64"


def test_csv_header_names_are_case_and_space_insensitive(tmp_path):
    path = write(tmp_path, "s.csv", " Theme_ID , TITLE ,description\r\n7,Cost,Fees\r\n")
    df = read_theme_file(path)
    assert column(df, "theme_id") == ["7"]
    assert column(df, "name") == ["Cost"]
    assert column(df, "text") == ["Cost: Fees"]


@pytest.mark.parametrize("header", ["name", "theme", "title", "label"])
def test_csv_name_synonyms(tmp_path, header):
    df = read_theme_file(write(tmp_path, "s.csv", f"{header}\nAccess\n"))
    assert column(df, "name") == ["Access"]
    assert column(df, "theme_id") == ["T01"]


def test_tsv(tmp_path):
    path = write(tmp_path, "s.TSV", "name\tdescription\tkeywords\nTrust\tA, b\tx;y\n")
    df = read_theme_file(path)
    assert column(df, "description") == ["A, b"]
    assert column(df, "keywords") == [["x", "y"]]


def test_csv_blank_rows_are_skipped_but_counted(tmp_path):
    path = write(tmp_path, "s.csv", "name,description\nA,a\n\n,\nB,b\n")
    df = read_theme_file(path)
    assert column(df, "name") == ["A", "B"]
    assert column(df, "source_row") == [2, 5]


def test_ids_default_to_file_order(tmp_path):
    df = read_theme_file(write(tmp_path, "s.csv", "name\nC\nA\nB\n"))
    assert column(df, "theme_id") == ["T01", "T02", "T03"]


def test_ids_widen_past_99(tmp_path):
    rows = "".join(f"theme {i}\n" for i in range(100))
    df = read_theme_file(write(tmp_path, "s.csv", "name\n" + rows))
    assert column(df, "theme_id")[:2] == ["T001", "T002"]
    assert column(df, "theme_id")[-1] == "T100"


def test_utf8_bom_is_accepted(tmp_path):
    path = write(tmp_path, "s.csv", "\ufeffid,name\n1,Café\n")
    df = read_theme_file(path)
    assert column(df, "theme_id") == ["1"]
    assert column(df, "name") == ["Café"]


# ---------------------------------------------------------------- JSON / JSONL / YAML


def test_json_list(tmp_path):
    data = [
        {"id": 3, "name": "Trust", "description": "Belief", "keywords": ["a", " b ", ""]},
        {"id": "x", "Title": "Cost", "codes": "c1; c2", "quotes": None, "description": None},
    ]
    df = read_theme_file(write(tmp_path, "s.json", json.dumps(data)))
    assert column(df, "theme_id") == ["3", "x"]
    assert column(df, "name") == ["Trust", "Cost"]
    assert column(df, "description") == ["Belief", ""]
    assert column(df, "keywords") == [["a", "b"], []]
    assert column(df, "codes") == [[], ["c1", "c2"]]
    assert column(df, "quotes") == [[], []]
    assert column(df, "text") == ["Trust: Belief", "Cost"]
    assert column(df, "source_row") == [1, 2]


def test_json_themes_key(tmp_path):
    data = {"themes": [{"name": "Trust"}, {"name": "Cost"}]}
    df = read_theme_file(write(tmp_path, "s.json", json.dumps(data)))
    assert column(df, "name") == ["Trust", "Cost"]
    assert column(df, "theme_id") == ["T01", "T02"]


def test_jsonl(tmp_path):
    text = '{"name": "Trust", "description": "d1"}\n\n{"name": "Cost", "keywords": "k"}\n'
    df = read_theme_file(write(tmp_path, "s.jsonl", text))
    assert column(df, "name") == ["Trust", "Cost"]
    assert column(df, "keywords") == [[], ["k"]]
    assert column(df, "source_row") == [1, 3]


def test_yaml_list_and_mapping(tmp_path):
    listed = "- id: 1\n  name: Trust\n  keywords: [trust, 2020]\n- id: 2\n  name: Cost\n"
    df = read_theme_file(write(tmp_path, "a.yaml", listed))
    assert column(df, "theme_id") == ["1", "2"]
    assert column(df, "keywords") == [["trust", "2020"], []]
    mapped = "themes:\n  - name: Trust\n    description: >\n      Belief in\n      care\n"
    df = read_theme_file(write(tmp_path, "b.yml", mapped))
    assert column(df, "description") == ["Belief in care"]
    assert column(df, "set") == ["b"]


# ---------------------------------------------------------------- Markdown


def test_markdown_headings(tmp_path):
    text = (
        "# Themes from coder A\n"
        "Some preamble that is not a theme.\n"
        "\n"
        "## Trust in clinicians\n"
        "Patients trust\n"
        "their GP.\n"
        "\n"
        "**Keywords:** trust, GP\n"
        "- Codes: c1; c2\n"
        "Quotes:\n"
        '- "I felt safe, honestly"\n'
        "- “They listen”\n"
        "\n"
        "## **Cost** ##\n"
        "**Quotes**: \"Too dear, really\", 'cheap'\n"
        "## Access\n"
    )
    df = read_theme_file(write(tmp_path, "a.md", text))
    assert column(df, "name") == ["Trust in clinicians", "Cost", "Access"]
    assert column(df, "description") == ["Patients trust their GP.", "", ""]
    assert column(df, "keywords") == [["trust", "GP"], [], []]
    assert column(df, "codes") == [["c1", "c2"], [], []]
    assert column(df, "quotes") == [
        ["I felt safe, honestly", "They listen"],
        ["Too dear, really", "cheap"],
        [],
    ]
    assert column(df, "text") == ["Trust in clinicians: Patients trust their GP.", "Cost", "Access"]
    assert column(df, "source_row") == [4, 14, 16]
    assert column(df, "theme_id") == ["T01", "T02", "T03"]


def test_markdown_bullets(tmp_path):
    text = (
        "# Title\n"
        "Intro paragraph.\n"
        "\n"
        "- **Trust**: patients trust GPs\n"
        "  and nurses\n"
        "  Keywords: trust; care\n"
        "* **Cost** — fees are high\n"
        "1. Access: hard to reach, at 10:30\n"
        "- Waiting - long queues\n"
        "- Stigma — shame\n"
        "- **Voice:** being heard\n"
        "- Self-care\n"
        "\n"
        "A closing paragraph, not part of Self-care.\n"
    )
    df = read_theme_file(write(tmp_path, "b.markdown", text))
    assert column(df, "name") == [
        "Trust",
        "Cost",
        "Access",
        "Waiting",
        "Stigma",
        "Voice",
        "Self-care",
    ]
    assert column(df, "description") == [
        "patients trust GPs and nurses",
        "fees are high",
        "hard to reach, at 10:30",
        "long queues",
        "shame",
        "being heard",
        "",
    ]
    assert column(df, "keywords")[0] == ["trust", "care"]
    assert column(df, "source_row") == [4, 7, 8, 9, 10, 11, 12]


def test_markdown_without_themes(tmp_path):
    path = write(tmp_path, "a.md", "# Title\nJust prose.\n")
    with pytest.raises(InputError, match=at(path) + " contains no themes"):
        read_theme_file(path)


# ---------------------------------------------------------------- text template


def test_template_variants(tmp_path):
    path = write(
        tmp_path, "s.csv", "id,name,description,keywords\nA1,Trust,Belief,x;y\nA2,Cost,,\n"
    )
    assert read_theme_file(path)["text"].tolist() == ["Trust: Belief", "Cost"]
    assert TEXT_TEMPLATE_DEFAULT == "{name}: {description}"
    df = read_theme_file(path, text_template="{id} {name} ({keywords}): {description}")
    assert column(df, "text") == ["A1 Trust (x, y): Belief", "A2 Cost ()"]
    df = read_theme_file(path, text_template="{name}")
    assert column(df, "text") == ["Trust", "Cost"]


def test_template_description_only(tmp_path):
    path = write(tmp_path, "s.csv", "name,description\nTrust,Belief in care\n")
    assert column(read_theme_file(path, text_template="{description}"), "text") == [
        "Belief in care"
    ]
    path = write(tmp_path, "t.csv", "name,description\nTrust,Belief\nCost,\n")
    with pytest.raises(InputError, match=at(path, "row 3") + ": theme 'Cost' has no text"):
        read_theme_file(path, text_template="{description}")


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("{name}: {summary}", r"uses unknown field \{summary\}"),
        ("{}", r"uses unknown field \{\}"),
        ("{name", "is not a valid template"),
        ("just words", "uses no theme field"),
    ],
)
def test_bad_templates(tmp_path, template, problem):
    path = write(tmp_path, "s.csv", "name\nTrust\n")
    where = at(path, f"text template {template!r}")
    with pytest.raises(InputError, match=where + ": " + problem):
        read_theme_file(path, text_template=template)


# ---------------------------------------------------------------- set names


def test_set_name_argument(tmp_path):
    df = read_theme_file(write(tmp_path, "whatever.csv", "name\nA\n"), set_name="coder-B.v2")
    assert column(df, "set") == ["coder-B.v2"]


@pytest.mark.parametrize(
    ("filename", "set_name"),
    [("my themes.csv", None), ("ok.csv", "a__vs__b"), ("ok.csv", "_x"), ("ok.csv", "")],
)
def test_bad_set_names(tmp_path, filename, set_name):
    path = write(tmp_path, filename, "name\nA\n")
    with pytest.raises(InputError, match=at(path) + " theme set name .* is not allowed.*name:"):
        read_theme_file(path, set_name=set_name)


# ---------------------------------------------------------------- file errors


def test_missing_file(tmp_path):
    path = tmp_path / "nope.csv"
    with pytest.raises(InputError, match=at(path) + " file not found"):
        read_theme_file(path)


def test_directory(tmp_path):
    path = tmp_path / "dir.csv"
    path.mkdir()
    with pytest.raises(InputError, match=at(path) + " is a directory"):
        read_theme_file(path)


def test_unsupported_extension(tmp_path):
    path = write(tmp_path, "s.xlsx", "x")
    with pytest.raises(
        InputError, match=at(path) + r" unsupported theme file type '\.xlsx'.*\.csv"
    ):
        read_theme_file(path)


def test_latin1_bytes(tmp_path):
    path = write(tmp_path, "s.csv", b"name\ncaf\xe9\n")
    with pytest.raises(
        InputError, match=at(path) + " file is not UTF-8: byte 0xE9 at byte offset 8"
    ):
        read_theme_file(path)
    with pytest.raises(InputError, match="Re-save the file as UTF-8.*Windows-1252"):
        read_theme_file(path)


def test_utf16_file(tmp_path):
    path = write(tmp_path, "s.csv", "name\nTrust\n", encoding="utf-16")
    with pytest.raises(InputError, match=at(path) + " file is UTF-16"):
        read_theme_file(path)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("s.csv", ""),
        ("s.csv", "id,name\n"),
        ("s.json", "[]"),
        ("s.json", '{"themes": []}'),
        ("s.jsonl", "\n\n"),
        ("s.yaml", ""),
        ("s.md", ""),
    ],
)
def test_empty_sets(tmp_path, name, content):
    path = write(tmp_path, name, content)
    with pytest.raises(InputError, match=at(path) + " (contains no themes|file is empty)"):
        read_theme_file(path)


# ---------------------------------------------------------------- column / key errors


def test_unknown_csv_columns(tmp_path):
    path = write(tmp_path, "s.csv", "name,summary,notes\nA,b,c\n")
    with pytest.raises(
        InputError, match=at(path, "row 1") + ": unknown columns 'summary', 'notes'.*theme_id"
    ):
        read_theme_file(path)


def test_semicolon_separated_csv_hint(tmp_path):
    path = write(tmp_path, "s.csv", "id;name\n1;A\n")
    with pytest.raises(InputError, match="semicolon-separated"):
        read_theme_file(path)


def test_no_name_column(tmp_path):
    path = write(tmp_path, "s.csv", "id,description\n1,d\n")
    with pytest.raises(InputError, match=at(path, "row 1") + ": no name column"):
        read_theme_file(path)


def test_two_name_columns(tmp_path):
    path = write(tmp_path, "s.csv", "name,Title\nA,B\n")
    with pytest.raises(InputError, match=at(path, "row 1") + ": two columns give the theme name"):
        read_theme_file(path)


def test_unknown_json_key(tmp_path):
    path = write(tmp_path, "s.json", json.dumps([{"name": "A"}, {"name": "B", "summary": "x"}]))
    with pytest.raises(InputError, match=at(path, "theme 2") + ": unknown key 'summary'"):
        read_theme_file(path)


def test_json_theme_without_name_key(tmp_path):
    path = write(tmp_path, "s.json", json.dumps([{"name": "A"}, {"description": "x"}]))
    with pytest.raises(InputError, match=at(path, "theme 2") + ": no name key"):
        read_theme_file(path)


def test_unknown_top_level_key(tmp_path):
    path = write(tmp_path, "s.json", json.dumps({"themes": [{"name": "A"}], "author": "me"}))
    with pytest.raises(InputError, match=at(path) + " unknown top-level key 'author'"):
        read_theme_file(path)


@pytest.mark.parametrize(
    ("yaml_text", "problem"),
    [
        ("- name: 2020\n", "name is a number, not text"),
        ("- name: A\n  description: [a, b]\n", "description is a list, not text"),
        ("- name: A\n  keywords: [yes]\n", "keywords item 1 is a true/false value"),
        ("- name: A\n  id: 1.5\n", "id is a number, not text or a whole number"),
        ("- just a string\n", "is a str, not a theme with keys"),
    ],
)
def test_yaml_wrong_types(tmp_path, yaml_text, problem):
    path = write(tmp_path, "s.yaml", yaml_text)
    with pytest.raises(InputError, match=at(path, "theme 1 (line 1)") + ": " + problem):
        read_theme_file(path)


# ---------------------------------------------------------------- row errors


def test_empty_name(tmp_path):
    path = write(tmp_path, "s.csv", "name,description\nA,a\n,orphan description\n")
    with pytest.raises(InputError, match=at(path, "row 3") + ": theme has an empty name"):
        read_theme_file(path)


def test_empty_markdown_heading(tmp_path):
    path = write(tmp_path, "s.md", "## A\n\n## \ntext\n")
    with pytest.raises(InputError, match=at(path, "line 3") + ": theme has an empty name"):
        read_theme_file(path)


def test_duplicate_ids(tmp_path):
    path = write(tmp_path, "s.csv", "id,name\n1,A\n2,B\n1,C\n")
    with pytest.raises(InputError, match=at(path, "rows 2 and 4") + ": duplicate theme id '1'"):
        read_theme_file(path)


def test_duplicate_names_ignore_case(tmp_path):
    path = write(tmp_path, "s.csv", "name\nTrust\nCost\n trust \n")
    with pytest.raises(InputError, match=at(path, "rows 2 and 4") + ": duplicate theme name"):
        read_theme_file(path)


def test_duplicate_names_in_markdown(tmp_path):
    path = write(tmp_path, "s.md", "- A: x\n- B\n- A - y\n")
    with pytest.raises(InputError, match=at(path, "lines 1 and 3") + ": duplicate theme name 'A'"):
        read_theme_file(path)


def test_some_ids_missing(tmp_path):
    path = write(tmp_path, "s.csv", "id,name\n1,A\n,B\n")
    with pytest.raises(InputError, match=at(path, "row 3") + ": theme 'B' has no id"):
        read_theme_file(path)


def test_extra_cells(tmp_path):
    path = write(tmp_path, "s.csv", "name,description\nA,one, two\n")
    with pytest.raises(InputError, match=at(path, "row 2") + ": has 3 cells but the header has 2"):
        read_theme_file(path)


def test_value_under_blank_header(tmp_path):
    path = write(tmp_path, "s.csv", "name,,description\nA,,a\nB,x,b\n")
    assert read_theme_file(write(tmp_path, "ok.csv", "name,\nA,\n"))["name"].tolist() == ["A"]
    with pytest.raises(InputError, match=at(path, "row 3") + ": value 'x' in column 2"):
        read_theme_file(path)


# ---------------------------------------------------------------- malformed syntax


def test_malformed_csv(tmp_path):
    path = write(tmp_path, "s.csv", 'name,description\nA,"ok"\nB,"bad"quote\n')
    with pytest.raises(InputError, match=at(path, "line 3") + ": malformed CSV"):
        read_theme_file(path)


def test_a_csv_cell_longer_than_csvs_default_limit_is_read(tmp_path):
    """Regression: a 200,000-character description (Python's csv stops at 131,072 by default)
    was called "malformed CSV … wrapped in double quotes"; the same theme in JSON was read."""
    import csv

    long = "word " * 40_000  # 200,000 characters
    old = csv.field_size_limit(131_072)  # the default, whatever an earlier test raised it to
    try:
        path = write(tmp_path, "s.csv", f'name,description\nA,"{long}"\nB,short\n')
        df = read_theme_file(path)
        js = read_theme_file(
            write(tmp_path, "j.json", json.dumps([{"name": "A", "description": long}]))
        )
    finally:
        csv.field_size_limit(max(old, csv.field_size_limit()))
    assert len(long) == 200_000 and column(df, "description") == [long.strip(), "short"]
    assert df["description"].iat[0] == js["description"].iat[0]


def test_malformed_json(tmp_path):
    path = write(tmp_path, "s.json", '[\n  {"name": "A"},\n  {"name": "B",}\n]')
    with pytest.raises(InputError, match=at(path, "line 3, column 16") + ": invalid JSON"):
        read_theme_file(path)


def test_malformed_jsonl(tmp_path):
    path = write(tmp_path, "s.jsonl", '{"name": "A"}\n{"name": B}\n')
    with pytest.raises(InputError, match=at(path, "line 2, column 10") + ": invalid JSON"):
        read_theme_file(path)


def test_malformed_yaml(tmp_path):
    path = write(tmp_path, "s.yaml", "- name: A\n  description: x\n - name: B\n")
    with pytest.raises(InputError, match=at(path, "line 3, column 2") + ": invalid YAML"):
        read_theme_file(path)


def test_top_level_scalar(tmp_path):
    path = write(tmp_path, "s.yaml", "just text\n")
    with pytest.raises(InputError, match=at(path) + " the themes are a str, not a list"):
        read_theme_file(path)


# ---------------------------------------------------------------- parquet


def test_parquet_round_trip(tmp_path):
    path = write(
        tmp_path,
        "s.csv",
        "id,name,description,keywords,quotes\n1,Trust,d,a;b,q\n2,Cost,,,\n",
    )
    df = read_theme_file(path)
    out1, out2 = tmp_path / "a.parquet", tmp_path / "b.parquet"
    write_themes_parquet(df, out1)
    write_themes_parquet(df, out2)
    assert out1.read_bytes() == out2.read_bytes()
    back = read_themes_parquet(out1)
    assert list(back.columns) == theme_columns()
    assert back["keywords"].tolist() == [["a", "b"], []]
    assert isinstance(back["quotes"].iloc[0], list)
    assert back.to_dict("records") == df.to_dict("records")


def test_read_themes_parquet_rejects_other_tables(tmp_path):
    out = tmp_path / "x.parquet"
    pd.DataFrame({"a": [1]}).to_parquet(out)
    with pytest.raises(InputError, match=at(out) + " is not a theme table"):
        read_themes_parquet(out)
    bad = write(tmp_path, "y.parquet", b"not parquet")
    with pytest.raises(InputError, match=at(bad) + " is not a readable parquet file"):
        read_themes_parquet(bad)


def test_a_truncated_theme_table_says_how_to_make_it_again(tmp_path):
    """Regression (issue 24.12): "Re-create it with themesim" did not say how."""
    out = tmp_path / "human.parquet"
    write_themes_parquet(read_theme_file(write(tmp_path, "human.csv", HUMAN)), out)
    out.write_bytes(out.read_bytes()[:-100])
    with pytest.raises(InputError) as err:
        read_themes_parquet(out)
    assert str(err.value).startswith(f"{out}: is not a readable parquet file")
    assert str(err.value).endswith(
        ". Delete the file and run the workflow again (e.g. `snakemake --cores 4`): the rule "
        "that wrote it runs again from its inputs."
    )
