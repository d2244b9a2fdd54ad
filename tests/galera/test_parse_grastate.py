"""A stopped node's grastate.dat and recovered position, as the push agent sends them."""

from __future__ import annotations

import pytest

from apps.galera.parse_grastate import Grastate, looks_like_grastate, parse_grastate
from apps.galera.parse_wsrep import ParseError

UUID = "b9f2a2b4-ffde-11ef-bcd1-a3710702a9fb"
CLEAN = f"""# GALERA saved state
version: 2.1
uuid:    {UUID}
seqno:   8204503945773
safe_to_bootstrap: 1
"""
CRASHED = f"""# GALERA saved state
version: 2.1
uuid:    {UUID}
seqno:   -1
safe_to_bootstrap: 0
"""


def test_it_reads_a_clean_stop():
    assert parse_grastate(CLEAN) == Grastate(UUID, 8204503945773, True)
    assert looks_like_grastate(CLEAN)
    assert not looks_like_grastate("wsrep_cluster_status\tPrimary\n")


@pytest.mark.parametrize(
    ("by", "line", "seqno"),
    [
        ("galera_recovery", f"--wsrep_start_position={UUID}:1234", 1234),
        (
            "mysqld --wsrep-recover",
            f"2026-11-26 10:01:02 0 [Note] WSREP: Recovered position: {UUID}:77",
            77,
        ),
        ("galera_recovery", f"--wsrep_start_position={UUID}:-1", None),
    ],
)
def test_it_reads_the_recovered_position_and_how_it_was_found(by, line, seqno):
    text = CRASHED + f"vigil_recovered_by: {by}\nvigil_recovered: {line}\n"
    state = parse_grastate(text)
    assert (state.seqno, state.recovered_seqno, state.recovered_by) == (-1, seqno, by)
    assert state.safe_to_bootstrap is False


def test_an_old_grastate_without_the_flag_is_read():
    text = f"# GALERA saved state\nversion: 2.1\nuuid: {UUID}\nseqno: 5\ncert_index:\n"
    assert parse_grastate(text).safe_to_bootstrap is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (CLEAN.replace("seqno:   8204503945773", "seqno: 99999999999999999999"), "seqno"),
        (CLEAN.replace("seqno:   8204503945773", "seqno: -2"), "seqno"),
        (CLEAN.replace(UUID, "not-a-uuid"), "uuid"),
        (CLEAN.replace("safe_to_bootstrap: 1", "safe_to_bootstrap: yes"), "safe_to_bootstrap"),
        (CLEAN + "password: hunter2\n", "unknown field"),
        (CLEAN + "seqno: 3\n", "given twice"),
        (CRASHED + "vigil_recovered_by: rm -rf /\n", "vigil_recovered_by"),
        (CRASHED + f"vigil_recovered: --wsrep_start_position={UUID}:3\n", "needs"),
        (CRASHED + "vigil_recovered_by: galera_recovery\nvigil_recovered: nothing\n", "no '"),
        ("# GALERA saved state\nversion: 2.1\n", "needs uuid and seqno"),
        (CLEAN + "#\n" * 50, "lines"),
        (CLEAN + "# " + "x" * 5000, "characters"),
        (CLEAN + "bogus line\n", "not 'name: value'"),
        (CLEAN.replace("version", "ver\x00sion"), "NUL"),
    ],
)
def test_it_refuses_what_is_not_a_grastate(text, message):
    with pytest.raises(ParseError, match=message):
        parse_grastate(text)
