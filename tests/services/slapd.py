"""Debian's OpenLDAP server (slapd) on loopback, with a small directory and TLS of its own.

``Slapd.start()`` makes a CA and a server certificate for 127.0.0.1 with ``openssl``, writes a
``slapd.conf`` (an mdb database in a temporary folder), loads ``DIRECTORY`` with ``slapadd`` and
runs ``slapd -d 0`` as a child process listening on ``ldap://`` (StartTLS offered) and
``ldaps://`` on free loopback ports; ``stop()`` ends it. People sign in with ``pw-<uid>``;
``set_members`` rewrites a group's members with ``ldapmodify`` (ldap-utils), as a directory's
admin would.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.services import free_port, wait_for

SLAPD = "/usr/sbin/slapd"
SUFFIX = "dc=vigil,dc=test"
ROOT_DN = f"cn=admin,{SUFFIX}"
ROOT_PASSWORD = "root-secret"
READER_DN = f"cn=reader,{SUFFIX}"
READER_PASSWORD = "reader-secret"
PEOPLE = f"ou=people,{SUFFIX}"
GROUPS = f"ou=groups,{SUFFIX}"
#: uid -> the groups (cn) it is in at the start.
MEMBERS = {
    "vigil-admins": ["ada"],
    "vigil-oncall": ["otto", "nora"],
    "finance": ["fred"],
}
PEOPLE_UIDS = ("ada", "otto", "nora", "fred")

CONFIG = """include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
pidfile {folder}/slapd.pid
argsfile {folder}/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
TLSCACertificateFile {folder}/ca.pem
TLSCertificateFile {folder}/server.pem
TLSCertificateKeyFile {folder}/server.key
database mdb
maxsize 10485760
suffix "{suffix}"
rootdn "{root_dn}"
rootpw {root_password}
directory {folder}/data
access to attrs=userPassword by self read by anonymous auth by * none
access to * by dn.exact="{reader_dn}" read by self read by * none
"""


def person(uid: str) -> str:
    return f"uid={uid},{PEOPLE}"


def group(cn: str) -> str:
    return f"cn={cn},{GROUPS}"


def directory() -> str:
    entries = [
        f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: vigil\no: Vigil",
        f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people",
        f"dn: {GROUPS}\nobjectClass: organizationalUnit\nou: groups",
        f"dn: {READER_DN}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\n"
        f"cn: reader\nuserPassword: {READER_PASSWORD}",
    ]
    for uid in PEOPLE_UIDS:
        entries.append(
            f"dn: {person(uid)}\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: {uid.title()}\n"
            f"sn: {uid.title()}\ngivenName: {uid.title()}\nmail: {uid}@example.com\n"
            f"userPassword: pw-{uid}"
        )
    for cn, uids in MEMBERS.items():
        members = "\n".join(f"member: {person(uid)}" for uid in uids)
        entries.append(f"dn: {group(cn)}\nobjectClass: groupOfNames\ncn: {cn}\n{members}")
    return "\n\n".join(entries) + "\n"


def make_ca(folder: Path, name: str) -> Path:
    """A CA key and certificate (``<name>.pem``) in ``folder``."""
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", f"/CN={name}", "-keyout", str(folder / f"{name}.key"),
         "-out", str(folder / f"{name}.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    return folder / f"{name}.pem"


def make_server_certificate(folder: Path) -> None:
    """server.key and server.pem for 127.0.0.1, signed by the CA ``ca``."""
    (folder / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    subprocess.run(
        ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
         "-keyout", str(folder / "server.key"), "-out", str(folder / "server.csr")],
        check=True, capture_output=True,
    )  # fmt: skip
    subprocess.run(
        ["openssl", "x509", "-req", "-in", str(folder / "server.csr"), "-days", "2",
         "-CA", str(folder / "ca.pem"), "-CAkey", str(folder / "ca.key"), "-CAcreateserial",
         "-extfile", str(folder / "san.cnf"), "-out", str(folder / "server.pem")],
        check=True, capture_output=True,
    )  # fmt: skip


class Slapd:
    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="vigil-slapd-"))
        self.port = free_port()
        self.tls_port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def uri(self) -> str:
        return f"ldap://127.0.0.1:{self.port}"

    @property
    def ldaps_uri(self) -> str:
        return f"ldaps://127.0.0.1:{self.tls_port}"

    @property
    def ca_file(self) -> str:
        return str(self.folder / "ca.pem")

    def start(self) -> Slapd:
        make_ca(self.folder, "ca")
        make_server_certificate(self.folder)
        (self.folder / "data").mkdir()
        config = self.folder / "slapd.conf"
        config.write_text(
            CONFIG.format(
                folder=self.folder, suffix=SUFFIX, root_dn=ROOT_DN,
                root_password=ROOT_PASSWORD, reader_dn=READER_DN,
            )
        )  # fmt: skip
        (self.folder / "directory.ldif").write_text(directory())
        subprocess.run(
            ["/usr/sbin/slapadd", "-f", str(config), "-l", str(self.folder / "directory.ldif")],
            check=True, capture_output=True,
        )  # fmt: skip
        self.process = subprocess.Popen(
            [SLAPD, "-d", "0", "-f", str(config), "-h", f"{self.uri}/ {self.ldaps_uri}/"],
            stdout=subprocess.DEVNULL,
            stderr=open(self.folder / "slapd.log", "w"),  # noqa: SIM115 (the child keeps it)
        )
        wait_for(self.answers, 20, "slapd to answer")
        return self

    def answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            log = (self.folder / "slapd.log").read_text()
            raise RuntimeError(f"slapd exited {self.process.returncode}: {log[-2000:]}")
        found = subprocess.run(
            ["ldapsearch", "-x", "-H", self.uri, "-D", READER_DN, "-w", READER_PASSWORD,
             "-b", SUFFIX, "-s", "base", "(objectClass=*)", "dn"],
            capture_output=True, text=True,
        )  # fmt: skip
        return found.returncode == 0

    def set_members(self, cn: str, uids: list[str]) -> None:
        """Replace the members of group ``cn`` (groupOfNames needs one: the reader stands in)."""
        members = [person(uid) for uid in uids] or [READER_DN]
        change = f"dn: {group(cn)}\nchangetype: modify\nreplace: member\n" + "".join(
            f"member: {dn}\n" for dn in members
        )
        subprocess.run(
            ["ldapmodify", "-x", "-H", self.uri, "-D", ROOT_DN, "-w", ROOT_PASSWORD],
            input=change, text=True, check=True, capture_output=True,
        )  # fmt: skip

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
