"""A small progress bar on stderr (no tqdm): [#####.....] 12/40 30% eta 1m05s label.

Work comes in kinds that cost differently (a timed listrx run, a cachegrind
job): the ETA is the sum over kinds of the items left times what one item
of that kind costs: the time the kind has been running divided by the
items it finished, or, before one has finished, the estimate given when
the items were planned. Jobs that run in parallel finish faster than
each one takes: time spent is wall time while the kind runs, so their cost
per item is the phase's, not a job's."""

import sys
import time


def _clock(seconds):
    seconds = int(seconds + 0.5)
    if seconds >= 60:
        return "%dm%02ds" % (seconds // 60, seconds % 60)
    return "%ds" % seconds


class Progress:
    def __init__(self, total=0, stream=None, width=30, enabled=True, clock=time.monotonic,
                 kind="run", estimate_s=None):
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.enabled = enabled
        self.clock = clock
        self.start = clock()
        self.kinds = {}
        self.default_kind = kind
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        if total:
            self.plan(kind, total, estimate_s)
            self.begin(kind)

    # ---- the plan and the clock -------------------------------------------
    def plan(self, kind, count, estimate_s=None):
        """count more items of a kind, each estimated at estimate_s seconds
        (None: unknown until one finishes)."""
        k = self.kinds.setdefault(kind, {"planned": 0, "done": 0, "spent": 0.0,
                                         "since": None, "estimate": 0.0, "estimated": 0})
        k["planned"] += count
        if estimate_s is not None:
            k["estimate"] += estimate_s * count
            k["estimated"] += count

    def begin(self, kind):
        k = self.kinds[kind]
        if k["since"] is None:
            k["since"] = self.clock()

    def end(self, kind):
        k = self.kinds.get(kind)
        if k and k["since"] is not None:
            k["spent"] += self.clock() - k["since"]
            k["since"] = None

    def cost(self, kind):
        """Seconds per item of a kind: measured, else the plan's estimate."""
        k = self.kinds[kind]
        spent = k["spent"] + (self.clock() - k["since"] if k["since"] is not None else 0.0)
        if k["done"]:
            return spent / k["done"]
        return k["estimate"] / k["estimated"] if k["estimated"] else None

    def eta(self):
        """Seconds left, or None while a kind with items left has no cost yet."""
        left = 0.0
        for kind, k in self.kinds.items():
            todo = max(k["planned"] - k["done"], 0)
            if not todo:
                continue
            cost = self.cost(kind)
            if cost is None:
                return None
            left += todo * cost
        return left

    @property
    def total(self):
        return max(sum(k["planned"] for k in self.kinds.values()), 1)

    @property
    def done(self):
        return sum(k["done"] for k in self.kinds.values())

    # ---- the bar -----------------------------------------------------------
    def fraction(self):
        """Work done, each item weighed by its kind's cost."""
        done = total = 0.0
        for kind, k in self.kinds.items():
            cost = self.cost(kind) or 1.0
            done += min(k["done"], k["planned"]) * cost
            total += k["planned"] * cost
        return done / total if total else 1.0

    def line(self, label=""):
        eta = self.eta()
        frac = self.fraction()
        text = "?" if eta is None or not self.done else _clock(eta)
        filled = int(round(frac * self.width))
        return "[%s%s] %d/%d %3d%% eta %s %s" % (
            "#" * filled, "." * (self.width - filled), self.done, self.total,
            int(frac * 100), text, label)

    def update(self, label="", step=1, kind=None):
        self.kinds[kind or self.default_kind]["done"] += step
        self.show(label)

    def show(self, label=""):
        if not self.enabled:
            return
        text = self.line(label)
        if self.tty:
            self.stream.write("\r\x1b[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self):
        for kind in self.kinds:
            self.end(kind)
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


class StepLog:
    """A long experiment's lines and steps: log(line) keeps every line
    (for the run's record) and prints it when verbose; step(label, kind)
    moves a progress bar (on stderr, off when verbose or without one), so
    that stdout holds only the answer unless the lines are asked for."""

    def __init__(self, echo=None, progress=None):
        self.lines = []
        self.echo = echo
        self.progress = progress

    def __call__(self, line):
        self.lines.append(line)
        if self.echo:
            self.echo(line)

    def step(self, label="", kind=None):
        if self.progress:
            self.progress.update(label, kind=kind)

    def phase(self, kind):
        """Time from now on goes to this kind's items (their cost)."""
        if self.progress:
            for other in self.progress.kinds:
                self.progress.end(other)
            self.progress.begin(kind)

    def close(self):
        if self.progress:
            self.progress.close()
