"""openpyxl, the one place it is imported: a coded-segments workbook read, the report's
workbook written. It is imported when one is opened, not with this module: the modules that
call these also serve CSV files and jobs that write no workbook."""

from __future__ import annotations


def read_only_workbook(path):
    """The workbook at `path`, read-only, cell values rather than formulas."""
    import openpyxl

    return openpyxl.load_workbook(path, read_only=True, data_only=True)


def write_only_workbook():
    """A new write-only workbook: rows stream to disk, memory stays flat."""
    from openpyxl import Workbook

    return Workbook(write_only=True)
