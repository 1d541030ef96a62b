/* Series graph: uPlot over compact arrays (x = build index), a p10–p90 band, alerts from the API drawn
   as vertical markers (a click on one, or Enter on its build, opens its alert group), the build and
   commit under the cursor, zoom by drag, buttons and keyboard. */
(function () {
  "use strict";
  var d = JSON.parse(document.getElementById("series-data").textContent);
  var el = document.getElementById("chart");
  var hover = document.getElementById("hover");
  var n = d.v.length;
  var xs = new Array(n);
  for (var i = 0; i < n; i++) xs[i] = i;
  var hasBand = d.lo.some(function (v) { return v !== null; });
  var markers = {};   // build index -> alert
  var clampI = function (i) { return Math.max(0, Math.min(n - 1, Math.round(i))); };
  var axisDates = function (u, splits) {
    var span = d.x[clampI(u.scales.x.max)] - d.x[clampI(u.scales.x.min)];
    return splits.map(function (i) {
      // Only whole build indices in the series have a date: a short series' splits fall between them.
      if (i < 0 || i > n - 1 || Math.abs(i - Math.round(i)) > 1e-6) return "";
      var t = d.x[clampI(i)];
      if (!t) return "";
      var iso = new Date(t * 1000).toISOString();
      return span < 10 * 86400 ? iso.slice(5, 10) + " " + iso.slice(11, 16) : iso.slice(0, 10);
    });
  };
  function fmt(v) {
    if (v === null || v === undefined) return "–";
    return Math.abs(v) >= 10000 ? Math.round(v).toLocaleString("en") : (+v.toPrecision(4)).toString();
  }
  function describe(i) {
    if (i === null || i === undefined || i < 0 || i >= n) return;
    var txt = "Build " + d.b[i] + " · commit " + (d.c[i] || "?").slice(0, 12) + " · " +
      new Date(d.x[i] * 1000).toISOString().replace("T", " ").slice(0, 16) + " UTC · value " + fmt(d.v[i]);
    if (hasBand && d.lo[i] !== null) txt += " (spread " + fmt(d.lo[i]) + " – " + fmt(d.hi[i]) + ")";
    var a = markers[i];
    if (a) txt += " · " + a.direction.toUpperCase() + " " + (a.rel_change * 100).toFixed(1) + "%, culprit commit " +
      (a.commit || "?").slice(0, 12) + (a.previous_commit ? " (range " + a.previous_commit.slice(0, 12) + "…" + a.commit.slice(0, 12) + ")" : "");
    hover.textContent = txt;
  }
  var markerPlugin = {
    hooks: {
      draw: function (u) {
        var ctx = u.ctx;
        ctx.save();
        Object.keys(markers).forEach(function (k) {
          var a = markers[k], x = Math.round(u.valToPos(+k, "x", true));
          if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
          ctx.strokeStyle = a.direction === "regression" ? "#b3261e" : "#146c2e";
          ctx.lineWidth = 2 * devicePixelRatio;
          ctx.setLineDash(a.detection === "open" ? [6, 4] : []);
          ctx.beginPath();
          ctx.moveTo(x, u.bbox.top);
          ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
        });
        ctx.restore();
      },
      setCursor: function (u) { describe(u.cursor.idx); }
    }
  };
  var series = [{}, {label: "value", stroke: "#0b57d0", width: 1.5, points: {show: n <= 300, size: 4, fill: "#0b57d0"},
                     value: function (u, v) { return fmt(v); }}];
  var data = [xs, d.v];
  var bands = [];
  if (hasBand) {
    series.push({label: "p90", stroke: "rgba(11,87,208,0.25)", width: 1, value: function (u, v) { return fmt(v); }});
    series.push({label: "p10", stroke: "rgba(11,87,208,0.25)", width: 1, value: function (u, v) { return fmt(v); }});
    data.push(d.hi, d.lo);
    bands.push({series: [2, 3], fill: "rgba(11,87,208,0.12)"});
  }
  var width = function () { return Math.max(320, el.clientWidth || 900); };
  var opts = {
    width: width(), height: 380, series: series, bands: bands, plugins: [markerPlugin],
    // One build alone would sit on the left edge: give it a build of room on each side.
    scales: {x: {time: false, range: function (u, lo, hi) { return n < 2 ? [lo - 1, hi + 1] : [lo, hi]; }}},
    axes: [{values: axisDates, stroke: "#1b1f24", grid: {stroke: "#e3e7eb"}, space: 110},
           {values: function (u, splits) { return splits.map(fmt); }, stroke: "#1b1f24", grid: {stroke: "#e3e7eb"}, size: 70}],
    cursor: {drag: {x: true, y: false}},
    legend: {show: false}
  };
  var u = new uPlot(opts, data, el);
  window.perfSeriesPlot = u;
  el.dataset.drawn = String(n);
  window.addEventListener("resize", function () { u.setSize({width: width(), height: 380}); });
  function zoom(last) {
    if (!last || last >= n) u.setScale("x", {min: 0, max: n - 1});
    else u.setScale("x", {min: n - last, max: n - 1});
  }
  document.querySelectorAll("[data-zoom]").forEach(function (b) {
    b.addEventListener("click", function () { zoom(+b.dataset.zoom); });
  });
  var kbIdx = n - 1;
  el.addEventListener("keydown", function (ev) {
    if (ev.key === "ArrowLeft" || ev.key === "ArrowRight" || ev.key === "Home" || ev.key === "End") {
      ev.preventDefault();
      kbIdx = ev.key === "Home" ? 0 : ev.key === "End" ? n - 1 : Math.max(0, Math.min(n - 1, kbIdx + (ev.key === "ArrowLeft" ? -1 : 1)));
      var left = u.valToPos(kbIdx, "x"), top = d.v[kbIdx] === null ? 0 : u.valToPos(d.v[kbIdx], "y");
      u.setCursor({left: left, top: top});
      describe(kbIdx);
    }
  });
  el.addEventListener("focus", function () { describe(kbIdx); });
  // A marker opens its alert group: a click near it (not the end of a drag to zoom), or Enter on its build.
  function markerNear(i) {
    if (i === null || i === undefined) return null;
    var px = u.valToPos(i, "x");
    for (var k in markers) if (Math.abs(u.valToPos(+k, "x") - px) <= 4) return markers[k];
    return null;
  }
  var downX = null;
  u.over.addEventListener("mousedown", function (ev) { downX = ev.clientX; });
  u.over.addEventListener("click", function (ev) {
    var a = downX !== null && Math.abs(ev.clientX - downX) < 3 ? markerNear(u.cursor.idx) : null;
    if (a) location.href = a.url;
  });
  el.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && markers[kbIdx]) location.href = markers[kbIdx].url;
  });
  // Alerts of this series: markers on the graph and a list with links.
  var box = document.getElementById("alerts");
  var index = {};
  d.b.forEach(function (b, i) { index[b] = i; });
  fetch(box.dataset.api, {credentials: "same-origin", headers: {"Accept": "application/json"}})
    .then(function (r) { return r.json(); })
    .then(function (j) {
      var list = (j.results || []).filter(function (a) { return a.detection !== "withdrawn"; });
      if (!list.length) { box.innerHTML = "<p>No alerts on this series.</p>"; return; }
      var ul = document.createElement("ul");
      list.forEach(function (a) {
        if (a.build in index) markers[index[a.build]] = a;
        var li = document.createElement("li");
        var link = document.createElement("a");
        link.href = a.url;
        link.textContent = a.direction + " " + (a.rel_change * 100).toFixed(1) + "% at build " + a.build;
        li.appendChild(link);
        li.appendChild(document.createTextNode(" · " + fmt(a.before) + " → " + fmt(a.after) + " " + a.unit +
          " · commit " + (a.commit || "").slice(0, 12) + " · " + a.detection + " · " + a.status + (a.build in index ? "" : " (outside the graph)")));
        ul.appendChild(li);
      });
      box.innerHTML = "";
      box.appendChild(ul);
      el.dataset.alerts = String(list.length);
      u.redraw(false);
    })
    .catch(function () { box.innerHTML = "<p class='error'>Could not load the alerts.</p>"; });
})();
