/* Distribution heatmap on a canvas: one column per build, one row per value bin, darker = more runs. */
(function () {
  "use strict";
  var d = JSON.parse(document.getElementById("dist-data").textContent);
  var canvas = document.getElementById("heat");
  var hover = document.getElementById("hover");
  var nb = d.b.length, bins = d.bins;
  var W = canvas.width, H = canvas.height, padL = 0, padB = 0;
  var ctx = canvas.getContext("2d");
  var cw = W / Math.max(1, nb), ch = H / bins;
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, W, H);
  var maxFrac = 0;
  for (var j = 0; j < nb; j++) for (var q = 0; q < bins; q++) maxFrac = Math.max(maxFrac, d.counts[j * bins + q] / (d.n[j] || 1));
  maxFrac = maxFrac || 1;
  for (var i = 0; i < nb; i++) {
    var total = d.n[i] || 1;
    for (var k = 0; k < bins; k++) {
      var c = d.counts[i * bins + k];
      if (!c) continue;
      var f = Math.min(1, 0.2 + 0.8 * (c / total) / maxFrac);
      // light yellow -> dark red (FlameScope-like), always dark enough to see on white
      var r = Math.round(255 - 120 * f), g = Math.round(220 - 200 * f), b = Math.round(120 - 110 * f);
      ctx.fillStyle = "rgb(" + r + "," + g + "," + b + ")";
      ctx.fillRect(padL + i * cw, H - padB - (k + 1) * ch, Math.ceil(cw), Math.ceil(ch));
    }
  }
  canvas.dataset.drawn = String(nb);
  function fmt(v) { return Math.abs(v) >= 10000 ? Math.round(v).toLocaleString("en") : (+v.toPrecision(4)).toString(); }
  function describe(i, k) {
    if (i < 0 || i >= nb) return;
    var step = (d.hi - d.lo) / bins;
    var txt = "Build " + d.b[i] + " · " + new Date(d.x[i] * 1000).toISOString().slice(0, 16).replace("T", " ") +
      " · " + d.n[i] + " run(s), median " + fmt(d.v[i]);
    if (k !== null && k >= 0 && k < bins) txt += " · " + d.counts[i * bins + k] + " run(s) in " + fmt(d.lo + k * step) + " – " + fmt(d.lo + (k + 1) * step);
    hover.textContent = txt;
  }
  canvas.addEventListener("mousemove", function (ev) {
    var rect = canvas.getBoundingClientRect();
    var x = (ev.clientX - rect.left) * W / rect.width, y = (ev.clientY - rect.top) * H / rect.height;
    describe(Math.floor(x / cw), Math.floor((H - y) / ch));
  });
  var base = document.getElementById("build-base").dataset.base;
  canvas.addEventListener("click", function (ev) {
    var rect = canvas.getBoundingClientRect();
    var i = Math.floor((ev.clientX - rect.left) * W / rect.width / cw);
    if (i >= 0 && i < nb) location.href = base + encodeURIComponent(d.b[i]) + "/";
  });
  var kb = nb - 1;
  canvas.addEventListener("focus", function () { describe(kb, null); });
  canvas.addEventListener("keydown", function (ev) {
    if (ev.key === "ArrowLeft") { kb = Math.max(0, kb - 1); describe(kb, null); ev.preventDefault(); }
    if (ev.key === "ArrowRight") { kb = Math.min(nb - 1, kb + 1); describe(kb, null); ev.preventDefault(); }
    if (ev.key === "Enter") { location.href = base + encodeURIComponent(d.b[kb]) + "/"; }
  });
})();
