/* /compare/: the page renders the first aligned rows; the rest come from /compare/rows in
 * chunks as the reader nears the end of the table. Without JavaScript the pager links page on
 * (?from=N). No inline script or style (strict CSP). */
(function () {
  "use strict";
  var table = document.getElementById("cmp-table");
  var more = document.getElementById("cmp-more");
  if (!table || !more || !("IntersectionObserver" in window) || !window.fetch) return;
  var body = table.tBodies[0];
  var range = document.getElementById("cmp-range");
  var link = more.querySelector("a");
  var total = parseInt(more.getAttribute("data-total"), 10);
  var next = parseInt(more.getAttribute("data-next"), 10);
  var first = parseInt(table.getAttribute("data-start"), 10) || 1;
  var loading = false;

  function load() {
    if (loading || isNaN(next)) return;
    loading = true;
    var from = next;
    link.textContent = "Loading rows " + (from + 1) + "…";
    var url = "/compare/rows?a=" + encodeURIComponent(table.getAttribute("data-a")) +
      "&b=" + encodeURIComponent(table.getAttribute("data-b")) + "&from=" + from;
    fetch(url, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        var header = response.headers.get("X-Next-From");
        return response.text().then(function (html) {
          body.insertAdjacentHTML("beforeend", html);
          next = header ? parseInt(header, 10) : NaN;
          var shown = isNaN(next) ? total : next;
          if (range) range.textContent = first + "–" + shown;
          if (isNaN(next)) {
            observer.disconnect();
            more.hidden = true;
          } else {
            link.textContent = "Next rows (" + (next + 1) + "–" + total + ") →";
            link.setAttribute("href", link.getAttribute("href").replace(/from=\d+/, "from=" + next));
          }
          loading = false;
          // Still in view (a tall window, a short chunk): keep going.
          if (!isNaN(next) && more.getBoundingClientRect().top < window.innerHeight + 800) load();
        });
      })
      .catch(function () {
        loading = false;
        link.textContent = "Could not load more rows. Next rows (" + (next + 1) + "–" + total + ") →";
      });
  }

  var observer = new IntersectionObserver(function (entries) {
    if (entries.some(function (entry) { return entry.isIntersecting; })) load();
  }, { rootMargin: "800px 0px" });
  observer.observe(more);
})();
