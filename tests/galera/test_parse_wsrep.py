"""The wsrep status parser against every published sample, in all three text forms."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.galera.parse_wsrep import (
    FACTS,
    Delayed,
    ParseError,
    WsrepStatus,
    parse_duration,
    parse_provider_options,
    parse_status,
)
from tests.helpers import SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES / "wsrep"
SAMPLES = sorted(FIXTURES.glob("*.txt"))


def expected(sample: Path) -> dict:
    return json.loads(sample.with_suffix(".expected.json").read_text())["expected"]


def typed(facts: dict) -> dict:
    """Facts with their value types, so 0 and 0.0 do not pass for each other."""
    return {key: (type(value).__name__, value) for key, value in facts.items()}


def test_the_fixture_folder_holds_the_samples():
    assert len(SAMPLES) >= 10


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_it_reads_the_facts_of_every_published_sample(sample):
    status = parse_status(sample.read_text())
    assert typed(status.facts) == typed(expected(sample)["facts"])
    assert status.as_facts() == status.facts


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_it_reports_the_shape_of_every_published_sample(sample):
    status = parse_status(sample.read_text())
    shape = expected(sample)
    assert status.format == shape["format"]
    assert status.elided == shape["elided"]
    assert status.variable_rows == shape["variable_rows"]
    assert status.wsrep_rows == shape["wsrep_rows"]
    assert status.rows_in_set_footer == shape["rows_in_set_footer"]
    assert dict(status.variables) == {k.lower(): v for k, v in shape["wsrep_variables"].items()}


def as_tab_separated(variables: dict) -> str:
    return "Variable_name\tValue\n" + "".join(f"{k}\t{v}\n" for k, v in variables.items())


def as_vertical(variables: dict) -> str:
    blocks = [
        f"*************************** {i}. row ***************************\n"
        f"Variable_name: {name}\n        Value: {value}\n"
        for i, (name, value) in enumerate(variables.items(), 1)
    ]
    return "".join(blocks) + f"{len(variables)} rows in set (0.00 sec)\n"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_it_reads_the_same_facts_from_tab_separated_and_vertical_forms(sample):
    shape = expected(sample)
    variables = shape["wsrep_variables"]
    tabbed = parse_status(as_tab_separated(variables))
    vertical = parse_status(as_vertical(variables))
    assert tabbed.format == "tab-separated"
    assert vertical.format == "vertical"
    assert typed(tabbed.facts) == typed(vertical.facts) == typed(shape["facts"])


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_it_reads_the_same_facts_from_live_rows(sample):
    shape = expected(sample)
    status = WsrepStatus.from_rows(shape["wsrep_variables"].items())
    assert typed(status.facts) == typed(shape["facts"])
    assert status == parse_status(sample.read_text())


def test_it_reads_upper_case_variable_names():
    status = parse_status("WSREP_CLUSTER_SIZE\t3\nWSREP_CLUSTER_STATUS\tPrimary\nWsrep_Ready\tON\n")
    assert (status.cluster_size, status.cluster_status, status.ready) == (3, "Primary", "ON")
    assert status.is_primary
    assert status.is_ready


def test_it_skips_prompts_headers_and_footers():
    text = (
        "MariaDB [(none)]> SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size';\n"
        "+--------------------+-------+\n"
        "| Variable_name      | Value |\n"
        "+--------------------+-------+\n"
        "| wsrep_cluster_size | 2     |\n"
        "+--------------------+-------+\n"
        "1 row in set (0.001 sec)\n"
    )
    status = parse_status(text)
    assert status.cluster_size == 2
    assert status.rows_in_set_footer == 1


def test_it_reads_an_empty_set_as_a_node_without_wsrep_variables():
    status = parse_status("mysql> SHOW STATUS LIKE 'wsrep%';\nEmpty set (0.00 sec)\n")
    assert status.wsrep_rows == 0
    assert not status.is_galera
    assert status.facts == dict.fromkeys(status.facts)


def test_it_tells_a_server_without_a_provider_from_a_galera_node():
    no_cluster = FIXTURES / "mariadb-kb-show-global-status-no-cluster.txt"
    synced = FIXTURES / "netdata-mariadb-10.8.4-galera-full-global-status.txt"
    assert not parse_status(no_cluster.read_text()).is_galera
    assert parse_status(synced.read_text()).is_galera


def test_it_keeps_non_primary_spellings_as_published_but_not_primary():
    sample = FIXTURES / "codership-non-primary-underscore.txt"
    status = parse_status(sample.read_text())
    assert status.cluster_status == "Non_primary"
    assert not status.is_primary


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("| wsrep_cluster_size | 3 |\nthis is not a row\n", "line 2"),
        ("+---+---+\n| wsrep_cluster_size | 3\n", "line 2"),
        ("wsrep_cluster_size\tthree\n", "line 1"),
        ("\n\n| wsrep_local_state | Synced? |\n", "line 3"),
        ("Variable_name: wsrep_ready\n\nValue: ON\n", "line 1"),
        ("Value: ON\n", "line 1"),
        ("| wsrep cluster size | 3 |\n", "line 1"),
        ("| wsrep_ready | ON |\nwsrep_connected\tON\n", "line 2"),
    ],
)
def test_it_raises_one_parse_error_naming_the_line(text, line):
    with pytest.raises(ParseError, match=line):
        parse_status(text)


def test_it_names_the_row_of_unreadable_live_rows():
    with pytest.raises(ParseError, match="row 2"):
        WsrepStatus.from_rows([("wsrep_ready", "ON"), ("wsrep_cluster_size", "many")])


SAMPLE_TEXTS = [sample.read_text() for sample in SAMPLES if sample.stat().st_size < 6000]


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(SAMPLE_TEXTS))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        noise = draw(st.text(alphabet="|+-.\t\n :abc019_*PTS\u00a0", max_size=6))
        if action == "insert":
            text = text[:at] + noise + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + len(noise) :]
        else:
            text = text[:at] + noise + text[at + len(noise) :]
    return text


@given(mutated())
def test_it_raises_only_parse_errors_on_mutated_samples(text):
    try:
        status = parse_status(text)
    except ParseError as error:
        assert "line" in str(error)
    else:
        assert isinstance(status.facts, dict)


@pytest.mark.slow  # over 1 s of CPU alone (docs/testing.md)
@given(st.text(max_size=200))
def test_it_raises_only_parse_errors_on_any_text(text):
    with contextlib.suppress(ParseError):
        parse_status(text)


# Copied from a node started by tests/services/galera.py (MariaDB 10.11.19, Galera 26.4),
# whose evs timeouts are lowered; the rest are the defaults.
PROVIDER_OPTIONS = (
    "base_dir = /tmp/vigil-galera-4ywzd8l2/node1/; base_host = 127.0.0.1; base_port = 14561; "
    "cert.log_conflicts = no; cert.optimistic_pa = yes; debug = no; evs.auto_evict = 0; "
    "evs.causal_keepalive_period = PT0.5S; evs.debug_log_mask = 0x1; "
    "evs.delay_margin = PT1S; evs.delayed_keep_period = PT30S; "
    "evs.inactive_check_period = PT0.5S; evs.inactive_timeout = PT3S; evs.info_log_mask = 0; "
    "evs.install_timeout = PT3S; evs.join_retrans_period = PT1S; "
    "evs.keepalive_period = PT0.5S; evs.max_install_timeouts = 3; evs.send_window = 4; "
    "evs.stats_report_period = PT1M; evs.suspect_timeout = PT2S; evs.use_aggregate = true; "
    "evs.user_send_window = 2; evs.version = 1; evs.view_forget_timeout = P1D; "
    "gcache.dir = /tmp/vigil-galera-4ywzd8l2/node1/; gcache.keep_pages_size = 0; "
    "gcache.mem_size = 0; gcache.name = galera.cache; gcache.page_size = 128M; "
    "gcache.recover = yes; gcache.size = 16M; gcomm.thread_prio = ; gcs.fc_debug = 0; "
    "gcs.fc_factor = 1.0; gcs.fc_limit = 16; gcs.fc_master_slave = no; "
    "gcs.fc_single_primary = no; gcs.max_packet_size = 64500; gcs.max_throttle = 0.25; "
    "gcs.recv_q_hard_limit = 9223372036854775807; gcs.recv_q_soft_limit = 0.25; "
    "gcs.sync_donor = no; gmcast.listen_addr = tcp://127.0.0.1:14561; gmcast.mcast_addr = ; "
    "gmcast.mcast_ttl = 1; gmcast.peer_timeout = PT3S; gmcast.segment = 0; "
    "gmcast.time_wait = PT5S; gmcast.version = 0; ist.recv_addr = 127.0.0.1:14571; "
    "pc.announce_timeout = PT3S; pc.checksum = false; pc.ignore_quorum = false; "
    "pc.ignore_sb = false; pc.linger = PT20S; pc.npvo = false; pc.recovery = true; "
    "pc.version = 0; pc.wait_prim = true; pc.wait_prim_timeout = PT5S; pc.weight = 1; "
    "protonet.backend = asio; protonet.version = 0; repl.causal_read_timeout = PT30S; "
    "repl.commit_order = 3; repl.key_format = FLAT8; repl.max_ws_size = 2147483647; "
    "repl.proto_max = 11; socket.checksum = 2; socket.recv_buf_size = auto; "
    "socket.send_buf_size = auto; "
)


def test_it_reads_weight_and_suspect_timeout_from_provider_options():
    options = parse_provider_options(PROVIDER_OPTIONS)
    assert options.pc_weight == 1
    assert options.evs_suspect_timeout == 2.0
    assert options.options["gcache.size"] == "16M"
    assert options.options["gmcast.mcast_addr"] == ""
    assert options.options["evs.view_forget_timeout"] == "P1D"


def test_it_reads_empty_provider_options_as_unknown():
    options = parse_provider_options("")
    assert (options.pc_weight, options.evs_suspect_timeout) == (None, None)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("PT5S", 5.0), ("PT1.5S", 1.5), ("PT1M30S", 90.0), ("P1D", 86400.0), ("PT2H", 7200.0)]
    + [("3", 3.0), ("pt10s", 10.0)],
)
def test_it_reads_iso_8601_durations_as_seconds(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["PT", "P", "5 seconds", "PTS", "-1", "nan"])
def test_it_refuses_durations_it_cannot_read(text):
    with pytest.raises(ParseError):
        parse_duration(text)


@pytest.mark.parametrize(
    "text", ["pc.weight", "pc.weight = heavy", "evs.suspect_timeout = soon", "= 1"]
)
def test_it_raises_a_parse_error_for_unreadable_provider_options(text):
    with pytest.raises(ParseError):
        parse_provider_options(text)


# --- figures no node can have ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("wsrep_cluster_size", "1000000000", "wsrep_cluster_size is not a cluster size (0..256)"),
        ("wsrep_cluster_size", "-1", "wsrep_cluster_size is not a cluster size"),
        ("wsrep_flow_control_paused", "nan", "wsrep_flow_control_paused is not a number"),
        ("wsrep_flow_control_paused", "NaN", "wsrep_flow_control_paused is not a number"),
        ("wsrep_local_send_queue_avg", "Infinity", "wsrep_local_send_queue_avg is not a number"),
        ("wsrep_local_send_queue_avg", "9e999", "is not a queue length"),
        ("wsrep_flow_control_sent", "9" * 5000, "wsrep_flow_control_sent is not a number"),
        ("wsrep_last_committed", "-2", "wsrep_last_committed is not a seqno (-1.."),
        ("wsrep_local_state", "٣", "wsrep_local_state is not a number"),  # Arabic-Indic 3
        ("wsrep_cluster_status", "Prim\x00ary", "wsrep_cluster_status holds a NUL character"),
        ("wsrep_cluster_status", "P\udcffrimary", "holds bytes that are not UTF-8 text"),
        ("wsrep_provider_version", "x" * 20000, "wsrep_provider_version is longer than 16384"),
        ("wsrep_flow_control_paused_ns", "-5", "wsrep_flow_control_paused_ns is not a count of"),
        ("wsrep_flow_control_paused_ns", "1.5e9", "wsrep_flow_control_paused_ns is not a number"),
        ("wsrep_local_recv_queue", "2147483648", "wsrep_local_recv_queue is not a queue length"),
        ("wsrep_local_send_queue", "-1", "wsrep_local_send_queue is not a queue length"),
        ("wsrep_cluster_weight", "65281", "wsrep_cluster_weight is not a total of pc.weight"),
        ("wsrep_gcomm_uuid", "node3", "wsrep_gcomm_uuid is not a UUID"),
        ("wsrep_evs_evict_list", "e4593297,x", "wsrep_evs_evict_list entry 'e4593297' is not a UU"),
        (
            "wsrep_evs_delayed",
            "0412e952-e95f-11f1-b90d-9a111696e073:tcp://127.0.0.1:14663:many",
            "wsrep_evs_delayed entry '0412e952-e95f-11f1-b90d-9a111696e073:tcp://127.0.0.1:14663:many'",
        ),
        ("wsrep_evs_delayed", "node3:tcp://127.0.0.1:14663:1", "does not start with a UUID"),
        (
            "wsrep_evs_delayed",
            ",".join(["0412e952-e95f-11f1-b90d-9a111696e073::1"] * 257),
            "wsrep_evs_delayed lists more than 256 members",
        ),
    ],
)
def test_it_refuses_a_figure_no_node_can_have_naming_it(name, value, error):
    with pytest.raises(ParseError, match=error[:40].replace("(", r"\(").replace(".", r"\.")):
        WsrepStatus.from_rows([("wsrep_ready", "ON"), (name, value)])
    table = f"| {name} | {value} |\n" if "\n" not in value and "|" not in value else ""
    if table and "\x00" not in value:
        with pytest.raises(ParseError, match="line 1: "):
            parse_status(table)


def test_it_refuses_more_rows_than_a_node_has():
    rows = [(f"wsrep_x{i}", "1") for i in range(2001)]
    with pytest.raises(ParseError, match="more than 2000 status rows"):
        WsrepStatus.from_rows(rows)


def test_a_variable_name_with_a_trailing_newline_is_not_a_name():
    with pytest.raises(ParseError, match="not a status variable row"):
        WsrepStatus.from_rows([("wsrep_ready\n", "ON")])


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("pc.weight = 256", "pc.weight is not an integer 0..255"),
        ("pc.weight = -1", "pc.weight is not an integer 0..255"),
        ("pc.weight = ９", "pc.weight is not an integer 0..255"),
        ("evs.suspect_timeout = 1e999", "not a duration"),
        ("evs.suspect_timeout = nan", "not a duration"),
        (
            "evs.suspect_timeout = P99999999999999999999999999999999999999D" + "9" * 400,
            "not a duration",
        ),
    ],
)
def test_it_refuses_provider_options_no_node_can_have(text, error):
    with pytest.raises(ParseError, match=error):
        parse_provider_options(text)


# --- readings beyond the shared facts (fixtures/wsrep/readings) --------------------------------

READINGS = FIXTURES / "readings"


def test_it_reads_the_flow_control_counter_the_queues_now_and_the_weight():
    status = parse_status((READINGS / "mariadb-10.11-flow-control-node3.txt").read_text())
    assert status.format == "tab-separated"
    assert status.flow_control_paused_ns == 1134477417
    assert status.flow_control_paused == 0.122746
    assert status.requests_flow_control
    assert (status.local_recv_queue, status.local_send_queue) == (34, 0)
    assert (status.cluster_weight, status.desync_count) == (4, 1)
    assert status.gcomm_uuid is not None and status.evs_delayed == () == status.evs_evict_list
    assert status.facts.keys() == set(FACTS)  # the shared fixtures' shape, unchanged


def test_it_reads_a_delayed_member_and_an_eviction_list():
    delayed = parse_status((READINGS / "mariadb-10.11-delayed-node1.txt").read_text())
    assert delayed.evs_delayed == (
        Delayed("0412e952-e95f-11f1-b90d-9a111696e073", "tcp://127.0.0.1:14663", 3),
    )
    evicted = parse_status((READINGS / "mariadb-10.11-evicted-node1.txt").read_text())
    assert evicted.evs_evict_list == ("e4593297-e95e-11f1-85da-33628d23bf35",)
    options = (READINGS / "mariadb-10.11-delayed-node1.options").read_text()
    assert parse_provider_options(options).evs_auto_evict == 5


def test_a_sample_from_before_the_counters_reads_them_as_missing():
    status = parse_status((FIXTURES / "deimosfr-4node-synced-primary.txt").read_text())
    assert status.flow_control_paused_ns is None and status.cluster_weight is None
    assert (status.local_recv_queue, status.local_send_queue) == (0, 0)  # Galera 23.2 had them
    assert status.evs_delayed is None and status.evs_evict_list is None
