"""The config schema on its own (no database): paths, hints, and no crash on any document."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alerts.config_schema import ConfigError, validate_document

KEYS = ["teams", "owners", "metrics", "apps", "budgets", "name", "members", "channels", "type", "url",
        "secret", "to", "ci", "code_host", "repo", "metric", "team", "max_bytes", "app", "webhook", "email", "x"]
leaf = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | st.sampled_from(KEYS)
documents = st.recursive(
    leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(documents)
def test_it_answers_any_document_with_a_config_or_a_list_of_paths(doc):
    try:
        validate_document(doc)
    except ConfigError as exc:
        assert exc.errors
        assert all(isinstance(path, str) and isinstance(msg, str) and msg for path, msg in exc.errors)


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=30).filter(lambda s: s.strip()))
def test_it_never_echoes_a_secret_in_a_message(secret):
    doc = {"apps": [{"name": "a b", "ci": {"url": secret, "secret": secret, "bogus": secret}}],
           "teams": [{"name": "t", "channels": [{"type": "webhook", "url": "x", "secret": [secret]}]}]}
    with pytest.raises(ConfigError) as exc:
        validate_document(doc)
    assert all(secret not in msg for _, msg in exc.value.errors if len(secret) > 3)


@pytest.mark.parametrize(("doc", "path", "message"), [
    ({"teams": [{"name": "t", "channels": [{"type": "webhook", "url": "https://h.example", "secert": "s"}]}]},
     "teams[0].channels[0].secert", "unknown key; did you mean 'secret'?"),
    ({"teams": [{"name": "t", "channels": [{"url": "https://h.example"}]}]},
     "teams[0].channels[0].type", "must be one of webhook, slack, email"),
    ({"apps": [{"name": "a", "code_host": {"type": "github", "repo": "o/n", "tokenenv": "X"}}]},
     "apps[0].code_host.tokenenv", "unknown key; did you mean 'token_env'?"),
    ({"budgets": [{"metric": "size.*", "max_bytes": 1, "team": "t", "owner": "x"}]},
     "budgets[0].owner", "unknown key; allowed: app, platform, metric, max_bytes, team"),
    ({"teams": None}, "teams", "must be a list: write [] to empty it, or leave the key out to keep what is stored"),
    ({"teams": [{"name": "t", "members": None}]}, "teams[0].members",
     "must be a list: write [] to empty it, or leave the key out to keep what is stored"),
    ({"teams": [{"name": "t"}, {"name": "t"}]}, "teams", "team 't' is listed twice"),
    ({"apps": [{"name": "a"}, {"name": "a"}]}, "apps", "app 'a' is listed twice"),
    ({"teams": [{"name": "t", "channels": [{"type": "email", "to": ["b@x.io", "a@x.io"]},
                                           {"type": "email", "to": ["a@x.io", "b@x.io"]}]}]},
     "teams[0].channels", "channel 'email a@x.io,b@x.io' is listed twice"),
    ({"metrics": [{"metric": "m", "sensitivity": float("nan")}]}, "metrics[0].sensitivity", "Input should be a finite number"),
    ({"metrics": [{"metric": "m", "min_change": 20}]}, "metrics[0].min_change", "Input should be less than 10"),
    ({"metrics": [{"metric": "m", "min_change": True}]}, "metrics[0].min_change", "Input should be a valid number"),
    ({"teams": [{"name": "t", "channels": ["slack"]}]}, "teams[0].channels[0]", "must be a mapping"),
    ({"teams": [{"name": "t", "channels": [{"type": "slack", "url": "https://h.example/" + "x" * 300}]}]},
     "teams[0].channels[0].url", "must be at most 300 characters"),
    ({"teams": [{"name": "t", "channels": [{"type": "email", "to": [f"user{i}@example.com" for i in range(30)]}]}]},
     "teams[0].channels[0].to", "too many recipients: together at most 300 characters; use a mailing list"),
])
def test_it_names_the_path_and_the_problem(doc, path, message):
    with pytest.raises(ConfigError) as exc:
        validate_document(doc)
    assert (path, message) in exc.value.errors


def test_it_reads_an_empty_file_as_changing_nothing():
    config = validate_document(None)
    assert (config.teams, config.owners, config.metrics, config.apps, config.budgets) == (None,) * 5
