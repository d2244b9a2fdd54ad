"""Reports a hostile or unusual host could send: long chains, wide arrays, many domains."""

from __future__ import annotations


def mdstat(*arrays: str) -> str:
    return (
        "Personalities : [raid0] [raid1] [raid10]\n" + "".join(arrays) + "unused devices: <none>\n"
    )


def mirror(name: str, *members: str) -> str:
    listed = " ".join(f"{m}[{i}]" for i, m in enumerate(members))
    n = len(members)
    return f"{name} : active raid1 {listed}\n      1024 blocks super 1.2 [{n}/{n}] [{'U' * n}]\n"


def nested_mirrors(depth: int) -> str:
    """md0 over md1 over ... md<depth-1>: each a mirror of the next one and a disk."""
    arrays = []
    for level in range(depth):
        inner = f"md{level + 1}" if level + 1 < depth else "sda"
        arrays.append(mirror(f"md{level}", inner, f"sd{level}x"))
    return mdstat(*arrays)


def raid10(name: str, disks: int, copies: str = "2 near-copies", prefix: str = "d") -> str:
    listed = " ".join(f"{prefix}{i}[{i}]" for i in range(disks))
    return (
        f"{name} : active raid10 {listed}\n"
        f"      {disks * 1024} blocks super 1.2 512K chunks {copies} [{disks}/{disks}] "
        f"[{'U' * disks}]\n"
    )


def many_domains(mirrors: int, servers: int) -> tuple[str, dict[str, str]]:
    """A RAID-0 over ``mirrors`` 2-way mirrors whose disks are spread over ``servers``
    failure domains, several disks each: the domain search must try sets of servers."""
    members = " ".join(f"md{i}[{i - 1}]" for i in range(1, mirrors + 1))
    arrays = [
        f"md0 : active raid0 {members}\n      {mirrors * 1024} blocks super 1.2 512k chunks\n"
    ]
    rules = {}
    for i in range(1, mirrors + 1):
        a, b = f"disk{i}a", f"disk{i}b"
        rules[a] = f"server-{(2 * i) % servers}"
        rules[b] = f"server-{(2 * i + 1) % servers}"
        arrays.append(mirror(f"md{i}", a, b))
    return mdstat(*arrays), rules


def many_domains_three_way(mirrors: int, servers: int) -> tuple[str, dict[str, str]]:
    """As ``many_domains`` with three-way mirrors: any two servers may fail, so every pair
    (and then triples) of servers is tried before the answer is known."""
    members = " ".join(f"md{i}[{i - 1}]" for i in range(1, mirrors + 1))
    arrays = [
        f"md0 : active raid0 {members}\n      {mirrors * 1024} blocks super 1.2 512k chunks\n"
    ]
    rules = {}
    for i in range(1, mirrors + 1):
        disks = [f"disk{i}{side}" for side in "abc"]
        for k, disk in enumerate(disks):
            rules[disk] = f"server-{(3 * i + k) % servers}"
        arrays.append(mirror(f"md{i}", *disks))
    return mdstat(*arrays), rules
