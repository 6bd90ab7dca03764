/* TrajHub trajectory page: time travel, permalinks, filter, find, "show all", JSON, printing.
 *
 * Progressive: the server renders a readable page with the first chunk of cards and links to
 * the next; this script adds the controls and turns the list into a window over the whole
 * trajectory (viewer-list.js: only the cards near the screen are on the page). Every fragment
 * it inserts comes from our own server, already escaped; text from the page is only ever set
 * with textContent. No inline script anywhere (the CSP forbids it).
 */
(function () {
  "use strict";

  var viewer = document.getElementById("viewer");
  var list = document.getElementById("events");
  if (!viewer || !list || !window.TrajHubList) return;
  document.documentElement.classList.add("js");

  var base = viewer.getAttribute("data-base");
  var total = parseInt(viewer.getAttribute("data-total"), 10) || 0;
  var firstStep = parseInt(viewer.getAttribute("data-first"), 10) || 1;

  var tools = document.getElementById("tools");
  var slider = document.getElementById("step-slider");
  var stepStatus = document.getElementById("step-status");
  var findForm = document.getElementById("find-form");
  var findInput = document.getElementById("find-input");
  var findStatus = document.getElementById("find-status");
  var filterBox = document.getElementById("type-filter");
  var filterCount = document.getElementById("filter-count");
  var dimBox = document.getElementById("dim-future");
  var more = document.getElementById("events-more");
  var earlier = document.getElementById("events-before");

  var current = total; // time travel: steps after `current` are "later" (dimmed or hidden)
  var hiddenTypes = {};
  var find = { query: "", steps: [], types: {}, index: -1, hits: 0, matching: {}, offset: 0, matched: 0 };

  if (tools && total > 0) tools.hidden = false;

  // A title clamped to two lines opens on a click (its full text is also its tooltip).
  var heading = document.querySelector(".traj-title-h");
  if (heading && heading.scrollHeight > heading.clientHeight + 2) {
    heading.classList.add("is-clamped");
    heading.addEventListener("click", function () { heading.classList.toggle("is-open"); });
  }

  // ---- the windowed list (viewer-list.js) -------------------------------------------------

  var WHOLE = 80; // steps: a trajectory this short, all on the page already, is not windowed
  var loadingNote = document.getElementById("events-loading");
  var highlighted = { "is-current": null, "is-target": null }; // step of each, kept as cards come and go

  function typeNames() {
    var boxes = filterBox ? filterBox.querySelectorAll("input[name=type]") : [];
    return Array.prototype.map.call(boxes, function (box) { return box.value; });
  }

  var steps = window.TrajHubList.create({
    list: list,
    base: base,
    total: total,
    types: typeNames(),
    whole: total <= WHOLE && list.children.length === total,
    prepare: function (nodes) { prepare(nodes); },
    onStatus: function (state) {
      if (!loadingNote) return;
      loadingNote.hidden = !state;
      loadingNote.textContent = state === "failed" ? "Could not load these steps. Scroll again to retry." : "Loading steps…";
    }
  });
  if (steps.windowed()) {
    document.documentElement.classList.add("windowed");
    // The pager links are for readers without JavaScript: here every step is one scroll away.
    if (more) more.hidden = true;
    if (earlier) earlier.hidden = true;
  }

  function get(url, signal) {
    return fetch(url, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" }, signal: signal })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response;
      });
  }

  // ---- preparing cards --------------------------------------------------------------------

  function cards() {
    return list.children;
  }

  function card(step) {
    return steps.node(step);
  }

  function stepOf(node) {
    return parseInt(node.getAttribute("data-step"), 10);
  }

  function prepare(nodes) {
    // Every card that comes onto the page, first or again: links, classes, find marks.
    for (var i = 0; i < nodes.length; i++) {
      var node = nodes[i];
      var step = stepOf(node);
      var cause = node.getAttribute("data-cause");
      var causeStep = cause !== null ? steps.stepOfId(cause) : undefined;
      if (causeStep !== undefined && !node.querySelector(".ev-cause")) {
        var link = document.createElement("a");
        link.className = "ev-cause";
        link.href = "#step-" + causeStep;
        link.title = "The action this answers";
        link.textContent = "↳ #" + causeStep;
        var meta = node.querySelector(".ev-meta");
        if (meta) meta.insertBefore(link, meta.firstChild);
      }
      node.classList.toggle("is-filtered", !!hiddenTypes[node.getAttribute("data-type")]);
      node.classList.toggle("is-later", step > current);
      node.classList.toggle("has-match", !!find.matching[step]);
      for (var cls in highlighted) {
        node.classList.toggle(cls, highlighted[cls] === step);
        if (cls === "is-current") {
          if (highlighted[cls] === step) node.setAttribute("aria-current", "step");
          else node.removeAttribute("aria-current");
        }
      }
      if (find.query && find.index >= 0 && find.steps[find.index] === step) {
        var first = markText(node, find.query);
        if (first) first.classList.add("find-hit-current");
      }
    }
    list.dispatchEvent(new CustomEvent("trajhub:cards", { detail: { nodes: nodes } }));
  }

  // ---- time travel ------------------------------------------------------------------------

  function visible(node) {
    return node && !node.classList.contains("is-filtered");
  }

  function describe(node) {
    if (!node) return "";
    var title = node.querySelector(".ev-title");
    var parts = [title ? title.textContent : ""];
    var offset = node.getAttribute("data-offset");
    if (offset) parts.push(offset);
    var cost = node.getAttribute("data-cost");
    if (cost) parts.push("$" + parseFloat(cost).toFixed(4) + " so far");
    return parts.filter(Boolean).join(" · ");
  }

  function hidingLater() {
    return current < total && !(dimBox && dimBox.checked);
  }

  function applyTime() {
    var nodes = cards();
    for (var i = 0; i < nodes.length; i++) {
      nodes[i].classList.toggle("is-later", stepOf(nodes[i]) > current);
    }
    viewer.classList.toggle("time-travel", current < total);
    if (slider) slider.value = String(current);
    if (typeof moveStripCursor === "function") moveStripCursor();
    steps.setTime(current, hidingLater());
  }

  function highlight(node, cls) {
    var old = list.querySelectorAll("." + cls);
    for (var i = 0; i < old.length; i++) {
      old[i].classList.remove(cls);
      if (cls === "is-current") old[i].removeAttribute("aria-current");
    }
    highlighted[cls] = node ? stepOf(node) : null;
    if (node) {
      node.classList.add(cls);
      if (cls === "is-current") node.setAttribute("aria-current", "step");
    }
  }

  // Each navigation (slider, keys, a permalink, find) takes a ticket; when its steps have
  // loaded, it scrolls only if no later navigation has started meanwhile. Without it a slow
  // load for "last step" finished after the reader had followed a permalink and scrolled the
  // page away from the step they asked for.
  var navigation = 0;

  function scrollTo(node, block) {
    if (!node) return;
    var details = node.closest("details");
    if (details && !details.open) details.open = true;
    node.scrollIntoView({ block: block || "center", behavior: "auto" });
  }

  function allSteps() {
    return total === 1 ? "1 step" : "All " + total + " steps";
  }

  function keepInAddress(step) {
    // The address names the step on screen, so a copied link opens it; replaceState, not
    // pushState: stepping through 300 steps must not leave 300 entries for the Back button.
    if (!window.history || !history.replaceState) return;
    var hash = "#step-" + step;
    if (window.location.hash !== hash) {
      history.replaceState(history.state, "", window.location.pathname + window.location.search + hash);
    }
  }

  function setCurrent(step, options) {
    options = options || {};
    step = Math.max(1, Math.min(total, step));
    current = step;
    applyTime();
    keepInAddress(step);
    var status = current >= total ? allSteps() : "Step " + current + " of " + total;
    if (stepStatus) stepStatus.textContent = status + (current < total ? " · loading…" : "");
    var ticket = ++navigation;
    return steps.show(step).then(function (node) {
      if (ticket !== navigation && step !== current) return false;
      applyTime();
      node = node || card(step);
      highlight(node, "is-current");
      if (stepStatus) {
        stepStatus.textContent = current >= total ? allSteps() :
          "Step " + current + " of " + total + (node ? " · " + describe(node) : "");
      }
      if (ticket !== navigation) return false;
      if (options.scroll !== false && node) scrollTo(node, options.block || "center");
      return true; // still the latest navigation: a caller may scroll on its behalf
    });
  }

  function topVisibleStep() {
    var nodes = cards();
    for (var i = 0; i < nodes.length; i++) {
      if (!visible(nodes[i])) continue;
      var rect = nodes[i].getBoundingClientRect();
      if (rect.bottom > 80) return stepOf(nodes[i]);
    }
    return nodes.length ? stepOf(nodes[nodes.length - 1]) : 1;
  }

  function cursor() {
    if (current < total) return current;
    return highlighted["is-current"];
  }

  function skipHidden(step, delta) {
    // The next step from `step` on (by `delta`) that the type filter shows; a step whose type
    // is not known yet is fetched to find out.
    while (step >= 1 && step <= total) {
      var type = steps.typeOf(step);
      if (type === null) {
        return steps.show(step).then(function () {
          return steps.typeOf(step) === null || !hiddenTypes[steps.typeOf(step)] ? step : skipHidden(step + delta, delta);
        });
      }
      if (!hiddenTypes[type]) return Promise.resolve(step);
      step += delta;
    }
    return Promise.resolve(null);
  }

  function move(delta) {
    // Before any stepping, start from the step the reader is looking at.
    var from = cursor();
    var step = from === null ? topVisibleStep() - (delta > 0 ? 0 : 1) : from + delta;
    return skipHidden(step, delta).then(function (next) {
      if (next === null) return undefined;
      return setCurrent(next);
    });
  }

  if (slider) {
    var pending = null;
    slider.addEventListener("input", function () {
      var value = parseInt(slider.value, 10);
      if (pending) cancelAnimationFrame(pending);
      pending = requestAnimationFrame(function () {
        pending = null;
        setCurrent(value);
      });
    });
  }

  if (tools) {
    tools.addEventListener("click", function (event) {
      var button = event.target.closest("[data-go]");
      if (!button) return;
      go(button.getAttribute("data-go"));
    });
  }

  function go(where) {
    if (where === "first") setCurrent(1);
    else if (where === "last") {
      // Every step shown again, the reader at the end of the list.
      setCurrent(total, { scroll: false }).then(function (latest) {
        if (!latest) return;
        highlight(null, "is-current");
        var node = card(total) || list.lastElementChild;
        scrollTo(node, "end");
      });
    } else if (where === "print") printAll();
    else move(where === "next" ? 1 : -1);
  }

  if (dimBox) {
    dimBox.addEventListener("change", function () {
      viewer.classList.toggle("hide-later", !dimBox.checked);
      steps.setTime(current, hidingLater());
    });
    viewer.classList.toggle("hide-later", !dimBox.checked);
  }

  // ---- timeline strip: every step as a coloured mark, errors red, screenshots as dots -------
  // Drawn from /timeline (fetched after the page); a click or drag on it moves the slider.
  // SVG attributes and classes only: the CSP forbids style attributes.

  var strip = document.getElementById("timeline");
  var stripCursor = null;
  var SVG = "http://www.w3.org/2000/svg";
  var BINS = 600;

  function svgEl(name, attrs) {
    var node = document.createElementNS(SVG, name);
    for (var key in attrs) node.setAttribute(key, attrs[key]);
    return node;
  }

  function drawTimeline(data) {
    var letters = data.families || "";
    var n = letters.length;
    if (!strip || n < 2) return;
    var bins = Math.min(n, BINS);
    var per = n / bins;
    // Two layers: the marks are stretched to the strip's width (one viewBox unit a bin,
    // preserveAspectRatio none), which would stretch a circle into a wide ellipse too; so the
    // screenshot dots sit in the outer SVG, in percent across and pixels up, and stay round.
    var svg = svgEl("svg", { "class": "tl-svg", width: "100%", height: "16" });
    var marks = svgEl("svg", { viewBox: "0 0 " + bins + " 14", preserveAspectRatio: "none",
      width: "100%", height: "14", x: "0", y: "0", "class": "tl-marks" });
    svg.appendChild(marks);
    var errors = {};
    (data.errors || []).forEach(function (step) { errors[Math.floor((step - 1) / per)] = true; });
    // One <path> per family (each bin a sub-path), not a <rect> per bin: 600 rects were more
    // than half of the page's elements once the list became a window (issue 24).
    var shapes = {};
    for (var b = 0; b < bins; b++) {
      // A bin shows its most frequent family.
      var counts = {};
      var top = letters.charAt(Math.floor(b * per));
      for (var i = Math.floor(b * per); i < Math.floor((b + 1) * per) && i < n; i++) {
        var c = letters.charAt(i);
        counts[c] = (counts[c] || 0) + 1;
        if (counts[c] > (counts[top] || 0)) top = c;
      }
      shapes[top] = (shapes[top] || "") + "M" + b + " 3h1v8h-1z";
      if (errors[b]) shapes.err = (shapes.err || "") + "M" + b + " 0h1v3h-1z";
    }
    Object.keys(shapes).forEach(function (family) {
      marks.appendChild(svgEl("path", { d: shapes[family], "class": "tl tl-" + family }));
    });
    var shots = {};
    (data.screenshots || []).forEach(function (step) { shots[Math.floor((step - 1) / per)] = true; });
    Object.keys(shots).forEach(function (bin) {
      var across = ((+bin + 0.5) / bins) * 100;
      svg.appendChild(svgEl("circle", { cx: across.toFixed(3) + "%", cy: 13, r: 2, "class": "tl-shot" }));
    });
    stripCursor = svgEl("rect", { x: 0, y: 0, width: Math.max(bins / 200, 1), height: 14, "class": "tl-cursor" });
    marks.appendChild(stripCursor);
    strip.appendChild(svg);
    strip.setAttribute("data-bins", String(bins));
    strip.hidden = false;
    moveStripCursor();

    var dragging = false;
    function scrub(event) {
      var box = svg.getBoundingClientRect();
      var fraction = Math.max(0, Math.min(0.9999, (event.clientX - box.left) / box.width));
      setCurrent(Math.floor(fraction * total) + 1);
    }
    svg.addEventListener("pointerdown", function (event) {
      dragging = true;
      if (svg.setPointerCapture) svg.setPointerCapture(event.pointerId);
      scrub(event);
    });
    svg.addEventListener("pointermove", function (event) { if (dragging) scrub(event); });
    svg.addEventListener("pointerup", function () { dragging = false; });
    svg.addEventListener("pointercancel", function () { dragging = false; });
  }

  function moveStripCursor() {
    if (!stripCursor || !strip) return;
    var bins = parseInt(strip.getAttribute("data-bins"), 10) || 1;
    stripCursor.setAttribute("x", String(((current - 1) / Math.max(total, 1)) * bins));
  }

  if (strip && total > 1) {
    get(base + "timeline").then(function (response) { return response.json(); })
      .then(drawTimeline).catch(function () { /* the strip is an extra: the page works without */ });
  }

  // ---- keyboard ---------------------------------------------------------------------------

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    var typing = target && (target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName) ||
      (target.tagName === "INPUT" && !/^(range|checkbox|radio|button|submit)$/.test(target.type)));
    if (typing) {
      if (event.key === "Escape" && target === findInput) findInput.blur();
      return;
    }
    // On the slider itself, the arrows already move it (and its "input" event steps).
    var arrows = target !== slider;
    if (event.key === "j" || (arrows && event.key === "ArrowRight")) {
      event.preventDefault();
      move(1);
    } else if (event.key === "k" || (arrows && event.key === "ArrowLeft")) {
      event.preventDefault();
      move(-1);
    } else if (arrows && (event.key === "Home" || event.key === "End")) {
      event.preventDefault();
      go(event.key === "Home" ? "first" : "last");
    } else if (event.key === "/" && findInput) {
      event.preventDefault();
      findInput.focus();
      findInput.select();
    }
  });

  // ---- permalinks -------------------------------------------------------------------------

  function followHash() {
    var match = /^#step-(\d+)$/.exec(window.location.hash);
    if (!match) return false;
    var step = parseInt(match[1], 10);
    if (step < 1 || step > total) return false;
    var ticket = ++navigation;
    if (step > current) {
      current = step;
      applyTime();
    }
    steps.show(step).then(function (node) {
      if (ticket !== navigation) return;
      var type = steps.typeOf(step);
      if (!node && type !== null && hiddenTypes[type]) {
        hiddenTypes[type] = false;
        syncFilter();
        node = card(step);
      }
      if (!node) return;
      if (step > current) setCurrent(step, { scroll: false });
      highlight(node, "is-target");
      scrollTo(node, "start");
    });
    return true;
  }

  // The reader's place, kept in this history entry, so that Back, Forward and reload return to
  // it (the browser's own restoration cannot: the cards it would scroll to are not there yet).
  var placeTimer = null;
  if ("scrollRestoration" in history) history.scrollRestoration = "manual";

  function rememberPlace() {
    clearTimeout(placeTimer);
    placeTimer = setTimeout(function () {
      var nodes = cards();
      for (var i = 0; i < nodes.length; i++) {
        var rect = nodes[i].getBoundingClientRect();
        if (rect.bottom > 0) {
          var state = Object.assign({}, history.state || {}, {
            viewerStep: stepOf(nodes[i]), viewerOffset: Math.round(rect.top), viewerHash: location.hash
          });
          try { history.replaceState(state, ""); } catch (error) { /* rate limited: next time */ }
          return;
        }
      }
    }, 250);
  }

  function restorePlace() {
    var state = history.state;
    var entry = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
    var returning = entry && (entry.type === "reload" || entry.type === "back_forward");
    if (!returning || !state || !state.viewerStep || state.viewerHash !== location.hash) return false;
    var ticket = ++navigation;
    steps.show(state.viewerStep).then(function (node) {
      if (!node || ticket !== navigation) return;
      window.scrollBy(0, node.getBoundingClientRect().top - state.viewerOffset);
    });
    return true;
  }

  prepare(cards());
  window.addEventListener("hashchange", followHash);
  window.addEventListener("scroll", rememberPlace, { passive: true });
  if (!restorePlace() && !followHash()) {
    if (firstStep > 1) {
      // ?after=N (the no-script pager) with the script on: open at that step.
      steps.show(firstStep).then(function (node) { scrollTo(node, "start"); });
    } else {
      steps.schedule(); // the server's first chunk, cut to the window
    }
  }

  // ---- filter by type ---------------------------------------------------------------------

  function syncFilter() {
    var boxes = filterBox ? filterBox.querySelectorAll("input[name=type]") : [];
    var hidden = 0;
    var hiddenSteps = 0;
    for (var i = 0; i < boxes.length; i++) {
      boxes[i].checked = !hiddenTypes[boxes[i].value];
      if (!boxes[i].checked) {
        hidden++;
        hiddenSteps += parseInt(boxes[i].getAttribute("data-count"), 10) || 0;
      }
    }
    // Both numbers: "2 types" alone hid that 31 steps were gone.
    if (filterCount) {
      filterCount.textContent = hidden ? " (" + hidden + " type" + (hidden === 1 ? "" : "s") + ", " +
        hiddenSteps + " step" + (hiddenSteps === 1 ? "" : "s") + " hidden)" : "";
    }
    var nodes = cards();
    for (var j = 0; j < nodes.length; j++) {
      nodes[j].classList.toggle("is-filtered", !!hiddenTypes[nodes[j].getAttribute("data-type")]);
    }
    var shownSteps = 0;
    for (var k = 0; k < boxes.length; k++) {
      if (boxes[k].checked) shownSteps += parseInt(boxes[k].getAttribute("data-count"), 10) || 0;
    }
    var copy = {};
    for (var type in hiddenTypes) if (hiddenTypes[type]) copy[type] = true;
    steps.setFilter(copy, total ? shownSteps / total : 1);
    // The counts and pages leave the hidden types out: asked again with the new filter.
    if (find.query) runFind(find.query, false);
  }

  if (filterBox) {
    filterBox.addEventListener("change", function (event) {
      if (event.target.name !== "type") return;
      hiddenTypes[event.target.value] = !event.target.checked;
      syncFilter();
    });
    filterBox.addEventListener("click", function (event) {
      var button = event.target.closest("[data-types]");
      if (!button) return;
      var all = button.getAttribute("data-types") === "all";
      var boxes = filterBox.querySelectorAll("input[name=type]");
      for (var i = 0; i < boxes.length; i++) hiddenTypes[boxes[i].value] = !all;
      syncFilter();
    });
  }

  // ---- find -------------------------------------------------------------------------------

  var findRequest = 0;

  // The server answers a page of matches (FIND_PAGE steps from the reader's place, or from a
  // rank) with the counts of all: find.steps is that page, find.offset the rank of its first
  // step among all the matches, find.index the current match within the page. Next and
  // previous past either end of the page ask for the page beyond, so they walk every match of
  // a query that matches 50,000 steps without the client ever holding them all. The reader's
  // filter goes with the request (hide=), so the counts and pages leave hidden steps out.
  var FIND_PAGE = 500;
  // How long after a keystroke the list waits to fill its margins (the cards off screen).
  var FIND_HOLD = 300;

  function emptyFind(query) {
    return { query: query, steps: [], types: {}, index: -1, hits: 0, matching: {}, offset: 0, matched: 0 };
  }

  function showFindStatus() {
    if (!findStatus) return;
    if (!find.query) {
      findStatus.textContent = "";
      return;
    }
    if (!find.matched) {
      findStatus.textContent = "No matches";
      return;
    }
    var position = find.index >= 0 ? find.offset + find.index + 1 : 0;
    findStatus.textContent = (position ? position + " / " : "") + find.matched + " step" +
      (find.matched === 1 ? "" : "s") + " · " + find.hits + " match" + (find.hits === 1 ? "" : "es");
  }

  function clearMarks() {
    var marks = list.querySelectorAll("mark.find-hit");
    for (var i = 0; i < marks.length; i++) {
      var mark = marks[i];
      var parent = mark.parentNode;
      parent.replaceChild(document.createTextNode(mark.textContent), mark);
      parent.normalize();
    }
    var active = list.querySelectorAll(".find-hit-current");
    for (var j = 0; j < active.length; j++) active[j].classList.remove("find-hit-current");
  }

  function markText(node, query) {
    var needle = query.toLowerCase();
    var walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT, null);
    var texts = [];
    while (walker.nextNode()) {
      var parent = walker.currentNode.parentNode;
      if (parent.closest(".ev-json, .more-body")) continue;
      if (walker.currentNode.nodeValue.toLowerCase().indexOf(needle) >= 0) texts.push(walker.currentNode);
    }
    var first = null;
    texts.forEach(function (text) {
      var value = text.nodeValue;
      var lower = value.toLowerCase();
      var fragment = document.createDocumentFragment();
      var at = 0;
      var found;
      while ((found = lower.indexOf(needle, at)) >= 0) {
        fragment.appendChild(document.createTextNode(value.slice(at, found)));
        var mark = document.createElement("mark");
        mark.className = "find-hit";
        mark.textContent = value.slice(found, found + needle.length);
        fragment.appendChild(mark);
        if (!first) first = mark;
        at = found + needle.length;
      }
      fragment.appendChild(document.createTextNode(value.slice(at)));
      text.parentNode.replaceChild(fragment, text);
    });
    return first;
  }

  // Find as you type: the first match from the reader's place is on screen within a few
  // frames of the last keystroke. Each keystroke asks at once (no pause to wait for the next
  // key: a pause spends what the answer has); the request of the letter before is aborted and
  // its answer dropped; each answer is a page, cheap on the server however common the query
  // (a one-letter query matches every step of a long run), so the aborted ones the server
  // still serves are done before the last arrives; answers are kept, so going back a letter
  // asks nothing; and only the cards around the match shown are fetched (viewer-list.js).
  var findCache = new Map();
  var findController = null;

  function hiddenParam() {
    var names = [];
    for (var type in hiddenTypes) if (hiddenTypes[type]) names.push(type);
    return names.length ? "&hide=" + encodeURIComponent(names.sort().join(",")) : "";
  }

  function askFind(query, where) {
    var url = base + "find?q=" + encodeURIComponent(query) + "&limit=" + FIND_PAGE +
      (where.from !== undefined ? "&from=" + where.from : "&offset=" + (where.offset || 0)) + hiddenParam() +
      // The cards around the first match come with the answer: one request a keystroke, not
      // three (the cards' two queued behind the next keystroke's find at 50,000 steps).
      (where.from !== undefined && steps.windowed() ? "&cards=1" : "");
    if (findCache.has(url)) return Promise.resolve(findCache.get(url));
    if (findController) findController.abort();
    var controller = findController = new AbortController();
    return get(url, controller.signal).then(function (response) {
      return response.json();
    }).then(function (data) {
      if (findController === controller) findController = null;
      findCache.set(url, data);
      if (findCache.size > 50) findCache.delete(findCache.keys().next().value);
      return data;
    });
  }

  function takePage(data) {
    if (data.cards) steps.keepCards(data.cards);
    find.steps = data.steps.map(function (row) { return row[0]; });
    find.types = {};
    find.matching = {};
    data.steps.forEach(function (row) {
      find.types[row[0]] = row[2];
      find.matching[row[0]] = true;
    });
    steps.learnTypes(data.steps);
    find.offset = data.offset || 0;
    find.matched = data.matched;
    find.hits = data.total;
    prepare(cards());
  }

  function failed(ticket) {
    return function (error) {
      if (ticket !== findRequest || (error && error.name === "AbortError")) return;
      if (findStatus) findStatus.textContent = "Search failed";
    };
  }

  function runFind(query, jump) {
    var ticket = ++findRequest;
    // Asked first, the page's own work done while the answer comes.
    var asked = query ? askFind(query, { from: jump && jumpFrom ? jumpFrom : topVisibleStep() }) : null;
    clearMarks();
    find = emptyFind(query);
    prepare(cards());
    if (!asked) {
      if (findController) findController.abort();
      showFindStatus();
      return Promise.resolve();
    }
    if (findStatus) findStatus.textContent = "Searching…";
    return asked.then(function (data) {
      if (ticket !== findRequest) return;
      takePage(data);
      // The page starts at the first match from the reader's place (or the first of all).
      if (jump && find.steps.length) showMatch(0);
      else showFindStatus();
    }).catch(failed(ticket));
  }

  // Where find as you type starts from: the reader's place when they began typing, so that
  // each letter looks from there rather than from the previous letter's match.
  var jumpFrom = null;

  // The match of rank `rank` among all, from this page or the page that holds it (the one
  // starting there going forward, the one ending there going back).
  function goToRank(rank, delta) {
    if (rank >= find.offset && rank < find.offset + find.steps.length) {
      showMatch(rank - find.offset);
      return Promise.resolve();
    }
    var ticket = findRequest;
    var start = delta > 0 ? rank : Math.max(0, rank - FIND_PAGE + 1);
    return askFind(find.query, { offset: start }).then(function (data) {
      if (ticket !== findRequest) return;
      takePage(data);
      if (rank - find.offset < find.steps.length) showMatch(rank - find.offset);
    }).catch(failed(ticket));
  }

  function goToMatch(delta) {
    if (!find.matched) return;
    if (find.index >= 0) {
      goToRank((find.offset + find.index + delta + find.matched) % find.matched, delta);
      return;
    }
    // No current match yet: the first from the reader's place (or the last before it).
    var ticket = findRequest;
    askFind(find.query, { from: topVisibleStep() }).then(function (data) {
      if (ticket !== findRequest) return;
      takePage(data);
      if (!find.matched) return showFindStatus();
      if (delta > 0) showMatch(0);
      else goToRank((find.offset - 1 + find.matched) % find.matched, -1);
    }).catch(failed(ticket));
  }

  function showMatch(index) {
    var next = find.steps[index];
    find.index = index;
    showFindStatus();
    var ticket = ++navigation;
    if (next > current) {
      current = next;
      applyTime();
    }
    steps.show(next).then(function (node) {
      if (ticket !== navigation) return;
      if (next > current) setCurrent(next, { scroll: false });
      node = node || card(next);
      if (!node) return;
      clearMarks();
      var first = markText(node, find.query);
      highlight(node, "is-current");
      if (first) {
        first.classList.add("find-hit-current");
        scrollTo(first, "center");
      } else {
        scrollTo(node, "center");
      }
    });
  }

  if (findForm && findInput) {
    var warmed = false;
    findInput.addEventListener("focus", function () {
      jumpFrom = null;
      // A long trajectory's index read into the server ahead of the first keystroke.
      if (!warmed && steps.windowed()) {
        warmed = true;
        get(base + "find?warm=1").catch(function () {});
      }
    });
    findInput.addEventListener("input", function () {
      if (jumpFrom === null) jumpFrom = topVisibleStep();
      var query = findInput.value.trim();
      steps.holdMargins(FIND_HOLD);
      if (query === find.query) return; // a space typed at the end: the same query
      runFind(query, true);
    });
    findForm.addEventListener("submit", function (event) {
      event.preventDefault();
      var query = findInput.value.trim();
      if (query !== find.query) {
        runFind(query, true);
      } else {
        goToMatch(1);
      }
    });
    findInput.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && event.shiftKey) {
        event.preventDefault();
        goToMatch(-1);
      }
    });
    var previous = document.getElementById("find-prev");
    if (previous) previous.addEventListener("click", function () { goToMatch(-1); });
  }

  // ---- printing: every step on request ----------------------------------------------------

  var printNote = document.getElementById("print-note");
  var printing = false;

  function printAll() {
    // The window holds a screenful; a printout of the trajectory needs every step on the page.
    if (printing) return;
    if (!steps.windowed()) {
      window.print(); // every step is on the page already
      return;
    }
    printing = true;
    var at = topVisibleStep();
    if (stepStatus) stepStatus.textContent = "Preparing every step to print…";
    steps.renderAll(function (done) {
      if (stepStatus) stepStatus.textContent = "Preparing every step to print… " + done + " of " + total;
    }).then(function () {
      if (stepStatus) stepStatus.textContent = allSteps();
      if (printNote) printNote.textContent = "";
      window.print();
      // print() returns once the dialog is closed (afterprint fires then too).
      printing = false;
      steps.resume(at).then(function (node) { scrollTo(node, "start"); });
    }, function () {
      printing = false;
      if (stepStatus) stepStatus.textContent = "Could not load every step to print. Try again.";
      steps.resume(at);
    });
  }

  window.addEventListener("beforeprint", function () {
    // Printing the page as it is prints the steps on it: say so, and how to get them all.
    if (!printNote || !steps.windowed()) return;
    var range = steps.range();
    printNote.textContent = range[1] >= range[0] && (range[0] > 1 || range[1] < total)
      ? "This printout holds steps " + range[0] + "–" + range[1] + " of " + total +
        ". To print every step, use “Print all” above the steps."
      : "";
  });

  // ---- "show all" and "Show JSON": fetched when opened ------------------------------------

  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (!(details instanceof HTMLDetailsElement)) return;
    var isMore = details.classList.contains("more");
    var isJson = details.classList.contains("ev-json");
    if (!isMore && !isJson) return;
    var block = isMore ? details.closest(".blk") : null;
    if (block) block.classList.toggle("expanded", details.open);
    if (!details.open || details.getAttribute("data-loaded")) return;
    var body = details.querySelector(isMore ? ".more-body" : ".json-body");
    var src = details.getAttribute("data-src");
    if (!body || !src) return;
    details.setAttribute("data-loaded", "loading");
    body.setAttribute("aria-busy", "true");
    get(src).then(function (response) { return response.text(); }).then(function (html) {
      body.innerHTML = html;
      body.removeAttribute("aria-busy");
      details.setAttribute("data-loaded", "yes");
    }).catch(function () {
      body.removeAttribute("aria-busy");
      details.removeAttribute("data-loaded");
      var note = document.createElement("p");
      note.className = "muted";
      note.textContent = "Could not load this. Close and open again to retry.";
      body.appendChild(note);
    });
  }, true);
})();
