"""Seeds 002 (virtio TX-NAPI: TX completions cleaned in the RX poll) and
003 (zero-copy receive: devmem TCP, io_uring zcrx): their sections are
filled by a later change; until then the page says so."""


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
                    "coming": "coming: the TX-completion and zero-copy tables are "
                              "another change's (the seeds' second issue)"}
    return Coming


TX_NAPI = section("002", "TX completions in the RX poll (virtio TX-NAPI)",
                  "Willem de Bruijn, \"virtio-net: napi for transmit completion\" "
                  "(netdev patch series, 2017)")
ZERO_COPY = section("003", "zero-copy receive (devmem TCP, io_uring zcrx)",
                    "Hadi Salim, Bitar, Nogueira, Tammela, \"The Battle Of The ZCs\" "
                    "(Bloomberg, netdev talk)")
