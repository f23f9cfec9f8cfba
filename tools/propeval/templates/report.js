// propeval report: search and filters over the items, grouped by claim. Reads the page's own text
// (textContent, data-* attributes) and only hides, shows, opens and closes elements: it never
// writes markup, so no corpus text can become code here. The page's Content-Security-Policy lets
// this script alone run (by its sha256).
(function () {
  "use strict";
  var query = document.getElementById("q");
  if (!query) { return; }
  var selects = Array.prototype.slice.call(document.querySelectorAll("select[data-filter]"));
  var shown = document.getElementById("shown");
  var claims = Array.prototype.slice.call(document.querySelectorAll("details.claim")).map(function (el) {
    var head = Array.prototype.slice.call(el.querySelectorAll("summary, .claimhead, .facts"))
      .map(function (x) { return x.textContent; }).join(" ").toLowerCase();
    var rows = Array.prototype.slice.call(el.querySelectorAll("tr[data-status]")).map(function (tr) {
      return { el: tr, text: tr.textContent.toLowerCase() };
    });
    return { el: el, id: el.getAttribute("data-claim"), text: head, rows: rows };
  });
  var total = claims.reduce(function (n, c) { return n + c.rows.length; }, 0);
  var filtering = false;  // a search or filter was on at the last apply()

  function wanted() {
    var out = {};
    selects.forEach(function (s) { if (s.value) { out[s.getAttribute("data-filter")] = s.value; } });
    return out;
  }

  function rowMatches(row, claim, want, words) {
    for (var key in want) {
      if (key === "claim") {
        if (claim.id !== want.claim) { return false; }
      } else if (key === "flag") {
        if ((row.el.getAttribute("data-flag") || "").split("|").indexOf(want.flag) < 0) { return false; }
      } else if (row.el.getAttribute("data-" + key) !== want[key]) {
        return false;
      }
    }
    for (var k = 0; k < words.length; k++) {
      if (row.text.indexOf(words[k]) < 0 && claim.text.indexOf(words[k]) < 0) { return false; }
    }
    return true;
  }

  function apply() {
    var want = wanted();
    var words = query.value.toLowerCase().split(/\s+/).filter(Boolean);
    var active = words.length > 0 || Object.keys(want).length > 0;
    var items = 0, groups = 0;
    claims.forEach(function (c) {
      var seen = 0;
      c.rows.forEach(function (r) {
        var ok = rowMatches(r, c, want, words);
        r.el.hidden = !ok;
        if (ok) { seen++; }
      });
      c.el.hidden = seen === 0;
      // A search opens the claims it found; clearing it closes them again. A claim opened by
      // hand while nothing is searched stays as it is.
      if (active) { c.el.open = seen > 0; } else if (filtering) { c.el.open = false; }
      items += seen;
      if (seen) { groups++; }
    });
    filtering = active;
    shown.textContent = active
      ? items + " of " + total + " item(s) in " + groups + " claim(s)"
      : total + " item(s) in " + claims.length + " claim(s)";
  }

  function openAll(open) {
    claims.forEach(function (c) { if (!c.el.hidden) { c.el.open = open; } });
  }

  query.addEventListener("input", apply);
  selects.forEach(function (s) { s.addEventListener("change", apply); });
  document.getElementById("expand").addEventListener("click", function () { openAll(true); });
  document.getElementById("collapse").addEventListener("click", function () { openAll(false); });
  apply();
}());
