/* Small site-wide behaviour that must not be inline (strict CSP). */
(function () {
  "use strict";
  // Filter panels start open on wide screens, folded on phones (they would push results down).
  var wide = window.matchMedia("(min-width: 52.01rem)");
  document.querySelectorAll("details[data-open-wide]").forEach(function (details) {
    if (wide.matches) details.open = true;
  });
  // "Select all" over a list's checkboxes (hidden without JavaScript, where it would do nothing).
  document.querySelectorAll("input[data-select-all]").forEach(function (all) {
    var form = all.form;
    var boxes = function () {
      return form.querySelectorAll('input[type="checkbox"][name="' + all.dataset.selectAll + '"]');
    };
    all.hidden = false;
    all.addEventListener("change", function () {
      boxes().forEach(function (box) { box.checked = all.checked; });
    });
    form.addEventListener("change", function (event) {
      if (event.target === all) return;
      var list = Array.prototype.slice.call(boxes());
      all.checked = list.length > 0 && list.every(function (box) { return box.checked; });
      all.indeterminate = !all.checked && list.some(function (box) { return box.checked; });
    });
  });
})();
