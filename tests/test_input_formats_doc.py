"""config/INPUT_FORMATS.md says what the theme reader does with a column it does not know:
code-book export columns are ignored with a warning (parent kept), any other stops the run.
It once said that every unknown column stops the run, while the code warned."""

import logging
import re

import pytest
from helpers import REPO

from themesim.errors import InputError
from themesim.io.theme_formats import _EXPORT_EXTRAS
from themesim.steps.ingest import ingest_themes

DOC = (REPO / "config" / "INPUT_FORMATS.md").read_text()


def _csv_section() -> str:
    return DOC.split("### CSV", 1)[1].split("###", 1)[0]


def test_the_doc_names_every_column_the_code_ignores_with_a_warning():
    section = " ".join(_csv_section().split())
    warned = re.search(r"`parent`.*?ignored with a warning", section).group(0)
    named = set(re.findall(r"`([a-z_]+)`", warned)) - {"parent"}
    ignored = {k for k, v in _EXPORT_EXTRAS.items() if v == "_extra"}
    assert named == ignored
    assert "Any other column stops the run with an error" in section
    assert "Any other column is an error." not in DOC  # the old, untrue sentence


@pytest.mark.parametrize("column", sorted(k for k, v in _EXPORT_EXTRAS.items() if v == "_extra"))
def test_a_code_book_column_is_ignored_with_a_warning(column, tmp_path, caplog):
    src = tmp_path / "themes.csv"
    src.write_text(f"name,description,{column}\nMoney,Care costs,x\nWork,Jobs and care,y\n")
    with caplog.at_level(logging.WARNING, logger="themesim"):
        ingest_themes(str(src), str(tmp_path / "t.parquet"), set_name="t", template="{name}")
    assert f"column {column!r} is not a theme field and is ignored" in caplog.text


def test_any_other_column_stops_the_run(tmp_path):
    src = tmp_path / "themes.csv"
    src.write_text("name,descripton\nMoney,Care costs\n")
    with pytest.raises(InputError, match="unknown column 'descripton'"):
        ingest_themes(str(src), str(tmp_path / "t.parquet"), set_name="t", template="{name}")
