"""Quorum arithmetic: the seed table, weights, shrunk clusters and a few properties."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from apps.galera.quorum import (
    FaultTolerance,
    Member,
    describe,
    fault_tolerance,
    fault_tolerance_after,
    fault_tolerance_of,
    member_names,
    with_total_weight,
)


@pytest.mark.parametrize(
    ("data_nodes", "arbitrators", "one_by_one", "simultaneous"),
    [
        (3, 1, 2, 1),  # the seed table: 3 nodes + garbd
        (3, 0, 1, 1),  # the seed table: 3 nodes alone
    ],
)
def test_it_reproduces_the_seed_table(data_nodes, arbitrators, one_by_one, simultaneous):
    assert fault_tolerance(data_nodes, arbitrators) == FaultTolerance(one_by_one, simultaneous)


@pytest.mark.parametrize(
    ("data_nodes", "arbitrators", "expected"),
    [
        (2, 0, FaultTolerance(0, 0)),  # a 3-node cluster that lost one: 1 of 2 is not > 50 %
        (1, 0, FaultTolerance(0, 0)),  # the last node standing
        (1, 1, FaultTolerance(0, 0)),  # node + garbd: losing either leaves 50 %
        (2, 1, FaultTolerance(1, 1)),  # 3 nodes + garbd after one loss
        (0, 1, FaultTolerance(0, 0)),  # garbd alone holds no data
        (0, 0, FaultTolerance(0, 0)),
    ],
)
def test_it_gives_clusters_that_already_shrank_their_remaining_headroom(
    data_nodes, arbitrators, expected
):
    assert fault_tolerance(data_nodes, arbitrators) == expected


@pytest.mark.parametrize(
    ("data_nodes", "arbitrators", "expected"),
    [
        (4, 0, FaultTolerance(2, 1)),  # 2 of 4 at once is exactly 50 %: not enough
        (5, 0, FaultTolerance(3, 2)),
        (4, 1, FaultTolerance(3, 2)),
        (6, 1, FaultTolerance(5, 3)),
    ],
)
def test_it_counts_larger_clusters(data_nodes, arbitrators, expected):
    assert fault_tolerance(data_nodes, arbitrators) == expected


@pytest.mark.parametrize(
    ("data_nodes", "arbitrators", "weights", "expected"),
    [
        # A heavy node1 can take 50 % with it: the worst case is losing it first.
        ({"n": 3}, 0, {"node1": 2}, FaultTolerance(0, 0)),
        # Weight 3 of 5: losing node1 leaves 2 of 5; node2 + node3 at once leave 3 of 5.
        ({"n": 3}, 0, {"node1": 3}, FaultTolerance(0, 0)),
        # A weightless garbd neither helps nor hurts: like 2 nodes alone.
        ({"n": 2}, 1, {"garbd1": 0}, FaultTolerance(0, 0)),
        # A garbd of weight 2 with two nodes: losing the garbd leaves 2 of 4.
        ({"n": 2}, 1, {"garbd1": 2}, FaultTolerance(0, 0)),
        # Weights 2, 2, 1: either heavy node may go first (3 of 5), never both at once.
        ({"n": 3}, 0, {"node1": 2, "node2": 2}, FaultTolerance(1, 1)),
        # A weightless fourth node adds no headroom: like 3 nodes.
        ({"n": 4}, 0, {"node4": 0}, FaultTolerance(1, 1)),
        # Explicit default weights change nothing.
        ({"n": 3}, 1, {"node1": 1, "node2": 1, "node3": 1, "garbd1": 1}, FaultTolerance(2, 1)),
    ],
)
def test_it_takes_the_adversarial_choice_of_weighted_members(
    data_nodes, arbitrators, weights, expected
):
    assert fault_tolerance(data_nodes["n"], arbitrators, weights) == expected


def test_it_accepts_members_with_their_real_names():
    members = [Member("db1:3306", 1), Member("db2:3306", 1), Member("db3:3306", 1)]
    members.append(Member("garbd", 1, arbitrator=True))
    assert fault_tolerance_of(members) == FaultTolerance(2, 1)


def test_it_refuses_weights_for_members_it_does_not_have():
    with pytest.raises(ValueError, match="node4"):
        fault_tolerance(3, 0, {"node4": 2})


def test_it_refuses_negative_counts_and_weights():
    with pytest.raises(ValueError):
        fault_tolerance(-1)
    with pytest.raises(ValueError):
        fault_tolerance(3, 0, {"node1": -1})


def test_it_names_members_nodes_first_then_arbitrators():
    assert member_names(2, 1) == ["node1", "node2", "garbd1"]


@pytest.mark.parametrize(
    ("tolerance", "words"),
    [
        (FaultTolerance(2, 1), "can lose 2 more nodes one at a time, 1 at once"),
        (FaultTolerance(1, 1), "can lose 1 more node one at a time, 1 at once"),
        (FaultTolerance(0, 0), "cannot lose any more nodes: one more failure stops the cluster"),
    ],
)
def test_it_explains_headroom_in_words(tolerance, words):
    assert describe(tolerance) == words
    assert tolerance.words == words


members = st.lists(
    st.tuples(st.integers(min_value=0, max_value=4), st.booleans()), min_size=0, max_size=7
).map(lambda rows: [Member(f"m{i}", w, arbitrator=a) for i, (w, a) in enumerate(rows)])


@given(members)
def test_it_never_survives_more_failures_at_once_than_one_at_a_time(members):
    tolerance = fault_tolerance_of(members)
    assert 0 <= tolerance.simultaneous <= tolerance.one_by_one < max(len(members), 1)


@given(st.integers(min_value=0, max_value=9), st.integers(min_value=0, max_value=3))
def test_it_never_gains_headroom_by_losing_a_data_node(data_nodes, arbitrators):
    bigger = fault_tolerance(data_nodes + 1, arbitrators)
    smaller = fault_tolerance(data_nodes, arbitrators)
    assert smaller.one_by_one <= bigger.one_by_one
    assert smaller.simultaneous <= bigger.simultaneous


@given(st.integers(min_value=1, max_value=12))
def test_it_matches_the_majority_rule_for_equal_nodes(data_nodes):
    # n equal nodes survive k at once while n - k > n / 2, and one at a time down to 2 nodes.
    tolerance = fault_tolerance(data_nodes)
    assert tolerance.simultaneous == (data_nodes - 1) // 2
    assert tolerance.one_by_one == max(0, data_nodes - 2)


def _reference_one_by_one(members: list[Member]) -> int:
    """The rule itself, tried the slow way: at each step every member may be the one that
    fails, and the worst choice counts (exponential: for small clusters only)."""
    if not any(not m.arbitrator for m in members):
        return 0
    total = sum(m.weight for m in members)
    outcomes = []
    for index in range(len(members)):
        survivors = members[:index] + members[index + 1 :]
        if 2 * sum(m.weight for m in survivors) > total and any(
            not m.arbitrator for m in survivors
        ):
            outcomes.append(1 + _reference_one_by_one(survivors))
        else:
            outcomes.append(0)
    return min(outcomes)


@given(
    st.lists(st.tuples(st.integers(0, 5), st.booleans()), min_size=0, max_size=7).map(
        lambda rows: [Member(f"m{i}", w, arbitrator=a) for i, (w, a) in enumerate(rows)]
    )
)
def test_the_closed_form_agrees_with_trying_every_order_of_failures(members):
    assert fault_tolerance_of(members).one_by_one == _reference_one_by_one(members)


def test_it_answers_for_any_number_of_members_without_recursion_or_a_search():
    members = [Member(f"n{i}") for i in range(20_000)]
    members += [Member(f"w{i}", weight=i % 256) for i in range(5_000)]
    members += [Member(f"g{i}", arbitrator=True) for i in range(5_000)]
    tolerance = fault_tolerance_of(members)  # recursed past the limit, or ran for hours
    assert tolerance.one_by_one > 0 and tolerance.simultaneous > 0
    assert fault_tolerance(100_000).one_by_one == 99_998


def test_members_already_lost_fail_first_and_the_rest_is_the_headroom():
    members = [Member("node1"), Member("node2"), Member("node3"), Member("garbd1", arbitrator=True)]
    assert fault_tolerance_after(members, []) == fault_tolerance_of(members)
    assert fault_tolerance_after(members, ["node3"]) == fault_tolerance_of(
        members[:2] + members[3:]
    )
    assert fault_tolerance_after(members, ["node2", "node3"]) == FaultTolerance(0, 0)  # half
    heavy = [Member("node1", 3), Member("node2"), Member("node3")]
    assert fault_tolerance_after(heavy, ["node1"]) == FaultTolerance(0, 0)  # 3 of 5
    assert fault_tolerance_after(heavy, ["node2"]) == fault_tolerance_of([heavy[0], heavy[2]])


# --- wsrep_cluster_weight: the weights Vigil cannot read ------------------------------------


def polled_and_unknown(*weights: int) -> list[Member]:
    """node1.. with the given weights, then unpolled0 and garbd0 of unknown weight."""
    members = [Member(f"node{i}", w) for i, w in enumerate(weights, 1)]
    return [*members, Member("unpolled0"), Member("garbd0", arbitrator=True)]


def test_weights_that_add_up_to_one_each_keep_the_default():
    weighted = with_total_weight(polled_and_unknown(1, 1), ["unpolled0", "garbd0"], 4)
    assert [m.weight for m in weighted.members] == [1, 1, 1, 1]
    assert not weighted.worst_case and weighted.unknown_weight == 2


def test_a_total_that_is_not_one_each_gives_all_the_unknown_weight_to_one_member():
    weighted = with_total_weight(polled_and_unknown(1, 1), ["unpolled0", "garbd0"], 6)
    assert [(m.name, m.weight) for m in weighted.members] == [
        ("node1", 1),
        ("node2", 1),
        ("unpolled0", 4),
        ("garbd0", 0),
    ]
    assert weighted.worst_case
    assert fault_tolerance_of(weighted.members) == FaultTolerance(0, 0)


@given(
    known=st.lists(st.integers(0, 255), min_size=1, max_size=5),
    split=st.lists(st.integers(0, 255), min_size=1, max_size=4),
)
def test_the_worst_split_is_never_more_hopeful_than_the_real_one(known, split):
    # Unknown weights that add up to one each are taken as the default (1 each), as Galera's
    # default and Vigil before wsrep_cluster_weight: the worst case is for any other total.
    assume(sum(split) != len(split))
    members = [Member(f"node{i}", w) for i, w in enumerate(known)]
    unknown = [Member(f"unpolled{i}", w) for i, w in enumerate(split)]
    names = [m.name for m in unknown]
    real = fault_tolerance_of([*members, *unknown])
    worst = fault_tolerance_of(
        with_total_weight([*members, *unknown], names, sum(known) + sum(split)).members
    )
    assert worst.one_by_one <= real.one_by_one
    assert worst.simultaneous <= real.simultaneous


def test_a_garbd_of_weight_zero_is_counted_as_such():
    weighted = with_total_weight(
        polled_and_unknown(1, 1, 1)[:3] + [Member("garbd0", arbitrator=True)], ["garbd0"], 3
    )
    assert [m.weight for m in weighted.members] == [1, 1, 1, 0]
    assert fault_tolerance_of(weighted.members) == fault_tolerance(3)


def test_a_total_below_the_known_weights_is_not_used():
    weighted = with_total_weight(polled_and_unknown(3, 1), ["unpolled0", "garbd0"], 2)
    assert weighted.inconsistent
    assert [m.weight for m in weighted.members] == [3, 1, 1, 1]
    assert with_total_weight(polled_and_unknown(1), [], 9).members == tuple(polled_and_unknown(1))
    assert not with_total_weight(polled_and_unknown(1), ["garbd0"], None).worst_case
