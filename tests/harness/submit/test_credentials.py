"""Where ``pit-harness submit`` finds its token: the environment, else a file only its
owner may read; never the command line (tests/harness/cli/test_submit_cli.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.submit.credentials import TokenError, find_token
from tests.support.submit import token_in_file

TOKEN = "pit_" + "a1" * 20


def test_the_environment_token_comes_before_the_file(tmp_path: Path) -> None:
    token_in_file(tmp_path, "pit_from_the_file")
    assert find_token({"PITWEB_TOKEN": TOKEN}, tmp_path) == TOKEN
    assert find_token({"PITWEB_TOKEN": "  "}, tmp_path) == "pit_from_the_file"
    assert find_token({}, tmp_path) == "pit_from_the_file"


def test_the_token_file_follows_xdg_config_home(tmp_path: Path) -> None:
    token_in_file(tmp_path, "pit_not_this_one")  # ~/.config is not read then
    config = tmp_path / "elsewhere"
    path = config / "pitweb" / "token"
    path.parent.mkdir(parents=True)
    path.write_text(TOKEN + "\nsecond line ignored\n")
    path.chmod(0o600)
    assert find_token({"XDG_CONFIG_HOME": str(config)}, tmp_path) == TOKEN
    # a relative XDG_CONFIG_HOME is ignored, as the base directory rule says
    assert find_token({"XDG_CONFIG_HOME": "elsewhere"}, tmp_path) == "pit_not_this_one"


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o620])
def test_a_token_file_others_may_use_is_refused_as_ssh_refuses_a_key(
    tmp_path: Path, mode: int
) -> None:
    path = token_in_file(tmp_path, TOKEN, mode)
    with pytest.raises(TokenError) as refused:
        find_token({}, tmp_path)
    said = str(refused.value)
    assert f"accessible by others (permissions {mode:04o})" in said
    assert f"chmod 600 {path}" in said and TOKEN not in said


def test_a_token_file_that_is_not_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".config" / "pitweb" / "token").mkdir(parents=True)
    with pytest.raises(TokenError, match="not a regular file"):
        find_token({}, tmp_path)


def test_an_empty_token_file_is_refused(tmp_path: Path) -> None:
    token_in_file(tmp_path, "")
    with pytest.raises(TokenError, match="is empty"):
        find_token({}, tmp_path)


def test_a_token_file_that_is_not_text_is_refused(tmp_path: Path) -> None:
    token_in_file(tmp_path, "").write_bytes(b"\xff\xfepit_x\n")
    with pytest.raises(TokenError, match="is not text"):
        find_token({}, tmp_path)


@pytest.mark.parametrize("token", ["pit_a b", "pit_x\x1b[2J", "pit_\u00e9"])
def test_a_token_that_cannot_be_one_is_refused(tmp_path: Path, token: str) -> None:
    with pytest.raises(TokenError, match="a space or a character no token has"):
        find_token({"PITWEB_TOKEN": token}, tmp_path)


def test_no_token_says_where_one_is_looked_for(tmp_path: Path) -> None:
    with pytest.raises(TokenError) as refused:
        find_token({}, tmp_path)
    assert "PITWEB_TOKEN" in str(refused.value)
    assert str(tmp_path / ".config" / "pitweb" / "token") in str(refused.value)
    assert "never taken from the command line" in str(refused.value)
