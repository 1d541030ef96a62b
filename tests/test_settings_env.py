"""perfplatform.env: strict parsing of settings from the environment."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from perfplatform.env import env_bool, env_float, env_int, env_list


def test_it_parses_booleans_strictly(monkeypatch):
    monkeypatch.setenv("X", "yes")
    assert env_bool("X") is True
    monkeypatch.setenv("X", "off")
    assert env_bool("X", True) is False
    monkeypatch.setenv("X", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X must be"):
        env_bool("X")


def test_it_parses_numbers_with_bounds(monkeypatch):
    monkeypatch.setenv("N", "12")
    assert env_int("N", 1) == 12
    monkeypatch.setenv("N", "twelve")
    with pytest.raises(ImproperlyConfigured, match="N must be an integer"):
        env_int("N", 1)
    monkeypatch.setenv("N", "0")
    with pytest.raises(ImproperlyConfigured, match="at least 5"):
        env_int("N", 10, minimum=5)
    monkeypatch.setenv("F", "0.5")
    assert env_float("F", 1.0) == 0.5


def test_it_uses_defaults_when_unset(monkeypatch):
    monkeypatch.delenv("UNSET_ONE", raising=False)
    assert env_int("UNSET_ONE", 7) == 7
    assert env_list("UNSET_ONE", ["a"]) == ["a"]
    monkeypatch.setenv("L", "a, b,,c")
    assert env_list("L") == ["a", "b", "c"]
