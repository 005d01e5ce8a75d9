"""Seed 003 (zero-copy receive: devmem TCP, io_uring zcrx): its section
is filled by a later change; until then the page says so."""


def section(seed, title, source):
    """A registered section that measures nothing yet."""
    class Coming:
        SEED = seed
        TITLE = title
        SOURCE = source
        COMING = True

        @staticmethod
        def plan(ctx):
            return []

        @staticmethod
        def measure(ctx):
            return {"tables": [], "method": [],
                    "checks": [], "figures": {},
                    "coming": "coming: the zero-copy tables are another change's "
                              "(the seeds' second issue)"}
    return Coming


ZERO_COPY = section("003", "zero-copy receive (devmem TCP, io_uring zcrx)",
                    "Hadi Salim, Bitar, Nogueira, Tammela, \"The Battle Of The ZCs\" "
                    "(Bloomberg, netdev talk)")
