// Every page: tell the server the browser's time zone (a cookie, read by
// apps/accounts/timezones.py), so that times are shown in it from the next page on.
(function () {
  "use strict";
  try {
    var tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (tz && document.cookie.indexOf("vigil_tz=" + encodeURIComponent(tz)) === -1) {
      document.cookie = "vigil_tz=" + encodeURIComponent(tz) + "; path=/; max-age=31536000; SameSite=Lax";
    }
  } catch (e) { /* an old browser: times stay in UTC */ }
})();

// A table wider than a phone scrolls inside its own box (vigil.css): make such a box reachable
// from the keyboard (focusable, so arrow keys scroll it), and only while it does scroll.
(function () {
  "use strict";
  function mark(root) {
    (root || document).querySelectorAll("main table, .scroll-x").forEach(function (box) {
      if (box.scrollWidth > box.clientWidth + 1) {
        box.setAttribute("tabindex", "0");
      } else if (box.getAttribute("tabindex") === "0") {
        box.removeAttribute("tabindex");
      }
    });
  }
  var timer = null;
  function later() { clearTimeout(timer); timer = setTimeout(function () { mark(); }, 150); }
  document.addEventListener("DOMContentLoaded", function () { mark(); });
  window.addEventListener("resize", later);
  document.addEventListener("htmx:afterSettle", later);
})();
