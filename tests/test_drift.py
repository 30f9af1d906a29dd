"""The replay check: a committed table that differs from what the code writes is named with its first differing line."""

import subprocess

import pytest

from itmlib.course.drift import first_difference, main, table_drift


def _repo(tmp_path):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)
    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    (tmp_path / "results" / "05").mkdir(parents=True)
    (tmp_path / "results" / "05" / "claims.csv").write_text("id,verdict\nsam,holds\n")
    (tmp_path / "results" / "05" / "claims.md").write_text("| id |\n")
    (tmp_path / "results" / "05" / "05.ipynb").write_text("{}")
    (tmp_path / "README.md").write_text("# course\n")
    git("add", "-A")
    git("commit", "-q", "-m", "tables")
    return tmp_path


def test_first_difference_by_hand():
    assert first_difference("a\nb\nc\n", "a\nb\nc\n") == (0, "", "")
    assert first_difference("a\nb\nc\n", "a\nB\nc\n") == (2, "b", "B")
    assert first_difference("a\nb\n", "a\nb\nc\n") == (3, "", "c")      # a line added at the end
    assert first_difference("a\nb\nc\n", "a\nb\n") == (3, "c", "")      # a line dropped at the end


def test_a_clean_replay_passes_and_a_changed_column_fails(tmp_path, capsys):
    root = _repo(tmp_path)
    assert table_drift(root) == [] and main(["--root", str(root)]) == 0
    (root / "results" / "05" / "05.ipynb").write_text('{"changed": 1}')          # an executed copy is not a table
    assert table_drift(root) == []
    (root / "results" / "05" / "claims.csv").write_text("id,outcome\nsam,holds\n")   # a column renamed by the code
    (root / "results" / "05" / "new.md").write_text("| x |\n")                     # a table the code now writes
    (root / "results" / "05" / "claims.md").unlink()                                # one it no longer writes
    (root / "README.md").write_text("# course, regenerated\n")
    drift = table_drift(root)
    assert [(d.path, d.line) for d in drift] == [("README.md", 1), ("results/05/claims.csv", 1),
                                                 ("results/05/claims.md", 0), ("results/05/new.md", 0)]
    assert drift[1].committed == "id,verdict" and drift[1].written == "id,outcome"
    assert main(["--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert "results/05/claims.csv:1: committed 'id,verdict', written 'id,outcome'" in out
    assert "results/05/new.md: not committed" in out and "results/05/claims.md: no longer written" in out


def test_not_a_repository_is_named(tmp_path):
    with pytest.raises(RuntimeError, match="git status"):
        table_drift(tmp_path / "nowhere")
