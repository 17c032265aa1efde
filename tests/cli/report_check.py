#!/usr/bin/env python3
"""Checks on `caliber report --format html` output, for the CLI tests.

  report_check.py wellformed FILE     every tag closed in order; self-contained
  report_check.py links FILE          every relative href names an existing file
  report_check.py dom DOM RUN_ROOT    the DOM (chromium --dump-dom) against the run's receipts
  report_check.py png PNG             a screenshot that is not blank
  report_check.py inject HTML JS OUT  HTML with the script JS added before </body>, into OUT
  report_check.py a11y DOM            the DOM of a page with contrast.js: every text at
                                      WCAG AA contrast, every <svg> labelled, every table
                                      captioned and every header cell scoped

Each prints what it found and exits 1 on the first thing that is wrong.
"""
import html.parser
import json
import os
import sys
import urllib.parse

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def fail(msg):
    print(msg)
    sys.exit(1)


class Collector(html.parser.HTMLParser):
    """Elements with their attributes and text, and a stack of open tags."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.elements, self.problems = [], [], []
        self.text_of = {}

    def handle_starttag(self, tag, attrs):
        el = {"tag": tag, "attrs": dict(attrs), "text": []}
        self.elements.append(el)
        if tag not in VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag, attrs):
        self.elements.append({"tag": tag, "attrs": dict(attrs), "text": []})

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1]["tag"] != tag:
            self.problems.append("line %d: </%s> closes <%s>" % (self.getpos()[0], tag,
                                                                 self.stack[-1]["tag"] if self.stack else "nothing"))
            return
        self.stack.pop()

    def handle_data(self, data):
        for el in self.stack:
            el["text"].append(data)


def parse(path):
    with open(path, encoding="utf-8") as f:
        data = f.read()
    c = Collector()
    c.feed(data)
    c.close()
    return data, c


def classes(el):
    return el["attrs"].get("class", "").split()


def wellformed(path):
    data, c = parse(path)
    if c.problems:
        fail("not well formed: " + c.problems[0])
    if c.stack:
        fail("not well formed: <%s> never closed" % c.stack[-1]["tag"])
    low = data.lower()
    for bad in ("http", "<script", "<link", "@import", "url("):
        if bad in low:
            fail("not self-contained: holds %r" % bad)
    print("well formed and self-contained: %d elements" % len(c.elements))


def links(path):
    _, c = parse(path)
    base = os.path.dirname(os.path.abspath(path))
    n = 0
    for el in c.elements:
        href = el["attrs"].get("href")
        if el["tag"] != "a" or href is None or href.startswith("#"):
            continue
        target = os.path.join(base, urllib.parse.unquote(href))
        if not os.path.isfile(target):
            fail("link %s: no such file" % href)
        n += 1
    if not n:
        fail("no links to receipts")
    print("%d links, each to an existing file" % n)


def dom(path, root):
    _, c = parse(path)
    with open(os.path.join(root, "campaign.json")) as f:
        campaign = json.load(f)
    rows = {el["attrs"]["data-task"]: el for el in c.elements
            if el["tag"] == "tr" and "task" in classes(el)}
    details = {el["attrs"].get("data-task") for el in c.elements
               if el["tag"] == "details" and "task" in classes(el)}
    points, topo = {}, {}
    for el in c.elements:
        a = el["attrs"]
        if el["tag"] == "circle" and "pt" in classes(el):
            key = (a["data-task"], a["data-order"])
            points[key] = points.get(key, 0) + 1
        if el["tag"] == "rect" and "topo" in classes(el):
            key = (a["data-task"], a["data-cell"])
            topo.setdefault(key, []).append(a.get("data-count"))
    want_points, want_topo = set(), {}
    for t in campaign["tasks"]:
        tid, v = t["id"], t["verdict"]
        row = rows.get(tid)
        if row is None:
            fail("task %s: no row in the verdict matrix" % tid)
        if row["attrs"].get("data-verdict") != v:
            fail("task %s: row says verdict %s, the receipt %s" % (tid, row["attrs"].get("data-verdict"), v))
        cell = [el for el in row_cells(c, row) if el["tag"] == "td" and "verdict" in classes(el)]
        if not cell or "".join(cell[0]["text"]).strip() != v:
            fail("task %s: the verdict cell does not read %s" % (tid, v))
        if tid not in details:
            fail("task %s: no <details> section" % tid)
        with open(os.path.join(root, "tasks", tid, "task.json")) as f:
            receipt = json.load(f)
        for o in ("a", "b"):
            if receipt["orders"][o]["present"]:
                want_points.add((tid, o))
        for role in ("baseline", "control", "candidate"):
            tp = receipt["topology"][role]
            want_topo[(tid, role)] = str(tp["scoped"]) if tp.get("joinable") else ""
    if len(rows) != len(campaign["tasks"]):
        fail("%d matrix rows for %d tasks" % (len(rows), len(campaign["tasks"])))
    if set(points) != want_points or any(n != 1 for n in points.values()):
        fail("forest plot marks %s, receipts timed %s" % (sorted(points.items()), sorted(want_points)))
    for key, want in want_topo.items():
        got = topo.get(key, [])
        if got != [want]:
            fail("topology mark %s: %s, receipt says %r" % (key, got, want))
    if set(topo) != set(want_topo):
        fail("topology marks for %s, receipts have %s" % (sorted(topo), sorted(want_topo)))
    print("%d tasks with their verdicts, %d forest marks (one per timed order), %d topology marks"
          % (len(rows), len(want_points), len(want_topo)))


def row_cells(c, row):
    """The elements that follow a <tr> up to the next <tr>."""
    i = c.elements.index(row)
    out = []
    for el in c.elements[i + 1:]:
        if el["tag"] == "tr":
            break
        out.append(el)
    return out


def png(path):
    from PIL import Image

    im = Image.open(path).convert("RGB")
    w, h = im.size
    small = im.resize((w // 4, h // 4))
    pixels = list(small.getdata())
    colours = len(set(pixels))
    ink = sum(1 for p in pixels if sum(p) < 720) / len(pixels)
    # The verdict colours of the run: G green and B grey must both show.
    green = sum(1 for p in pixels if abs(p[0] - 26) < 20 and abs(p[1] - 127) < 20 and abs(p[2] - 55) < 20)
    print("%dx%d, %d colours, %.1f%% non-white, %d green pixels" % (w, h, colours, 100 * ink, green))
    if colours < 32 or ink < 0.05:
        fail("screenshot looks blank")
    if not green:
        fail("no verdict colour G in the screenshot")


def inject(path, js, out):
    with open(path, encoding="utf-8") as f:
        page = f.read()
    with open(js, encoding="utf-8") as f:
        script = f.read()
    if page.count("</body>") != 1:
        fail("%s: not one </body>" % path)
    with open(out, "w", encoding="utf-8") as f:
        f.write(page.replace("</body>", "<script>\n" + script + "</script>\n</body>"))


def a11y(path):
    data, c = parse(path)
    result = [el for el in c.elements if el["tag"] == "pre" and el["attrs"].get("id") == "caliber-contrast"]
    if not result:
        fail("no contrast result: the script did not run")
    r = json.loads("".join(result[0]["text"]))
    for f in r["failures"][:10]:
        print("contrast %.2f < %.1f: %r (<%s class=%r>) colour %s on %s"
              % (f["ratio"], f["need"], f["text"], f["tag"], f["cls"], f["fg"], f["bg"]))
    if r["failures"]:
        fail("%d of %d texts below WCAG AA contrast" % (len(r["failures"]), r["checked"]))
    svgs = [el for el in c.elements if el["tag"] == "svg"]
    bad = [el for el in svgs if el["attrs"].get("role") != "img" or not el["attrs"].get("aria-label", "").strip()]
    if bad:
        fail("%d of %d <svg> without role=\"img\" and an aria-label, the first %r" % (len(bad), len(svgs), bad[0]["attrs"]))
    tables = [i for i, el in enumerate(c.elements) if el["tag"] == "table"]
    for i in tables:
        nxt = c.elements[i + 1] if i + 1 < len(c.elements) else None
        if not nxt or nxt["tag"] != "caption" or not "".join(nxt["text"]).strip():
            fail("a <table> without a <caption> first: %r" % c.elements[i]["attrs"])
    ths = [el for el in c.elements if el["tag"] == "th"]
    unscoped = [el for el in ths if el["attrs"].get("scope") not in ("col", "row", "colgroup", "rowgroup")]
    if unscoped:
        fail("%d of %d <th> without scope, the first reads %r" % (len(unscoped), len(ths), "".join(unscoped[0]["text"])))
    print("%d texts at WCAG AA contrast, %d <svg> labelled, %d tables captioned, %d <th> scoped"
          % (r["checked"], len(svgs), len(tables), len(ths)))


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "wellformed":
        wellformed(sys.argv[2])
    elif cmd == "links":
        links(sys.argv[2])
    elif cmd == "dom":
        dom(sys.argv[2], sys.argv[3])
    elif cmd == "png":
        png(sys.argv[2])
    elif cmd == "inject":
        inject(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "a11y":
        a11y(sys.argv[2])
    else:
        fail(__doc__)
