"""Recovery advice: every node stopped, a partition, a missing position, ties and
contradictions."""

from __future__ import annotations

from apps.galera.recovery import (
    BOOTSTRAP_CLEAN,
    FIND_POSITION,
    PC_BOOTSTRAP,
    SET_SAFE,
    START,
    Position,
    advise,
)

UUID = "5d3f1a2e-6b1c-11ef-9a7b-0242ac120002"
OTHER = "9e8d7c6b-0000-11ef-8888-0242ac120009"


def stopped(name, seqno, safe=False, uuid=UUID, recovered=None, by=""):
    return Position(
        name,
        running=False,
        uuid=uuid,
        seqno=seqno,
        safe_to_bootstrap=safe,
        recovered_seqno=recovered,
        recovered_by=by,
    )


def running(name, committed, component="a", weight=None, primary=False):
    return Position(
        name,
        running=True,
        primary=primary,
        uuid=UUID,
        last_committed=committed,
        component=component,
        component_weight=weight,
    )


def commands(advice):
    return [(step.node, step.command) for step in advice.steps]


def test_it_bootstraps_the_node_that_left_last_after_a_clean_stop():
    advice = advise([stopped("node1", 10), stopped("node2", 12), stopped("node3", 15, safe=True)])
    assert advice.situation == "all_stopped"
    assert advice.chosen == "node3"
    assert commands(advice) == [
        ("node3", BOOTSTRAP_CLEAN),
        ("node1", START),
        ("node2", START),
    ]
    assert advice.warnings == ()


def test_it_sets_safe_to_bootstrap_only_on_the_most_advanced_after_a_crash():
    advice = advise(
        [
            stopped("node1", -1, recovered=40, by="galera_recovery"),
            stopped("node2", -1, recovered=42, by="mysqld --wsrep-recover"),
            stopped("node3", -1, recovered=41, by="galera_recovery"),
        ]
    )
    assert advice.chosen == "node2"
    assert commands(advice)[:2] == [("node2", SET_SAFE), ("node2", BOOTSTRAP_CLEAN)]
    assert [step.node for step in advice.steps if step.command == SET_SAFE] == ["node2"]
    assert "node2: seqno 42 (mysqld --wsrep-recover)" in advice.reasons


def test_it_waits_for_a_crashed_node_whose_position_is_not_recovered():
    advice = advise([stopped("node1", 30), stopped("node2", -1), stopped("node3", 29)])
    assert advice.situation == "waiting"
    assert advice.waiting_for == ("node2",)
    assert advice.summary.startswith("Waiting for node2's position")
    assert commands(advice) == [("node2", FIND_POSITION)]
    assert advice.chosen is None


def test_it_waits_for_a_node_it_has_no_word_from():
    advice = advise([stopped("node1", 30, safe=True), Position("node2"), stopped("node3", 29)])
    assert advice.situation == "waiting"
    assert advice.waiting_for == ("node2",)
    assert "no word from node2, which may still be running" in advice.summary


def test_it_leaves_out_a_node_of_another_cluster_uuid_and_names_it():
    advice = advise(
        [stopped("node1", 30), stopped("node2", 99, uuid=OTHER), stopped("node3", 31, safe=True)]
    )
    assert advice.chosen == "node3"
    assert advice.left_out == ("node2",)
    assert "node2" not in [step.node for step in advice.steps]
    assert any("node2 holds another state uuid" in warning for warning in advice.warnings)


def test_it_takes_the_uuid_vigil_last_saw_over_the_majority():
    advice = advise(
        [stopped("node1", 5, uuid=OTHER), stopped("node2", 6, uuid=OTHER), stopped("node3", 1)],
        cluster_uuid=UUID,
    )
    assert advice.chosen == "node3"
    assert advice.left_out == ("node1", "node2")


def test_it_names_two_nodes_that_both_say_safe_to_bootstrap():
    advice = advise([stopped("node1", 20, safe=True), stopped("node2", 20, safe=True)])
    assert advice.chosen == "node1"
    assert any("all say safe_to_bootstrap: 1" in warning for warning in advice.warnings)
    assert any("same seqno 20" in warning for warning in advice.warnings)


def test_it_follows_the_seqno_over_a_safe_to_bootstrap_flag_that_contradicts_it():
    advice = advise([stopped("node1", 20, safe=True), stopped("node2", 25)])
    assert advice.chosen == "node2"
    assert commands(advice)[0] == ("node2", SET_SAFE)
    assert any("would drop 5 transactions" in warning for warning in advice.warnings)


def test_it_names_a_tie_and_prefers_the_flagged_node():
    advice = advise([stopped("node1", 20), stopped("node2", 20, safe=True)])
    assert advice.chosen == "node2"
    assert commands(advice)[0] == ("node2", BOOTSTRAP_CLEAN)
    assert any("node1 and node2 hold the same seqno 20" in w for w in advice.warnings)


def test_it_cannot_tell_the_cluster_from_two_uuids_held_as_often():
    advice = advise([stopped("node1", 1), stopped("node2", 2, uuid=OTHER)])
    assert advice.situation == "waiting"
    assert advice.chosen is None
    assert "cluster state uuids" in advice.warnings[0]


def test_it_promotes_the_survivor_of_a_partition():
    advice = advise([stopped("node1", 50), stopped("node2", 50), running("node3", 50)])
    assert advice.situation == "partition"
    assert advice.chosen == "node3"
    assert commands(advice) == [("node3", PC_BOOTSTRAP), ("node1", START), ("node2", START)]
    assert advice.loses.startswith("Nothing committed")


def test_it_promotes_the_most_advanced_of_the_heaviest_component_and_says_what_the_other_loses():
    advice = advise(
        [
            running("node1", 70, component="left", weight=2),
            running("node2", 71, component="left", weight=2),
            running("node3", 75, component="right", weight=1),
        ]
    )
    assert advice.chosen == "node2"
    assert "node3 holds 4 transactions past 71" in advice.loses


def test_it_breaks_a_tie_between_components_by_the_most_advanced():
    advice = advise(
        [running("node1", 70, component="left"), running("node2", 72, component="right")]
    )
    assert advice.chosen == "node2"
    assert any("weigh the same" in warning for warning in advice.warnings)


def test_it_waits_in_a_partition_for_a_crashed_node_that_may_be_ahead():
    advice = advise([stopped("node1", -1), running("node2", 60), running("node3", 60)])
    assert advice.situation == "waiting"
    assert advice.waiting_for == ("node1",)


def test_it_has_nothing_to_bootstrap_while_a_node_is_primary():
    advice = advise([running("node1", 9, primary=True), stopped("node2", 8), Position("node3")])
    assert advice.situation == "primary"
    assert commands(advice) == [("node2", START), ("node3", START)]


def test_it_serialises_the_advice():
    data = advise([stopped("node1", 3, safe=True)]).as_dict()
    assert data["chosen"] == "node1"
    assert data["steps"] == [
        {"node": "node1", "command": BOOTSTRAP_CLEAN, "why": data["steps"][0]["why"]}
    ]
