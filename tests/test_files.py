"""themesim.io.files.atomic_path: killed writers' temp files removed, the folder listed once."""

from __future__ import annotations

import os
from pathlib import Path

from themesim.io import files
from themesim.io.files import atomic_path


def test_atomic_path_lists_a_folder_once_and_still_removes_killed_writers_files(
    tmp_path, monkeypatch
):
    out_dir = tmp_path / "pairs"
    out_dir.mkdir()
    # Left by killed writers of two outputs, and one of an output not written here.
    for name in (".a.111.tmp.png", ".b.222.tmp.png", ".b.333.tmp.svg", ".c.444.tmp.png"):
        (out_dir / name).write_text("killed")
    scans = []
    real_scandir = os.scandir

    def counting_scandir(path):
        scans.append(os.path.abspath(path))
        return real_scandir(path)

    monkeypatch.setattr(files.os, "scandir", counting_scandir)
    for name in ("a.png", "b.png", "b.svg", "d.png", "a.png"):
        with atomic_path(out_dir / name) as tmp:
            Path(tmp).write_text(name)
    assert scans == [str(out_dir)]
    # Each written output's leftovers are gone; c.png was not written, its leftover stays.
    assert sorted(os.listdir(out_dir)) == [".c.444.tmp.png", "a.png", "b.png", "b.svg", "d.png"]
    assert (out_dir / "a.png").read_text() == "a.png"
    # Another folder is listed on its own first write.
    with atomic_path(tmp_path / "other" / "x.csv") as tmp:
        Path(tmp).write_text("x")
    assert scans == [str(out_dir), str(tmp_path / "other")]
