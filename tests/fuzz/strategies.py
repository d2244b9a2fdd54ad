"""Hypothesis strategies for hostile input, and the profile every fuzz test runs under.

``FUZZ`` is deterministic (``derandomize``: the examples follow from the test's name, so CI
sees the same ones every run) and keeps no example database; the example counts keep the
whole suite to a few tens of seconds on two cores.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from apps.galera.parse_wsrep import READ_FACTS
from apps.raid.parse_mdstat import LEVELS
from tests.helpers import SHARED_FIXTURES
from tests.raid.mutations import mutated


def fuzz(max_examples: int) -> settings:
    return settings(
        derandomize=True,
        database=None,
        deadline=None,
        max_examples=max_examples,
        suppress_health_check=list(HealthCheck),
    )


def samples(kind: str) -> list[str]:
    return [p.read_text() for p in sorted((SHARED_FIXTURES / kind).glob("*.txt"))]


# Characters that matter to the parsers, and any other.
NASTY = st.sampled_from(
    [
        *"[]()/:=%._-UF_SWR0123456789 \t\r\n|+*;,#?@",
        "\x00",
        "\xa0",
        "\u2028",
        "é",
        "٣",
        "３",
        "\udcff",
    ]
)
CHARS = st.one_of(NASTY, st.characters())
WILD_TEXT = st.text(CHARS, max_size=40)
BIG = st.one_of(
    st.integers(0, 40),
    st.integers(0, 10**25),
    st.sampled_from([2**31 - 1, 2**31, 2**63 - 1, 2**63]),
).map(str)
NUMBER_TEXT = st.one_of(
    BIG,
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(
        [
            "nan",
            "NaN",
            "inf",
            "-inf",
            "Infinity",
            "1e999",
            "-1",
            "-0",
            "٣",
            "３",
            "",
            " 1 ",
            "0x10",
            "1_000",
            "9" * 5000,
        ]
    ),
)


def encoded(text: str) -> bytes:
    """Text as bytes a host could send (lone surrogates as their raw, invalid UTF-8)."""
    return text.encode("utf-8", "surrogatepass")


# --- /proc/mdstat ----------------------------------------------------------------------------

_NAMES = st.one_of(
    st.sampled_from([f"md{i}" for i in range(8)]), st.text(CHARS, min_size=1, max_size=70)
)
_DEVICES = st.one_of(
    st.sampled_from(["sda", "sdb1", "nvme0n1p2", "dm-3", "loop0"]),
    st.sampled_from([f"md{i}" for i in range(8)]),  # nesting, loops, arrays in two arrays
    st.text(st.characters(blacklist_characters="[] \n\t"), min_size=1, max_size=120),
)


@st.composite
def _array(draw: st.DrawFn) -> str:
    name = draw(_NAMES)
    level = draw(st.one_of(st.sampled_from(sorted(LEVELS)), WILD_TEXT))
    state = draw(st.sampled_from(["active", "inactive", "active (auto-read-only)", "junk"]))
    members = draw(
        st.lists(
            st.tuples(_DEVICES, BIG, st.sampled_from(["", "(F)", "(S)", "(W)(R)", "(X)"])),
            max_size=draw(st.sampled_from([4, 12, 300])),
        )
    )
    head = f"{name} : {state} {level} " + " ".join(f"{d}[{r}]{f}" for d, r, f in members)
    lines = [head]
    if draw(st.booleans()):
        n, m = draw(BIG), draw(BIG)
        status = draw(st.text(st.sampled_from("U_"), max_size=draw(st.sampled_from([4, 300]))))
        copies = draw(
            st.sampled_from(
                [
                    "",
                    "2 near-copies ",
                    "3 offset-copies ",
                    f"{draw(BIG)} far-copies ",
                    "16 near-copies 16 far-copies ",
                ]
            )
        )
        lines.append(f"      {draw(BIG)} blocks super 1.2 512K chunks {copies}[{n}/{m}] [{status}]")
    if draw(st.booleans()):
        lines.append(
            f"      [==>....]  {draw(st.sampled_from(['recovery', 'resync', 'check', 'bogus']))} = "
            f"{draw(NUMBER_TEXT)}% ({draw(BIG)}/{draw(BIG)}) finish={draw(NUMBER_TEXT)}min "
            f"speed={draw(BIG)}K/sec"
        )
    if draw(st.booleans()):
        lines.append(
            f"      bitmap: {draw(BIG)}/{draw(BIG)} pages [{draw(BIG)}KB], {draw(BIG)}KB chunk"
        )
    if draw(st.booleans()):
        lines.append(draw(WILD_TEXT))
    return "\n".join(lines)


@st.composite
def structured_mdstat(draw: st.DrawFn) -> str:
    arrays = draw(st.lists(_array(), max_size=6))
    end = draw(st.sampled_from(["unused devices: <none>", "", draw(WILD_TEXT)]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(["Personalities : [raid1] [raid10] [raid0]", *arrays, end]) + newline


MDSTAT = st.one_of(
    structured_mdstat(),
    mutated(samples("mdstat")),
    st.text(CHARS, max_size=300),
    st.binary(max_size=300).map(lambda b: b.decode("latin-1")),
)
RULES = st.dictionaries(
    st.one_of(st.sampled_from(["sd*", "sd[a-f]", "md*", "*", "[", "**[!a-"]), WILD_TEXT),
    st.one_of(st.sampled_from(["a", "b", "c"]), st.text(CHARS, min_size=1, max_size=250)),
    max_size=8,
)


# --- mdadm --detail -------------------------------------------------------------------------

_DETAIL_KEYS = [
    "Version",
    "Raid Level",
    "Array Size",
    "Raid Devices",
    "State",
    "Layout",
    "Rebuild Status",
    "Events",
    "Name",
    "Unknown Key",
]


@st.composite
def structured_detail(draw: st.DrawFn) -> str:
    lines = [draw(st.sampled_from(["/dev/md0:", "/dev/md/name:", "", draw(WILD_TEXT)]))]
    for key in draw(st.lists(st.sampled_from(_DETAIL_KEYS), max_size=8)):
        value = draw(st.one_of(NUMBER_TEXT, WILD_TEXT, st.just(f"{draw(NUMBER_TEXT)}% complete")))
        lines.append(f"{key:>18} : {value}")
    if draw(st.booleans()):
        lines.append("    Number   Major   Minor   RaidDevice State")
        for _ in range(draw(st.integers(0, 8))):
            cells = [draw(st.one_of(BIG, st.just("-"))) for _ in range(4)]
            state = draw(
                st.one_of(
                    st.sampled_from(["active sync", "spare rebuilding", "removed"]), WILD_TEXT
                )
            )
            device = draw(st.sampled_from(["/dev/sdb", "", "/", draw(WILD_TEXT)]))
            spaces = " " * draw(st.sampled_from([1, 6, 5000]))
            lines.append(f"   {'   '.join(cells)}{spaces}{state}   {device}")
    return "\n".join(lines) + "\n"


DETAIL = st.one_of(
    structured_detail(), mutated(samples("mdadm-detail")), st.text(CHARS, max_size=300)
)


# --- Galera ---------------------------------------------------------------------------------

_WSREP_NAMES = st.one_of(
    st.sampled_from([f"wsrep_{fact}" for fact in READ_FACTS] + ["wsrep_local_cert_failures"]),
    st.text(CHARS, min_size=1, max_size=30),
)
WSREP_VALUES = st.one_of(
    NUMBER_TEXT, WILD_TEXT, st.sampled_from(["Primary", "Synced", "ON", "Galera"])
)
WSREP_ROWS = st.lists(st.tuples(_WSREP_NAMES, WSREP_VALUES), max_size=25)


@st.composite
def wsrep_text(draw: st.DrawFn) -> str:
    rows = draw(WSREP_ROWS)
    form = draw(st.sampled_from(["table", "tabs", "vertical"]))
    if form == "table":
        return "".join(f"| {name} | {value} |\n" for name, value in rows)
    if form == "tabs":
        return "".join(f"{name}\t{value}\n" for name, value in rows)
    return "".join(
        f"*** {i}. row ***\nVariable_name: {name}\n        Value: {value}\n"
        for i, (name, value) in enumerate(rows, 1)
    )


WSREP = st.one_of(wsrep_text(), mutated(samples("wsrep")), st.text(CHARS, max_size=300))
OPTIONS = st.one_of(
    st.lists(
        st.tuples(
            st.sampled_from(["pc.weight", "evs.suspect_timeout", "gcache.size", "", " "]),
            st.one_of(
                NUMBER_TEXT,
                WILD_TEXT,
                st.sampled_from(["PT5S", "P1DT2H", "PT", "P" + "9" * 300 + "D"]),
            ),
        ),
        max_size=6,
    ).map(lambda pairs: "; ".join(f"{k} = {v}" for k, v in pairs)),
    st.text(CHARS, max_size=200),
)


# --- URLs and HTTP responses ----------------------------------------------------------------

_HOST_CHARS = st.sampled_from(
    [
        *"abcxyz019-._%[]:@ ",
        "пример",
        ".рф",
        "ß",
        "。",
        "\u200d",
        "\u0378",
        "ＥＸ",
        "xn--",
        "::1",
        "\x00",
    ]
)
URL = st.one_of(
    st.builds(
        lambda scheme, host, port, path, query: f"{scheme}://{host}{port}/{path}{query}",
        st.sampled_from(["http", "https", "ftp", "HTTP", ""]),
        st.lists(_HOST_CHARS, max_size=12).map("".join),
        st.one_of(st.just(""), BIG.map(lambda p: f":{p}")),
        st.text(CHARS, max_size=30),
        st.one_of(st.just(""), st.text(CHARS, max_size=20).map(lambda q: f"?{q}")),
    ),
    st.text(CHARS, max_size=80),
)


@st.composite
def http_response(draw: st.DrawFn) -> bytes:
    status = draw(
        st.sampled_from(
            [
                b"HTTP/1.1 200 OK",
                b"HTTP/1.0 204",
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK",
                b"HTTP/2 999 X",
                b"HTP/1.1 200",
                b"",
            ]
        )
    )
    headers = draw(
        st.lists(
            st.tuples(
                st.sampled_from(
                    [b"Content-Length", b"Transfer-Encoding", b"Keep-Alive", b"Connection", b"X"]
                ),
                st.one_of(
                    st.binary(max_size=20),
                    BIG.map(str.encode),
                    st.sampled_from(
                        [
                            b"chunked",
                            b"gzip, chunked",
                            b"close",
                            b"timeout=5",
                            b"timeout=" + b"9" * 50,
                            b"-1",
                        ]
                    ),
                ),
            ),
            max_size=6,
        )
    )
    body = draw(
        st.one_of(
            st.binary(max_size=100),
            st.sampled_from(
                [b"5\r\nhello\r\n0\r\n\r\n", b"ff" * 10 + b"\r\n", b"0\r\nX: y\r\n\r\n"]
            ),
        )
    )
    head = status + b"\r\n" + b"".join(name + b": " + value + b"\r\n" for name, value in headers)
    return head + b"\r\n" + body


HTTP = st.one_of(http_response(), st.binary(max_size=200))
