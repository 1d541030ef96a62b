/* Client-side filtering and sorting of tables: <input data-filter-table=ID>, <input data-only-sig=ID>,
   <th><button data-sort="num|text" data-col=N>. No dependencies. */
(function () {
  "use strict";
  function applyFilter(table) {
    var text = document.querySelector('[data-filter-table="' + table.id + '"]');
    var sig = document.querySelector('[data-only-sig="' + table.id + '"]');
    var q = text ? text.value.trim().toLowerCase() : "";
    var only = sig ? sig.checked : false;
    var shown = 0;
    table.tBodies[0].querySelectorAll("tr").forEach(function (tr) {
      var hay = (tr.dataset.text || tr.textContent).toLowerCase();
      var ok = (!q || q.split(/\s+/).every(function (w) { return hay.indexOf(w) >= 0; })) && (!only || tr.dataset.sig === "1");
      tr.hidden = !ok;
      if (ok) shown++;
    });
    table.dataset.shown = shown;
  }
  document.querySelectorAll("[data-filter-table], [data-only-sig]").forEach(function (el) {
    var id = el.dataset.filterTable || el.dataset.onlySig;
    var table = document.getElementById(id);
    if (!table) return;
    el.addEventListener("input", function () { applyFilter(table); });
    el.addEventListener("change", function () { applyFilter(table); });
  });
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th button[data-sort]").forEach(function (btn) {
      btn.addEventListener("click", function () {
        var col = +btn.dataset.col, num = btn.dataset.sort === "num";
        var th = btn.closest("th");
        var asc = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
          if (num) {
            var fx = parseFloat(x), fy = parseFloat(y);
            var nx = isNaN(fx), ny = isNaN(fy);
            if (nx || ny) return nx === ny ? 0 : nx ? 1 : -1;   // blanks last
            if (btn.textContent.trim() === "Change") { fx = Math.abs(fx); fy = Math.abs(fy); }
            return asc ? fx - fy : fy - fx;
          }
          return asc ? String(x).localeCompare(String(y)) : String(y).localeCompare(String(x));
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
