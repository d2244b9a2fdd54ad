"""The real 3-node MariaDB Galera cluster plus garbd is a session fixture of tests/conftest.py
(``galera_cluster``, and ``galera``: healthy again for each test), so that every test that
needs it, the alerts' end-to-end proofs too, shares one cluster per session."""
