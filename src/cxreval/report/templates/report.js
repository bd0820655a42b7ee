/* cxreval report: Plotly config (PNG and SVG download from the mode bar), paginated searchable tables. */
(function () {
  "use strict";
  window.cxrevalConfig = {
    displaylogo: false, responsive: true, modeBarButtonsToRemove: ["sendDataToCloud"],
    toImageButtonOptions: {format: "png", scale: 2},
    modeBarButtonsToAdd: [{
      name: "Download plot as SVG", icon: Plotly.Icons.disk,
      click: function (gd) { Plotly.downloadImage(gd, {format: "svg", filename: gd.id}); }
    }]
  };
  window.cxrevalPlot = function (id, fig) {
    Plotly.newPlot(id, fig.data, fig.layout, window.cxrevalConfig);
  };
  function pager(table) {
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var per = parseInt(table.getAttribute("data-page-rows"), 10) || 20;
    var shown = rows, page = 0;
    var bar = document.createElement("div");
    bar.className = "pager";
    var q = document.createElement("input");
    q.type = "search"; q.placeholder = "Search this table"; q.setAttribute("aria-label", "Search this table");
    var prev = document.createElement("button"); prev.type = "button"; prev.textContent = "‹ previous";
    var next = document.createElement("button"); next.type = "button"; next.textContent = "next ›";
    var info = document.createElement("span"); info.className = "pager-info";
    bar.appendChild(q); bar.appendChild(prev); bar.appendChild(next); bar.appendChild(info);
    function draw() {
      var n = shown.length, pages = Math.max(1, Math.ceil(n / per));
      page = Math.max(0, Math.min(page, pages - 1));
      rows.forEach(function (r) { r.style.display = "none"; });
      shown.slice(page * per, (page + 1) * per).forEach(function (r) { r.style.display = ""; });
      info.textContent = n ? "rows " + (page * per + 1) + "–" + Math.min(n, (page + 1) * per) + " of " + n
                           : "no matching row";
      prev.disabled = page === 0; next.disabled = page >= pages - 1;
    }
    q.addEventListener("input", function () {
      var s = q.value.toLowerCase();
      shown = rows.filter(function (r) { return r.textContent.toLowerCase().indexOf(s) >= 0; });
      page = 0; draw();
    });
    prev.addEventListener("click", function () { page -= 1; draw(); });
    next.addEventListener("click", function () { page += 1; draw(); });
    var scroll = table.parentNode;
    scroll.parentNode.insertBefore(bar, scroll);
    draw();
  }
  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("table.paged"), pager);
  });
})();
