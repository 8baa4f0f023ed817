"""Reading the YAML files users write (scenarios, tool sets): parsed once, with line numbers.

libyaml's C loader is used where PyYAML has it (several times faster), the
pure loader otherwise. A file is composed into a node tree once and the data
built from it, so an error can name the line of any field (:func:`line_of`)
without parsing the text twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # type: ignore[assignment]


class YamlError(ValueError):
    """A file that is not readable YAML: ``line`` is 1-based, or ``None``."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


def load(path: str | Path) -> tuple[Any, yaml.Node | None]:
    """The data of a YAML file and its node tree (for line numbers)."""
    text = Path(path).read_text(encoding="utf-8")
    return loads(text)


def loads(text: str) -> tuple[Any, yaml.Node | None]:
    """The data of a YAML text and its node tree."""
    loader = SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise YamlError(
            f"invalid YAML: {getattr(exc, 'problem', None) or exc}", mark.line + 1 if mark else None
        ) from exc
    finally:
        loader.dispose()
    return data, node


def line_of(node: yaml.Node | None, path: Sequence[object]) -> int | None:
    """The 1-based line of the node at ``path`` (or of its nearest existing parent)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line + 1
    return line


def pointer(path: Sequence[object]) -> str:
    """The JSON pointer of ``path`` (``/`` for the document itself)."""
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path) if path else "/"
