// Time-series charts with uPlot. Markup:
//   <div class="timeseries" data-source="ID" data-height="220"></div>
//   {{ chart_data|json_script:"ID" }}
// where the JSON is {"x": [unix seconds, ...],
//                    "series": [{"label": "Read", "unit": "MiB/s", "values": [1.2, null, ...],
//                                "dash": false, "scale": "y"}, ...]}.
// null values are gaps and are drawn as gaps, never as zero. Charts are (re)drawn on load and
// after every htmx swap, and follow their container's width.
(function () {
  "use strict";
  // Colours come from the stylesheet, so charts follow the light or dark scheme.
  function cssVar(name, fallback) {
    var value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    return value || fallback;
  }
  var defaults = ["#0969da", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#57606a"];
  function palette() {
    return defaults.map(function (fallback, i) { return cssVar("--chart-" + (i + 1), fallback); });
  }

  function draw(el) {
    if (el._uplot) { el._uplot.destroy(); el._uplot = null; }
    var source = document.getElementById(el.dataset.source);
    if (!source || typeof uPlot === "undefined") return;
    var data = JSON.parse(source.textContent);
    var scales = {};
    var colours = palette();
    var fg = cssVar("--muted", "#5b6470");
    var line = cssVar("--line", "#d9dde3");
    var series = [{}].concat(data.series.map(function (s, i) {
      var scale = s.scale || "y";
      scales[scale] = scales[scale] || s.unit || "";
      return {
        label: s.label + (s.unit ? " (" + s.unit + ")" : ""),
        stroke: s.color || colours[i % colours.length],
        width: 1.5,
        dash: s.dash ? [6, 4] : undefined,
        scale: scale,
        spanGaps: false,
        value: function (u, v) { return v == null ? "–" : v.toFixed(2); },
      };
    }));
    var axes = [{ stroke: fg, grid: { stroke: line }, ticks: { stroke: line } }];
    Object.keys(scales).forEach(function (scale, i) {
      axes.push({ scale: scale, label: scales[scale], side: i === 0 ? 3 : 1, stroke: fg,
                  grid: { show: i === 0, stroke: line }, ticks: { stroke: line } });
    });
    var opts = {
      width: Math.max(el.clientWidth, 280),
      height: parseInt(el.dataset.height || "220", 10),
      series: series,
      axes: axes,
      scales: { x: { time: true } },
      legend: { live: true },
    };
    var columns = [data.x].concat(data.series.map(function (s) { return s.values; }));
    el._uplot = new uPlot(opts, columns, el);
  }

  function drawAll(root) {
    (root || document).querySelectorAll(".timeseries").forEach(draw);
  }

  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      document.querySelectorAll(".timeseries").forEach(function (el) {
        if (el._uplot) el._uplot.setSize({ width: Math.max(el.clientWidth, 280),
                                           height: el._uplot.height });
      });
    }, 150);
  });
  document.addEventListener("DOMContentLoaded", function () { drawAll(document); });
  document.addEventListener("htmx:afterSettle", function (e) { drawAll(e.target); });
})();
