"""Text from files reaches the terminal escaped (neuralop_fem.safe_text): no terminal escape
sequence, carriage return or forged line from a file is written as it is."""

from __future__ import annotations

import json

from neuralop_fem.cli import main
from neuralop_fem.safe_text import clipped_repr, printable, printable_lines


def test_printable_escapes_controls_and_cuts():
    assert printable("a\x1b[2Jb\u202ec\x00") == "a\\x1b[2Jb\\u202ec\\x00"
    assert printable("x" * 30, limit=10) == "x" * 10 + "... (30 characters)"
    assert printable_lines("one\ntwo\r\x9b") == "one\ntwo\\r\\x9b"
    bomb: list = ["lol"] * 10
    for _ in range(8):
        bomb = [bomb] * 10  # 10**9 leaves, shared: repr would expand them all
    assert len(clipped_repr(bomb)) < 400


def test_a_zoo_card_is_shown_escaped(tmp_path, capsys):
    entry = tmp_path / "zoo" / "painted"
    entry.mkdir(parents=True)
    (entry / "card.json").write_text(json.dumps({"name": "painted"}))
    (entry / "card.md").write_text("# painted\n\x1b]0;pwned\x07title\n")
    assert main(["zoo", "--zoo-dir", str(tmp_path / "zoo"), "show", "painted"]) == 0
    out = capsys.readouterr().out
    assert out == "# painted\n\\x1b]0;pwned\\x07title\n"
