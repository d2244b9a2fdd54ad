"""The one exception the RAID parsers raise for input they cannot read.

Pure module: no Django, no I/O. Both ``parse_mdstat.parse`` and ``parse_mdadm.parse`` raise
only ``ParseError``; its message names the line number and quotes the line, so a push API
can answer 400 with it and a collector can show it as the reason for an ``unknown`` status.
``Refused`` is the kind that refuses a whole report whoever it came from: a value that could
not be stored or a text beyond a bound (``bounds.py``); an ``mdadm --detail`` that is only
odd makes its own array unknown instead (``report.py``).
"""

from __future__ import annotations

QUOTED = 200  # characters of the line a message quotes


def quoted(line: str) -> str:
    """The line as a message shows it: ``repr`` (NULs and undecodable bytes escaped), cut."""
    return repr(line) if len(line) <= QUOTED else repr(line[:QUOTED]) + "…"


class ParseError(ValueError):
    """Input that is not a readable /proc/mdstat or ``mdadm --detail`` output."""

    def __init__(self, problem: str, line_number: int, line: str) -> None:
        self.problem = problem
        self.line_number = line_number
        self.line = line
        super().__init__(f"line {line_number}: {problem}: {quoted(line)}")


class Refused(ParseError):
    """Beyond a bound, or a value that could not be stored: the whole report is refused."""
