// Refreshes the server-written countdown every minute and remembers the reader's time
// zone in a cookie for the next page; the page reads fine without it.
(function () {
  try {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone && document.cookie.indexOf("scriba_tz=") < 0) {
      document.cookie = "scriba_tz=" + encodeURIComponent(zone) + "; path=/; max-age=31536000; samesite=lax";
    }
  } catch (e) { /* no Intl: the server's zone stays */ }
  var nodes = document.querySelectorAll("time[data-countdown][data-live]");
  if (!nodes.length || !window.Intl || !Intl.RelativeTimeFormat) return;
  var lang = document.documentElement.lang || "en";
  var fmt = new Intl.RelativeTimeFormat(lang, { numeric: "auto" });
  var started = Date.now();
  function tick() {
    nodes.forEach(function (node) {
      var out = node.parentNode.querySelector(".countdown");
      var gameNow = Date.parse(node.getAttribute("data-now")) || started;
      var left = (Date.parse(node.getAttribute("datetime")) - gameNow - (Date.now() - started)) / 1000;
      var units = [["day", 86400], ["hour", 3600], ["minute", 60]];
      for (var i = 0; i < units.length; i++) {
        if (Math.abs(left) >= units[i][1] * 1.5 || i === units.length - 1) {
          out.textContent = fmt.format(Math.round(left / units[i][1]), units[i][0]);
          break;
        }
      }
    });
  }
  setInterval(tick, 60000);
})();
