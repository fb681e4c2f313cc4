"""runtime.switches: ATTENTION_LAB_OFF names the mechanisms a benchmark run turns off; anything else is an error."""

from __future__ import annotations

import pytest

from runtime import switches


def test_unset_means_everything_on(monkeypatch):
    monkeypatch.delenv(switches.VARIABLE, raising=False)
    assert not any(switches.off(name) for name in switches.MECHANISMS)


def test_a_list_turns_off_exactly_its_names(monkeypatch):
    monkeypatch.setenv(switches.VARIABLE, " warmup, html_tables ,,")
    assert {name for name in switches.MECHANISMS if switches.off(name)} == {"warmup", "html_tables"}


def test_an_unknown_name_in_the_variable_is_an_error(monkeypatch):
    monkeypatch.setenv(switches.VARIABLE, "warmup,html_table")  # a typo must not quietly measure everything on
    with pytest.raises(ValueError, match="html_table"):
        switches.off("warmup")


def test_asking_about_an_unknown_mechanism_is_an_error(monkeypatch):
    monkeypatch.delenv(switches.VARIABLE, raising=False)
    with pytest.raises(ValueError, match="spec_caches"):
        switches.off("spec_caches")
