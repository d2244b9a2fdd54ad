// Time-series charts with uPlot. Markup:
//   <div class="timeseries" data-source="ID" data-height="220"></div>
//   {{ chart_data|json_script:"ID" }}
// where the JSON is {"x": [unix seconds, ...],
//                    "series": [{"label": "Read", "unit": "MiB/s", "values": [1.2, null, ...],
//                                "dash": false, "scale": "y"}, ...]}.
// null values are gaps and are drawn as gaps, never as zero. Charts are (re)drawn on load and
// after every htmx swap, and follow their container's width. Times are written as the rest of
// the app writes them: 24-hour ISO (2026-11-25 04:08) in the viewer's time zone (data-tz, the
// zone the server rendered the page in); a chart of one point spans an hour around it.
(function () {
  "use strict";
  var D = 86400, H = 3600, M = 60, NL = "\n";
  // uPlot's time axis: per tick spacing, the tick's text and what to add where a year, month,
  // day, hour or minute begins (uPlot's own table, with 24-hour ISO formats).
  var STAMPS = [
    [D * 365, "{YYYY}", null, null, null, null, null, null, 1],
    [D * 28, "{YYYY}-{MM}", null, null, null, null, null, null, 1],
    [D, "{MM}-{DD}", NL + "{YYYY}", null, null, null, null, null, 1],
    [H, "{HH}:{mm}", NL + "{YYYY}-{MM}-{DD}", null, NL + "{MM}-{DD}", null, null, null, 1],
    [M, "{HH}:{mm}", NL + "{YYYY}-{MM}-{DD}", null, NL + "{MM}-{DD}", null, null, null, 1],
    [1, ":{ss}", NL + "{YYYY}-{MM}-{DD} {HH}:{mm}", null, NL + "{MM}-{DD} {HH}:{mm}", null,
      NL + "{HH}:{mm}", null, 1],
  ];
  var MIN_SPAN = H;

  // The x scale: the data's own span, or an hour around it when it is shorter (one point).
  function timeScale(xs) {
    var lo = Infinity, hi = -Infinity;
    xs.forEach(function (x) { if (x != null) { lo = Math.min(lo, x); hi = Math.max(hi, x); } });
    if (lo > hi || hi - lo >= MIN_SPAN) return { time: true };
    var middle = (lo + hi) / 2;
    return { time: true, auto: false, range: [middle - MIN_SPAN / 2, middle + MIN_SPAN / 2] };
  }
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
    var zone = el.dataset.tz;
    var series = [{ value: "{YYYY}-{MM}-{DD} {HH}:{mm}:{ss}" }].concat(data.series.map(function (s, i) {
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
    var axes = [{ stroke: fg, grid: { stroke: line }, ticks: { stroke: line }, values: STAMPS }];
    Object.keys(scales).forEach(function (scale, i) {
      axes.push({ scale: scale, label: scales[scale], side: i === 0 ? 3 : 1, stroke: fg,
                  grid: { show: i === 0, stroke: line }, ticks: { stroke: line } });
    });
    var opts = {
      width: Math.max(el.clientWidth, 280),
      height: parseInt(el.dataset.height || "220", 10),
      series: series,
      axes: axes,
      scales: { x: timeScale(data.x) },
      legend: { live: true },
    };
    if (zone) {
      opts.tzDate = function (ts) { return uPlot.tzDate(new Date(ts * 1e3), zone); };
    }
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
