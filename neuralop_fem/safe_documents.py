"""The one reader of YAML and JSON documents that come from a file: bounded in every way.

YAML and JSON can do harm without running code. A 300-byte YAML *alias bomb* (``a: &a [x,
x]``, ``b: &b [*a, *a]``, ...) describes a value with billions of items, which a message
quoting it (or any code walking it) expands; a document nested thousands deep makes the
recursive parsers raise :class:`RecursionError`; a key given twice (``epochs: 1`` then
``epochs: 2``) is silently resolved to the last. :func:`parse_yaml` and :func:`parse_json`
refuse each of these with one short line:

* at most :data:`MAX_BYTES` of JSON (a run.json, as :mod:`neuralop_fem.runs.validation`
  bounds it) or :data:`MAX_YAML_BYTES` of YAML, which PyYAML parses at about 1 MB/s
  (:func:`read_document`);
* nesting at most :data:`MAX_DEPTH` deep;
* at most :data:`MAX_ALIASES` YAML aliases, and at most :data:`MAX_NODES` values once every
  alias is expanded;
* no key twice in one mapping (YAML merge keys ``<<`` still override, as YAML defines).

YAML is read with PyYAML's ``SafeLoader`` (no tags that build objects) and reads ``1e-3`` as
a number, as YAML 1.2 and JSON do (YAML 1.1 wants ``1.0e-3``).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from .errors import ConfigError, RunDirectoryError
from .files import open_for_reading
from .safe_text import printable

__all__ = [
    "MAX_ALIASES",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_YAML_BYTES",
    "parse_json",
    "parse_yaml",
    "read_document",
    "read_json_file",
]

#: Largest JSON document read (a run.json: its limit in runs.validation).
MAX_BYTES = 64 << 20
#: Largest YAML document read (a configuration file is a few hundred bytes).
MAX_YAML_BYTES = 4 << 20
#: Deepest nesting of lists and mappings.
MAX_DEPTH = 64
#: Most aliases (``*name``) in a YAML document.
MAX_ALIASES = 32
#: Most values in a YAML document once its aliases are expanded.
MAX_NODES = 100_000

_YAML12_FLOAT = re.compile(
    r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$")


def read_document(path: str | os.PathLike[str], fmt: str, *, what: str,
                  error: type[Exception] = ConfigError) -> object:
    """The document in the file ``path`` (``fmt``: ``"yaml"`` or ``"json"``).

    Raises
    ------
    error
        Naming the file: not a readable regular file, larger than :data:`MAX_BYTES` (JSON) or
        :data:`MAX_YAML_BYTES` (YAML), not UTF-8, or refused by :func:`parse_yaml` /
        :func:`parse_json`.
    """
    source = printable(os.fspath(path), limit=300)
    limit = MAX_BYTES if fmt == "json" else MAX_YAML_BYTES
    text = _bounded_bytes(path, what=what, limit=limit, source=source, error=error)
    parse = parse_json if fmt == "json" else parse_yaml
    return parse(text, source=source, error=error)


def _bounded_bytes(path: str | os.PathLike[str], *, what: str, limit: int, source: str,
                   error: type[Exception], check_size: bool = False) -> str:
    """The UTF-8 text of the regular file ``path``, refused beyond ``limit`` bytes (with
    ``check_size``, by its size before reading too: :func:`~.files.open_for_reading`)."""
    with open_for_reading(path, what=what, error=error,
                          max_bytes=limit if check_size else None) as fh:
        raw = fh.read(limit + 1)
    if len(raw) > limit:
        msg = f"{source}: {what} must be at most {limit:,} bytes; it is larger."
        raise error(msg)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"{source}: is not UTF-8 text (byte {exc.start}); expected {what}."
        raise error(msg) from None


def read_json_file(path: str | os.PathLike[str], *, what: str, max_bytes: int = MAX_BYTES,
                   max_depth: int = 32, error: type[Exception] = RunDirectoryError) -> Any:
    """Parse a JSON file of a run directory (a ``run.json``) that may be damaged or hostile.

    Unlike :func:`read_document`, a key given twice keeps its last value (as ``json.load``
    does: files written before this reader existed stay readable), and the messages name
    the JSON error as the run-directory readers always have.

    Raises
    ------
    error
        Naming ``path``: missing, unreadable, not a regular file, empty, larger than
        ``max_bytes``, not UTF-8, not JSON (with line and column), or nested deeper than
        ``max_depth``.
    """
    text = _bounded_bytes(path, what=what, limit=max_bytes, source=str(path), error=error,
                          check_size=True)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = (f"{path}: is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
               f"expected {what}.")
        raise error(msg) from None
    except (ValueError, RecursionError) as exc:  # over-long integers, extreme nesting
        msg = f"{path}: cannot be parsed as {what} ({type(exc).__name__}: {str(exc)[:80]})."
        raise error(msg) from None
    stack: list[tuple[Any, int, str]] = [(obj, 1, "")]
    while stack:
        value, depth, where = stack.pop()
        if not isinstance(value, dict | list):
            continue
        if depth > max_depth:
            msg = (f"{path}: JSON nested more than {max_depth} levels deep (at "
                   f"`{where or '<top>'}`); the file is damaged or not written by neuralop_fem.")
            raise error(msg)
        items = value.items() if isinstance(value, dict) else enumerate(value)
        stack.extend((v, depth + 1, f"{where}.{k}" if where else str(k)) for k, v in items)
    return obj


def _refuse_duplicates(pairs: list[tuple[str, Any]], source: str,
                       error: type[Exception]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            msg = (f"{source}: key {printable(repr(key), limit=100)} is given twice in one "
                   "mapping; give it once.")
            raise error(msg)
        out[key] = value
    return out


def parse_json(text: str, *, source: str, error: type[Exception] = ConfigError) -> object:
    """The JSON document ``text`` (from ``source``, for messages), bounded.

    Raises
    ------
    error
        Invalid JSON (with line and column), a key twice in one object, nesting deeper than
        :data:`MAX_DEPTH`, or a number beyond Python's limits.
    """
    try:
        doc = json.loads(text, object_pairs_hook=lambda p: _refuse_duplicates(p, source, error))
    except json.JSONDecodeError as exc:
        msg = (f"{source}: must be valid JSON; got a parse error at line {exc.lineno}, column "
               f"{exc.colno} ({exc.msg}).")
        raise error(msg) from None
    except RecursionError:
        msg = f"{source}: is nested deeper than {MAX_DEPTH} levels; refused."
        raise error(msg) from None
    except ValueError as exc:  # an integer of more digits than Python converts
        if isinstance(exc, error):  # a key given twice (_refuse_duplicates)
            raise
        msg = f"{source}: cannot be read as JSON ({printable(exc, limit=120)})."
        raise error(msg) from None
    _check_depth(doc, source, error)
    return doc


def _check_depth(doc: object, source: str, error: type[Exception]) -> None:
    stack = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                msg = f"{source}: is nested deeper than {MAX_DEPTH} levels; refused."
                raise error(msg)
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)


def parse_yaml(text: str, *, source: str, error: type[Exception] = ConfigError) -> object:
    """The YAML document ``text`` (from ``source``, for messages), bounded.

    Raises
    ------
    error
        Invalid YAML (with line and column), more than :data:`MAX_ALIASES` aliases, more than
        :data:`MAX_NODES` values once expanded, nesting deeper than :data:`MAX_DEPTH`, or a key
        twice in one mapping.
    """
    import yaml

    loader = _loader(source, error)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expanded(node, source, error)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        where = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        problem = getattr(exc, "problem", None) or exc
        msg = (f"{source}: must be valid YAML; got a parse error{where} "
               f"({printable(problem, limit=120)}).")
        raise error(msg) from None
    except RecursionError:
        msg = f"{source}: is nested deeper than {MAX_DEPTH} levels; refused."
        raise error(msg) from None
    finally:
        loader.dispose()


def _check_expanded(root: Any, source: str, error: type[Exception]) -> None:
    """Refuse a node graph with more than :data:`MAX_NODES` values once aliases (shared
    nodes) are expanded; each node is visited once (its expanded size is remembered)."""
    import yaml

    sizes: dict[int, int] = {}
    open_: set[int] = set()  # nodes whose children are being sized (a cycle returns to one)
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if isinstance(node, yaml.ScalarNode):
            sizes[id(node)] = 1
            continue
        children = [c for pair in node.value for c in pair] \
            if isinstance(node, yaml.MappingNode) else list(node.value)
        if done:
            open_.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[id(node)] > MAX_NODES:
                msg = (f"{source}: expands to more than {MAX_NODES:,} values through its "
                       "aliases (a YAML alias bomb?); refused.")
                raise error(msg)
            continue
        if id(node) in sizes:
            continue
        if id(node) in open_:
            msg = f"{source}: a YAML alias refers to a value that contains it; refused."
            raise error(msg)
        open_.add(id(node))
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)


def _loader(source: str, error: type[Exception]) -> type:
    """A SafeLoader that counts aliases and depth while composing and refuses duplicate keys."""
    import yaml

    class Loader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._aliases = 0
            self._depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self._aliases += 1
                if self._aliases > MAX_ALIASES:
                    msg = (f"{source}: holds more than {MAX_ALIASES} YAML aliases (*name); "
                           "refused.")
                    raise error(msg)
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    msg = f"{source}: is nested deeper than {MAX_DEPTH} levels; refused."
                    raise error(msg)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                seen: set[Any] = set()
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue
                    key = self.construct_object(key_node, deep=True)
                    try:
                        duplicate = key in seen
                        seen.add(key)
                    except TypeError:  # an unhashable key: the base class says so
                        continue
                    if duplicate:
                        line = key_node.start_mark.line + 1
                        msg = (f"{source}: key {printable(repr(key), limit=100)} is given twice "
                               f"in one mapping (again at line {line}); give it once.")
                        raise error(msg)
            return super().construct_mapping(node, deep=deep)

    Loader.add_implicit_resolver("tag:yaml.org,2002:float", _YAML12_FLOAT,
                                 list("-+0123456789."))
    return Loader
