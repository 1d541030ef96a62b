/* Team dashboard: select alert groups and triage them together (one POST with the CSRF token; without
   JavaScript the form posts and redirects back), and filter the metric families by text. */
(function () {
  "use strict";
  var form = document.querySelector("form[data-bulk-triage]");
  var status = document.getElementById("triage-status");
  function say(msg, bad) { if (status) { status.textContent = msg; status.classList.toggle("error", !!bad); } }
  function boxes() { return Array.prototype.slice.call(document.querySelectorAll('input[name="group"][form="bulk"]')); }
  function count() {
    var n = boxes().filter(function (b) { return b.checked; }).length;
    var out = document.querySelector("[data-selected-count]");
    if (out) out.textContent = n + " selected";
    return n;
  }
  if (form) {
    var all = form.querySelector("[data-select-all]");
    all.addEventListener("change", function () { boxes().forEach(function (b) { b.checked = all.checked; }); count(); });
    boxes().forEach(function (b) { b.addEventListener("change", count); });
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      if (!count()) { say("Select at least one alert group first.", true); return; }
      var data = new FormData(form);
      if (ev.submitter && ev.submitter.name) data.set(ev.submitter.name, ev.submitter.value);
      var buttons = form.querySelectorAll("button");
      buttons.forEach(function (b) { b.disabled = true; });
      fetch(form.action, {method: "POST", body: data, credentials: "same-origin",
                          headers: {"Accept": "application/json", "X-CSRFToken": data.get("csrfmiddlewaretoken")}})
        .then(function (r) { return r.json().then(function (j) { return {ok: r.ok, j: j}; }); })
        .then(function (res) {
          if (!res.ok) { say(res.j.error || "Triage failed", true); return; }
          var st = data.get("status");
          Object.keys(res.j.groups).forEach(function (id) {
            var art = document.getElementById("group-" + id);
            if (!art) return;
            var badge = art.querySelector("[data-group-status]");
            badge.textContent = res.j.groups[id];
            badge.className = "badge status-" + res.j.groups[id];
            art.querySelectorAll("[data-alert-status]").forEach(function (e) { e.textContent = st; });
            var cb = art.querySelector('input[name="group"]');
            if (cb) cb.checked = false;
          });
          all.checked = false;
          count();
          say(res.j.message + ".");
        })
        .catch(function () { say("Network error: nothing was changed.", true); })
        .finally(function () { buttons.forEach(function (b) { b.disabled = false; }); });
    });
  }
  var filter = document.querySelector("[data-filter-families]");
  if (filter) {
    filter.addEventListener("input", function () {
      var words = filter.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
      document.querySelectorAll("#" + filter.dataset.filterFamilies + " details").forEach(function (d) {
        var shown = 0;
        d.querySelectorAll("tbody tr").forEach(function (tr) {
          var hay = (tr.dataset.text || "").toLowerCase() + " " + d.dataset.family;
          var ok = words.every(function (w) { return hay.indexOf(w) >= 0; });
          tr.hidden = !ok;
          if (ok) shown++;
        });
        d.hidden = shown === 0;
        if (words.length && shown) d.open = true;
      });
      if (window.perfSparklines) window.perfSparklines();
    });
  }
})();
