// Sortable EFS tables: click a header with data-sort="num|text" to sort by its column's
// data-value; click again to reverse. The choice survives the panel's htmx refresh.
(function () {
  "use strict";
  if (window.efsSortInstalled) return;
  window.efsSortInstalled = true;
  var state = {};

  function sortTable(table, col, desc) {
    var th = table.tHead.rows[0].cells[col];
    var numeric = th.dataset.sort === "num";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col].dataset.value || "", y = b.cells[col].dataset.value || "";
      var r = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
      return desc ? -r : r;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c, i) {
      c.setAttribute("aria-sort", i === col ? (desc ? "descending" : "ascending") : "none");
    });
  }

  document.addEventListener("click", function (e) {
    var th = e.target.closest("table[data-sortable] th[data-sort]");
    if (!th) return;
    var table = th.closest("table");
    var key = table.closest("[id]") ? table.closest("[id]").id : "";
    var col = th.cellIndex;
    var prev = state[key];
    var desc = prev && prev.col === col ? !prev.desc : false;
    state[key] = { col: col, desc: desc };
    sortTable(table, col, desc);
  });

  document.addEventListener("htmx:afterSettle", function (e) {
    var root = e.target;
    var s = state[root.id];
    var table = root.querySelector && root.querySelector("table[data-sortable]");
    if (s && table) sortTable(table, s.col, s.desc);
  });
})();
