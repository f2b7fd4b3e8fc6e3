"""YAML a user wrote (config files, YAML theme files), read with every key once: PyYAML keeps
the last of two equal keys in a mapping without a word, so a setting given twice would
silently be the second one. A key given twice is refused with both its lines."""

from __future__ import annotations

from pathlib import Path

import yaml

from themesim.errors import InputError

_MERGE = "tag:yaml.org,2002:merge"  # `<<: *base` may repeat keys of the mapping it merges


class UniqueKeyLoader(yaml.SafeLoader):
    """yaml.SafeLoader whose mappings refuse a key given twice (InputError naming `where`
    and both lines)."""

    where = "YAML"

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE:
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    line = seen.get(key)
                except TypeError:  # an unhashable key: the base class names it
                    continue
                if line is not None:
                    if isinstance(key_node, yaml.ScalarNode):
                        key = key_node.value  # as written: `1.0` repeats `1`
                    raise InputError(
                        f"{self.where}, lines {line} and {key_node.start_mark.line + 1}",
                        f"key {key!r} is given twice in one mapping, and YAML would keep "
                        "only the second",
                        "Keep one of them (or merge their values into one)",
                    )
                seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)


def load_unique(text: str, where: str):
    """yaml.safe_load of `text`, a key given twice refused (InputError naming `where`)."""
    loader = UniqueKeyLoader(text)
    loader.where = where
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def check_config_files(paths) -> None:
    """At parse time: no key of a config file is given twice. Snakemake has read them (JSON,
    or YAML keeping the last key); a file that is missing, is not YAML to PyYAML, or uses
    YTE templating (`__use_yte__`) is left to it."""
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # Snakemake read it, or said why not
        if "__use_yte__" in text:
            continue  # YTE's `?if` / `?else` keys repeat by design
        try:
            load_unique(text, str(path))
        except yaml.YAMLError:
            continue
