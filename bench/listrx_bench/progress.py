"""A small progress bar on stderr (no tqdm): [#####.....] 12/40 30% eta 1m05s label."""

import sys
import time


def _clock(seconds):
    seconds = int(seconds + 0.5)
    if seconds >= 60:
        return "%dm%02ds" % (seconds // 60, seconds % 60)
    return "%ds" % seconds


class Progress:
    def __init__(self, total, stream=None, width=30, enabled=True):
        self.total = max(int(total), 1)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.enabled = enabled
        self.start = time.monotonic()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def line(self, label=""):
        frac = min(self.done / self.total, 1.0)
        filled = int(round(frac * self.width))
        elapsed = time.monotonic() - self.start
        eta = "?"
        if self.done:
            eta = _clock(elapsed / self.done * (self.total - self.done))
        return "[%s%s] %d/%d %3d%% eta %s %s" % (
            "#" * filled, "." * (self.width - filled), self.done, self.total,
            int(frac * 100), eta, label)

    def update(self, label="", step=1):
        self.done += step
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
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
