/* contrast.js: the browser test's WCAG 2 contrast check (injected into a
 * copy of the report by tests/cli/t1120-report-browser.sh; the report
 * itself holds no script). For every element that shows text, its colour
 * and the colour behind it as the browser computed them: backgrounds
 * composited from the page down, a group's opacity applied to what it
 * holds, SVG text against the shape drawn under it. The result goes into
 * a pre element (id caliber-contrast) as JSON, which --dump-dom prints and
 * report_check.py reads: {"checked": n, "failures": [...]}. */
(function () {
  function rgba(s) {
    var m = /rgba?\(([^)]*)\)/.exec(s || "");
    if (!m) return null;
    var p = m[1].split(",").map(parseFloat);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  }
  function over(fg, bg, a) {
    a = a === undefined ? fg[3] : a * fg[3];
    return [0, 1, 2].map(function (i) { return fg[i] * a + bg[i] * (1 - a); }).concat([1]);
  }
  function lum(c) {
    var f = function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  }
  function ratio(a, b) {
    var x = lum(a), y = lum(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  }
  /* The colour behind el, and what a group's opacity fades toward. */
  function behind(el) {
    var chain = [], bg = [255, 255, 255, 1], e, i, outside = null, alpha = 1;
    for (e = el; e && e.nodeType === 1; e = e.parentElement) chain.unshift(e);
    for (i = 0; i < chain.length; i++) {
      var s = getComputedStyle(chain[i]), o = parseFloat(s.opacity), c;
      if (o < 1) { if (!outside) outside = bg; alpha *= o; }
      if (chain[i] instanceof SVGElement) continue;
      c = rgba(s.backgroundColor);
      if (c && c[3] > 0) bg = over(c, bg);
    }
    return { bg: bg, outside: outside || bg, alpha: alpha };
  }
  /* The last shape drawn before t in its <svg> that lies under its centre. */
  function under(t) {
    var svg = t.ownerSVGElement, shapes = svg.querySelectorAll("rect"), b = t.getBBox();
    var cx = b.x + b.width / 2, cy = b.y + b.height / 2, best = null, i;
    for (i = 0; i < shapes.length; i++) {
      var r = shapes[i], rb;
      if (r.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_PRECEDING) continue;
      rb = r.getBBox();
      if (cx >= rb.x && cx <= rb.x + rb.width && cy >= rb.y && cy <= rb.y + rb.height) best = r;
    }
    return best;
  }
  var failures = [], checked = 0;
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  document.querySelectorAll("body *").forEach(function (el) {
    var own = "", k, s, fg, ctx, bg, need, r, size, weight;
    for (k = 0; k < el.childNodes.length; k++)
      if (el.childNodes[k].nodeType === 3) own += el.childNodes[k].nodeValue;
    own = own.trim();
    if (!own || !el.getClientRects().length || el.tagName === "title" || el.tagName === "TITLE") return;
    if (el.closest("title")) return;
    s = getComputedStyle(el);
    if (s.visibility === "hidden" || s.display === "none") return;
    ctx = behind(el);
    if (el instanceof SVGElement) {
      var shape = under(el), base = behind(el.ownerSVGElement).bg;
      fg = rgba(s.fill);
      if (!fg) return;
      fg[3] *= parseFloat(s.fillOpacity);
      bg = base;
      if (shape) {
        var ss = getComputedStyle(shape), sc = rgba(ss.fill);
        if (sc) { sc[3] *= parseFloat(ss.fillOpacity); bg = over(sc, base); }
      }
      fg = over(fg, bg);
    } else {
      fg = over(rgba(s.color), ctx.bg);
      bg = ctx.bg;
    }
    if (ctx.alpha < 1) { fg = over(fg, ctx.outside, ctx.alpha); bg = over(bg, ctx.outside, ctx.alpha); }
    size = parseFloat(s.fontSize); weight = parseInt(s.fontWeight, 10) || 400;
    need = size >= 24 || (size >= 18.66 && weight >= 700) ? 3 : 4.5;
    r = ratio(fg, bg);
    checked++;
    if (r + 1e-9 < need)
      failures.push({ text: own.slice(0, 40), tag: el.tagName.toLowerCase(), cls: el.getAttribute("class") || "",
                      fg: fg.slice(0, 3).map(Math.round), bg: bg.slice(0, 3).map(Math.round),
                      ratio: Math.round(r * 100) / 100, need: need });
  });
  var out = document.createElement("pre");
  out.id = "caliber-contrast";
  out.textContent = JSON.stringify({ checked: checked, failures: failures });
  document.body.appendChild(out);
})();
