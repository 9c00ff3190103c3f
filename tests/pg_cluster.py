"""A private PostgreSQL cluster for the tests: Debian's ``postgresql`` binaries
(/usr/lib/postgresql/*/bin), ``initdb`` in a temporary folder, ``pg_ctl start`` on a free
loopback port with its socket in that folder, password authentication over TCP; stopped and
removed at the end.

PostgreSQL refuses to run as root: as root, the cluster runs as the ``postgres`` system user the
Debian package creates (``runuser -u postgres --``), its folder owned by that user.

    cluster = start(...)          # or the session fixture ``postgres_server`` in tests/conftest.py
    cluster.create_database("t1")
    cluster.uri("t1")             # postgresql://icectl:PASSWORD@127.0.0.1:PORT/t1
    cluster.jdbc_uri("t1")        # jdbc:postgresql://127.0.0.1:PORT/t1?user=icectl&password=PASSWORD
    cluster.stop()
"""
from __future__ import annotations

import glob
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field

USER = "icectl"


def find_bindir() -> str | None:
    """The newest /usr/lib/postgresql/N/bin with initdb and pg_ctl, or None."""
    found = [d for d in glob.glob("/usr/lib/postgresql/*/bin")
             if os.path.exists(os.path.join(d, "initdb")) and os.path.exists(os.path.join(d, "pg_ctl"))]

    def version(d: str) -> tuple[int, ...]:
        m = re.search(r"/postgresql/([\d.]+)/bin", d)
        return tuple(int(x) for x in m.group(1).split(".")) if m else (0,)

    return max(found, key=version) if found else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    bindir: str
    root: str  # the temporary folder: data/, sockets/, server.log
    port: int
    password: str
    run_as: list[str] = field(default_factory=list)  # ["runuser", "-u", "postgres", "--"] as root
    user: str = USER
    host: str = "127.0.0.1"

    @property
    def data(self) -> str:
        return os.path.join(self.root, "data")

    @property
    def log(self) -> str:
        return os.path.join(self.root, "server.log")

    def uri(self, dbname: str = "postgres", *, password: str | None = None) -> str:
        pw = self.password if password is None else password
        return f"postgresql://{self.user}:{pw}@{self.host}:{self.port}/{dbname}"

    def jdbc_uri(self, dbname: str = "postgres") -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{dbname}?user={self.user}&password={self.password}"

    def connect(self, dbname: str = "postgres"):
        import psycopg

        return psycopg.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                               dbname=dbname, autocommit=True)

    def create_database(self, name: str) -> str:
        with self.connect() as con:
            con.execute(f'CREATE DATABASE "{name}"')
        return name

    def drop_database(self, name: str) -> None:
        with self.connect() as con:
            con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def _run(self, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
        # cwd: a folder the server's user can enter (the checkout may be under /root).
        return subprocess.run([*self.run_as, *args], capture_output=True, text=True, timeout=timeout, cwd=self.root)

    def start(self) -> None:
        sockets = os.path.join(self.root, "sockets")
        opts = (f"-c listen_addresses={self.host} -p {self.port} -k {sockets} -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100")
        p = self._run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-l", self.log, "-w", "-t", "60",
                      "-o", opts, "start")
        if p.returncode != 0:
            log = open(self.log).read()[-2000:] if os.path.exists(self.log) else ""
            raise RuntimeError(f"pg_ctl start failed ({p.returncode}): {p.stdout}{p.stderr}\n{log}")

    def stop(self) -> None:
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self._run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-m", "immediate", "-w", "stop")

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def start(bindir: str | None = None) -> Cluster:
    """Create and start a cluster; the caller stops and removes it."""
    bindir = bindir or find_bindir()
    if bindir is None:
        raise FileNotFoundError("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin "
                                "(apt-get install postgresql)")
    run_as: list[str] = []
    owner = None
    if os.geteuid() == 0:  # initdb and postgres refuse to run as root
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            owner = pwd.getpwnam("nobody")
        run_as = ["runuser", "-u", owner.pw_name, "--"]
    root = tempfile.mkdtemp(prefix="icectl-pg-")  # under /tmp: reachable by the server's user
    password = "pw-" + secrets.token_hex(8)
    cluster = Cluster(bindir, root, free_port(), password, run_as)
    try:
        os.mkdir(os.path.join(root, "sockets"))
        pwfile = os.path.join(root, "pwfile")
        with open(pwfile, "w") as f:
            f.write(password + "\n")
        if owner is not None:
            for p in (root, os.path.join(root, "sockets"), pwfile):
                os.chown(p, owner.pw_uid, owner.pw_gid)
        p = cluster._run(os.path.join(bindir, "initdb"), "-D", cluster.data, "-U", USER, f"--pwfile={pwfile}",
                         "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync",
                         "--locale=C")
        os.unlink(pwfile)
        if p.returncode != 0:
            raise RuntimeError(f"initdb failed ({p.returncode}): {p.stdout}{p.stderr}")
        for attempt in range(3):  # the free port may be taken between free_port() and the start
            try:
                cluster.start()
                break
            except RuntimeError:
                if attempt == 2:
                    raise
                cluster.port = free_port()
    except BaseException:
        cluster.stop()
        cluster.remove()
        raise
    return cluster
