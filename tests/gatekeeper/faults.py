"""A store whose writes (or reads) can be made to fail, to test fail-closed behaviour."""

from contextlib import contextmanager

from host.store import Store, StoreError


class FlakyStore(Store):
    fail_writes = False
    fail_reads = False
    fail_reads_of = ""  # fail only queries mentioning this text

    @contextmanager
    def transaction(self):
        if self.fail_writes:
            raise StoreError("disk I/O error (injected)")
        with super().transaction() as conn:
            yield conn

    def probe(self, timeout_s=0.25):
        if self.fail_writes or self.fail_reads:
            raise StoreError("disk I/O error (injected)")
        super().probe(timeout_s)

    def query(self, sql, params=()):
        if self.fail_reads or (self.fail_reads_of and self.fail_reads_of in sql):
            raise StoreError("disk I/O error (injected)")
        return super().query(sql, params)
