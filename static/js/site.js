/* Small site-wide behaviour that must not be inline (strict CSP). */
(function () {
  "use strict";
  // Filter panels start open on wide screens, folded on phones (they would push results down).
  var wide = window.matchMedia("(min-width: 52.01rem)");
  document.querySelectorAll("details[data-open-wide]").forEach(function (details) {
    if (wide.matches) details.open = true;
  });
})();
