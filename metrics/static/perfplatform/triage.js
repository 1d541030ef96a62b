/* Triage without a page reload: forms marked data-triage are POSTed with fetch (CSRF token in the
   X-CSRFToken header and the form); reassignment uses PATCH /api/v1/alerts/{id}. Without JavaScript the
   forms still work as plain POSTs. */
(function () {
  "use strict";
  function csrf() {
    var el = document.querySelector('input[name="csrfmiddlewaretoken"]');
    return el ? el.value : "";
  }
  var status = document.getElementById("triage-status");
  function say(msg, bad) {
    if (!status) return;
    status.textContent = msg;
    status.classList.toggle("error", !!bad);
  }
  document.querySelectorAll("form[data-triage]").forEach(function (form) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var data = new FormData(form);
      if (ev.submitter && ev.submitter.name) data.set(ev.submitter.name, ev.submitter.value);
      var buttons = form.querySelectorAll("button");
      buttons.forEach(function (b) { b.disabled = true; });
      fetch(form.getAttribute("action") || location.pathname, {
        method: "POST", body: data, credentials: "same-origin",
        headers: {"X-CSRFToken": csrf(), "Accept": "application/json"}
      }).then(function (r) {
        return r.json().then(function (j) { return {ok: r.ok, j: j}; });
      }).then(function (res) {
        if (!res.ok) { say(res.j.error || res.j.message || "Triage failed", true); return; }
        var st = data.get("status"), target = data.get("alert");
        if (target === "all") {
          var root = form.closest("article") || document;
          root.querySelectorAll("[data-alert-status]").forEach(function (el) { el.textContent = st; });
        } else {
          document.querySelectorAll('[data-alert-status="' + target + '"]').forEach(function (el) { el.textContent = st; });
        }
        var gs = (form.closest("article") || document).querySelector("[data-group-status]");
        if (gs) { gs.textContent = res.j.group_status; gs.className = "badge status-" + res.j.group_status; }
        say(res.j.message + "; group is now " + res.j.group_status + ".");
      }).catch(function () { say("Network error: nothing was changed.", true); })
        .finally(function () { buttons.forEach(function (b) { b.disabled = false; }); });
    });
  });
  document.querySelectorAll("form[data-reassign]").forEach(function (form) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var id = form.dataset.reassign, target = parseInt(form.elements.namedItem("target").value, 10);
      fetch("/api/v1/alerts/" + id, {
        method: "PATCH", credentials: "same-origin",
        headers: {"Content-Type": "application/json", "X-CSRFToken": csrf(), "Accept": "application/json"},
        body: JSON.stringify({status: "reassigned", reassigned_to: target})
      }).then(function (r) {
        return r.json().then(function (j) { return {ok: r.ok, j: j}; });
      }).then(function (res) {
        if (!res.ok) { say((res.j.errors || [{message: "Reassignment failed"}])[0].message, true); return; }
        document.querySelectorAll('[data-alert-status="' + id + '"]').forEach(function (el) { el.textContent = "reassigned"; });
        say("Alert " + id + " reassigned to group " + target + ".");
      }).catch(function () { say("Network error: nothing was changed.", true); });
    });
  });
})();
