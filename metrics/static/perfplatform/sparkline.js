/* Sparklines drawn client-side from compact JSON: every element with data-sparkline='{"v":[...],"c":i}'
   gets an inline SVG of its values (null = gap), the point at index c marked with a vertical line, and
   the part from c on coloured by data-direction (regression red, improvement green). Elements with
   class "spark-large" also get their min and max written beside the line. No dependencies. */
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var COLORS = {regression: "#b3261e", improvement: "#146c2e"};
  function el(name, attrs) {
    var e = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    return e;
  }
  function fmt(v) {
    return Math.abs(v) >= 10000 ? Math.round(v).toLocaleString("en") : (+v.toPrecision(4)).toString();
  }
  function path(vs, from, to, x, y) {
    var d = "", pen = false;
    for (var i = from; i <= to; i++) {
      if (vs[i] === null || vs[i] === undefined) { pen = false; continue; }
      d += (pen ? "L" : "M") + x(i).toFixed(1) + " " + y(vs[i]).toFixed(1);
      pen = true;
    }
    return d;
  }
  function draw(box) {
    var data;
    try { data = JSON.parse(box.dataset.sparkline); } catch (e) { return; }
    var vs = data.v || [], c = data.c, n = vs.length;
    var large = box.classList.contains("spark-large");
    var w = box.clientWidth || 160, h = (box.clientHeight || 32) - (large ? 20 : 0), pad = 3;
    var finite = vs.filter(function (v) { return v !== null && isFinite(v); });
    box.textContent = "";
    if (!finite.length) { box.dataset.drawn = "0"; return; }
    var lo = Math.min.apply(null, finite), hi = Math.max.apply(null, finite);
    if (hi === lo) { hi += Math.abs(hi) * 0.01 || 1; lo -= Math.abs(lo) * 0.01 || 1; }
    var x = function (i) { return pad + (n > 1 ? i * (w - 2 * pad) / (n - 1) : (w - 2 * pad) / 2); };
    var y = function (v) { return h - pad - (v - lo) * (h - 2 * pad) / (hi - lo); };
    var svg = el("svg", {width: w, height: h, viewBox: "0 0 " + w + " " + h, "aria-hidden": "true", focusable: "false"});
    var after = COLORS[box.dataset.direction] || "#0b57d0";
    var marked = c !== undefined && c !== null && c >= 0 && c < n;
    if (marked) {
      svg.appendChild(el("line", {x1: x(c), x2: x(c), y1: 0, y2: h, stroke: "#4a5560", "stroke-width": 1, "stroke-dasharray": "2 2", "class": "spark-culprit"}));
      svg.appendChild(el("path", {d: path(vs, 0, c, x, y), fill: "none", stroke: "#0b57d0", "stroke-width": 1.5}));
      svg.appendChild(el("path", {d: path(vs, c, n - 1, x, y), fill: "none", stroke: after, "stroke-width": 1.8}));
      if (vs[c] !== null) svg.appendChild(el("circle", {cx: x(c), cy: y(vs[c]), r: 2.5, fill: after}));
    } else {
      svg.appendChild(el("path", {d: path(vs, 0, n - 1, x, y), fill: "none", stroke: "#0b57d0", "stroke-width": 1.5}));
    }
    box.appendChild(svg);
    if (large) {
      var scale = document.createElement("span");
      scale.className = "spark-scale";
      scale.textContent = "min " + fmt(Math.min.apply(null, finite)) + " · max " + fmt(Math.max.apply(null, finite)) +
        " · " + n + " builds" + (marked ? ", culprit at the dashed line" : "");
      box.appendChild(scale);
    }
    box.dataset.drawn = String(finite.length);
  }
  function drawAll(root) { (root || document).querySelectorAll("[data-sparkline]").forEach(draw); }
  window.perfSparklines = drawAll;
  drawAll();
  // Closed <details> have no size: draw their sparklines when opened.
  document.querySelectorAll("details").forEach(function (d) {
    d.addEventListener("toggle", function () { if (d.open) drawAll(d); });
  });
})();
