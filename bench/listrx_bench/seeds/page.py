"""The seeds page (seeds.md, seeds.html, the terminal's text) from the
document `listrx-bench seeds` writes as seeds.json: nothing here measures,
so a recorded seeds.json renders the same page (bench/tests)."""

import re

from ..report import Doc
from ..stats import is_unavailable

COLUMN_WHY = "why the numbers differ"


def _host_line(doc):
    h = doc.get("host") or {}
    l1d = h.get("l1d_bytes")
    l1i = h.get("l1i_bytes")
    caches = ", ".join(x for x in (
        "L1d %d KiB" % (l1d // 1024) if l1d else "",
        "L1i %d KiB" % (l1i // 1024) if l1i else "") if x)
    return "%s, host %s: %s%s, Linux %s; load average %s before, %s after." % (
        doc.get("date", "?"), h.get("hostname", "?"),
        h.get("cpu_model") or h.get("cpu") or "CPU unknown",
        " (%s)" % caches if caches else "", h.get("kernel", "?"),
        (doc.get("load") or {}).get("before", "?"), (doc.get("load") or {}).get("after", "?"))


def _checks(doc, sec):
    checks = sec.get("checks") or []
    bad = [c for c in checks if not c.get("ok")]
    if not checks:
        return
    if bad:
        doc.p("Checks: %d of %d failed:" % (len(bad), len(checks)))
        doc.ul(c["text"] for c in bad)
    else:
        doc.p("Checks: all %d passed (each configuration's program, rule or stage saw "
              "every frame and gave the row's verdict)." % len(checks))


def section(doc, sec):
    doc.h(2, "Seed %s — %s" % (sec["seed"], sec["title"]))
    doc.p("Published: " + sec["source"] + ".")
    if sec.get("coming"):
        doc.p(sec["coming"])
        return
    if sec.get("error"):
        doc.p("unavailable: this section failed here: " + sec["error"])
        return
    for t in sec.get("tables", []):
        doc.h(3, t["title"])
        doc.table(t["columns"] + [COLUMN_WHY],
                  [list(r["cells"]) + [r.get("why", "")] for r in t["rows"]])
    if sec.get("method"):
        doc.p("How it was measured:")
        doc.ul(sec["method"])
    _checks(doc, sec)


def render(doc):
    """The page's Doc from a seeds.json document."""
    d = Doc()
    d.h(1, "The seeds' tables on listrx and this host's kernel")
    d.p(_host_line(doc))
    d.p("Each table gives the published rows with the author's hardware, listrx's "
        "figure measured here (an interval with every number; a difference says "
        "resolved or not resolved), the running kernel's where this host can measure "
        "it, or \"unavailable: why\", and a line on why the numbers differ. `%s`"
        % doc.get("command", "listrx-bench seeds"))
    for sec in doc.get("sections", []):
        section(d, sec)
    failed = doc.get("failed_checks") or []
    if failed:
        d.h(2, "Failed checks")
        d.ul(failed)
    return d


def cells(doc):
    """Every measured cell of the document (listrx's and the kernel's
    columns): for the tests, which require a number or "unavailable"."""
    out = []
    for sec in doc.get("sections", []):
        for t in sec.get("tables", []):
            for r in t["rows"]:
                out.extend((sec["seed"], r["cells"][0], c) for c in r["cells"][2:])
    return out


def is_measured_cell(text):
    """A number with an interval ("83.1 ns [80.2–85.0]..."), a simulated
    count that says it is one ("812.3 Ir/request (callgrind: ..."), or a
    stated reason ("unavailable: ...", "not modelled: ...", "not
    measured: ...")."""
    return (is_unavailable(text) or text.startswith("not modelled: ") or
            text.startswith("not measured: ") or
            bool(re.match(r"^[-+]?\d[\d.]* [^()]+ \(callgrind: simulated", text)) or
            bool(re.match(r"^[-+]?\d[\d.]*\S* ?\S* \[[-+]?\d[\d.]*–[-+]?\d[\d.]*\]", text)))
