/* TrajHub trajectory page: time travel, permalinks, filter, find, lazy chunks, "show all", JSON.
 *
 * Progressive: the server renders a readable page with the first chunk of cards and links to
 * the next; this script adds the controls and loads the rest as the reader goes. Every fragment
 * it inserts comes from our own server, already escaped; text from the page is only ever set
 * with textContent. No inline script or style anywhere (the CSP forbids both).
 */
(function () {
  "use strict";

  var viewer = document.getElementById("viewer");
  var list = document.getElementById("events");
  if (!viewer || !list) return;
  document.documentElement.classList.add("js");

  var base = viewer.getAttribute("data-base");
  var total = parseInt(viewer.getAttribute("data-total"), 10) || 0;
  var firstStep = parseInt(viewer.getAttribute("data-first"), 10) || 1;
  var nextAfterAttr = viewer.getAttribute("data-next-after");
  var nextAfter = nextAfterAttr ? parseInt(nextAfterAttr, 10) : null; // null: loaded to the end
  var loading = null;
  var generation = 0; // a jump replaces the list: chunks asked for before it are dropped

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
  var loadingBefore = null;
  // A step this far from the loaded ones is jumped to (the chunk around it replaces the list)
  // instead of loading every step in between: #step-1500 of 2,001 fetched 2.3 MB before.
  var JUMP = 150;

  var current = total; // time travel: steps after `current` are "later" (dimmed or hidden)
  var hiddenTypes = {};
  var idToStep = {};
  var find = { query: "", steps: [], types: {}, index: -1, hits: 0, matching: {} };

  if (tools && total > 0) tools.hidden = false;

  // A title clamped to two lines opens on a click (its full text is also its tooltip).
  var heading = document.querySelector(".traj-title-h");
  if (heading && heading.scrollHeight > heading.clientHeight + 2) {
    heading.classList.add("is-clamped");
    heading.addEventListener("click", function () { heading.classList.toggle("is-open"); });
  }

  // ---- loading chunks ---------------------------------------------------------------------

  function get(url) {
    return fetch(url, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response;
      });
  }

  function lastLoaded() {
    var last = list.lastElementChild;
    return last ? parseInt(last.getAttribute("data-step"), 10) : firstStep - 1;
  }

  function loadNext(limit) {
    if (nextAfter === null) return Promise.resolve(false);
    if (loading) return loading;
    var after = nextAfter;
    var url = base + "events?after=" + after + "&limit=" + (limit || 100);
    setMore("Loading steps " + (after + 1) + "…");
    var asked = generation;
    loading = get(url).then(function (response) {
      var header = response.headers.get("X-Next-After");
      return response.text().then(function (html) {
        if (asked !== generation) return true;
        var before = list.lastElementChild;
        list.insertAdjacentHTML("beforeend", html);
        nextAfter = header ? parseInt(header, 10) : null;
        var added = [];
        for (var node = before ? before.nextElementSibling : list.firstElementChild; node; node = node.nextElementSibling) {
          added.push(node);
        }
        prepare(added);
        loading = null;
        setMore(null);
        return true;
      });
    }).catch(function () {
      loading = null;
      setMore("Could not load more steps. Scroll again to retry.");
      return false;
    });
    return loading;
  }

  function addedBetween(first, stop) {
    var added = [];
    for (var node = first; node && node !== stop; node = node.nextElementSibling) added.push(node);
    return added;
  }

  function firstOnScreen() {
    var nodes = cards();
    for (var i = 0; i < nodes.length; i++) {
      if (nodes[i].getBoundingClientRect().bottom > 0) return nodes[i];
    }
    return null;
  }

  function loadPrevious(limit) {
    if (firstStep <= 1) return Promise.resolve(false);
    if (loadingBefore) return loadingBefore;
    var url = base + "events?before=" + (firstStep - 1) + "&limit=" + (limit || 100);
    setBefore("Loading steps before " + firstStep + "…");
    var asked = generation;
    loadingBefore = get(url).then(function (response) {
      var header = response.headers.get("X-Prev-Before");
      return response.text().then(function (html) {
        if (asked !== generation) {
          loadingBefore = null;
          return true;
        }
        // Steps go in above the reader: keep what they are looking at where it is.
        var anchor = firstOnScreen();
        var top = anchor ? anchor.getBoundingClientRect().top : 0;
        var oldFirst = list.firstElementChild;
        list.insertAdjacentHTML("afterbegin", html);
        if (anchor) window.scrollBy(0, anchor.getBoundingClientRect().top - top);
        firstStep = header ? parseInt(header, 10) + 1 : 1;
        list.setAttribute("start", String(firstStep));
        prepare(addedBetween(list.firstElementChild, oldFirst));
        loadingBefore = null;
        setBefore(null);
        return true;
      });
    }).catch(function () {
      loadingBefore = null;
      setBefore("Could not load earlier steps. Scroll again to retry.");
      return false;
    });
    return loadingBefore;
  }

  function jumpTo(step) {
    // The chunk around `step` replaces the list; the rest loads as the reader scrolls.
    var after = Math.max(step - 1 - 20, 0);
    setMore("Loading steps " + (after + 1) + "…");
    var ticket = loading = get(base + "events?after=" + after + "&limit=100").then(function (response) {
      var header = response.headers.get("X-Next-After");
      return response.text().then(function (html) {
        generation++;
        loadingBefore = null;
        list.innerHTML = html;
        firstStep = after + 1;
        list.setAttribute("start", String(firstStep));
        nextAfter = header ? parseInt(header, 10) : null;
        prepare(cards());
        if (loading === ticket) loading = null;
        setMore(null);
        setBefore(null);
        return true;
      });
    }).catch(function () {
      if (loading === ticket) loading = null;
      setMore("Could not load these steps. Try again.");
      return false;
    });
    return ticket;
  }

  function ensureLoaded(step) {
    if (step >= firstStep && step <= lastLoaded()) return Promise.resolve();
    if (step > lastLoaded() && nextAfter === null) return Promise.resolve();
    var far = step > lastLoaded() ? step - lastLoaded() : firstStep - step;
    var next;
    if (far > JUMP) {
      next = (loading || Promise.resolve()).then(function () { return jumpTo(step); });
    } else if (step > lastLoaded()) {
      next = loadNext(Math.min(500, Math.max(100, far + 20)));
    } else {
      next = loadPrevious(Math.min(500, Math.max(100, far + 20)));
    }
    return next.then(function (ok) {
      if (!ok) return undefined;
      return ensureLoaded(step);
    });
  }

  function setBefore(text) {
    if (!earlier) return;
    earlier.hidden = firstStep <= 1;
    var link = earlier.querySelector("a");
    if (link) {
      link.textContent = text || "← Earlier steps (1–" + (firstStep - 1) + ")";
      link.setAttribute("href", "?after=" + Math.max(firstStep - 1 - 100, 0));
    }
  }

  function setMore(text) {
    if (!more) return;
    more.hidden = nextAfter === null;
    if (nextAfter === null) return;
    var link = more.querySelector("a");
    if (link) {
      link.textContent = text || "Next steps (" + (nextAfter + 1) + "–" + total + ") →";
      link.setAttribute("href", "?after=" + nextAfter);
    }
  }

  if (earlier && "IntersectionObserver" in window) {
    new IntersectionObserver(function (entries) {
      if (entries.some(function (entry) { return entry.isIntersecting; })) loadPrevious(100);
    }, { rootMargin: "600px 0px" }).observe(earlier);
  }

  if (more && "IntersectionObserver" in window) {
    new IntersectionObserver(function (entries) {
      // While later steps are hidden (time travel), the end of the list is not the end.
      var hiding = current < lastLoaded() && viewer.classList.contains("hide-later");
      if (!hiding && entries.some(function (entry) { return entry.isIntersecting; })) loadNext(100);
    }, { rootMargin: "1200px 0px" }).observe(more);
  }

  // ---- preparing cards --------------------------------------------------------------------

  function cards() {
    return list.children;
  }

  function card(step) {
    return document.getElementById("step-" + step);
  }

  function stepOf(node) {
    return parseInt(node.getAttribute("data-step"), 10);
  }

  function prepare(nodes) {
    for (var i = 0; i < nodes.length; i++) {
      var node = nodes[i];
      var step = stepOf(node);
      var id = node.getAttribute("data-id");
      if (id !== null) idToStep[id] = step;
      var cause = node.getAttribute("data-cause");
      if (cause !== null && idToStep[cause] !== undefined && !node.querySelector(".ev-cause")) {
        var link = document.createElement("a");
        link.className = "ev-cause";
        link.href = "#step-" + idToStep[cause];
        link.title = "The action this answers";
        link.textContent = "↳ #" + idToStep[cause];
        var meta = node.querySelector(".ev-meta");
        if (meta) meta.insertBefore(link, meta.firstChild);
      }
      node.classList.toggle("is-filtered", !!hiddenTypes[node.getAttribute("data-type")]);
      node.classList.toggle("is-later", step > current);
      node.classList.toggle("has-match", !!find.matching[step]);
    }
  }

  prepare(cards());

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

  function applyTime() {
    var nodes = cards();
    for (var i = 0; i < nodes.length; i++) {
      nodes[i].classList.toggle("is-later", stepOf(nodes[i]) > current);
    }
    viewer.classList.toggle("time-travel", current < total);
    if (slider) slider.value = String(current);
    if (typeof moveStripCursor === "function") moveStripCursor();
  }

  function highlight(node, cls) {
    var old = list.querySelectorAll("." + cls);
    for (var i = 0; i < old.length; i++) {
      old[i].classList.remove(cls);
      if (cls === "is-current") old[i].removeAttribute("aria-current");
    }
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
    return ensureLoaded(step).then(function () {
      if (ticket !== navigation && step !== current) return false;
      applyTime();
      var node = card(step);
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
    return lastLoaded();
  }

  function cursor() {
    if (current < total) return current;
    var node = list.querySelector(".is-current");
    return node ? stepOf(node) : null;
  }

  function move(delta) {
    // Before any stepping, start from the step the reader is looking at.
    var from = cursor();
    var step = from === null ? topVisibleStep() - (delta > 0 ? 0 : 1) : from + delta;
    // Skip steps hidden by the type filter.
    while (step >= 1 && step <= total) {
      var node = card(step);
      if (!node || visible(node)) break;
      step += delta;
    }
    if (step < 1 || step > total) return Promise.resolve();
    return setCurrent(step);
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
    } else move(where === "next" ? 1 : -1);
  }

  if (dimBox) {
    dimBox.addEventListener("change", function () {
      viewer.classList.toggle("hide-later", !dimBox.checked);
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
    for (var b = 0; b < bins; b++) {
      // A bin shows its most frequent family.
      var counts = {};
      var top = letters.charAt(Math.floor(b * per));
      for (var i = Math.floor(b * per); i < Math.floor((b + 1) * per) && i < n; i++) {
        var c = letters.charAt(i);
        counts[c] = (counts[c] || 0) + 1;
        if (counts[c] > (counts[top] || 0)) top = c;
      }
      marks.appendChild(svgEl("rect", { x: b, y: 3, width: 1, height: 8, "class": "tl tl-" + top }));
      if (errors[b]) marks.appendChild(svgEl("rect", { x: b, y: 0, width: 1, height: 3, "class": "tl tl-err" }));
    }
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
    if (!match) return;
    var step = parseInt(match[1], 10);
    if (step < 1 || step > total) return;
    var ticket = ++navigation;
    ensureLoaded(step).then(function () {
      var node = card(step);
      if (!node || ticket !== navigation) return;
      if (step > current) setCurrent(step, { scroll: false });
      if (node.classList.contains("is-filtered")) {
        hiddenTypes[node.getAttribute("data-type")] = false;
        syncFilter();
      }
      highlight(node, "is-target");
      scrollTo(node, "start");
    });
  }

  window.addEventListener("hashchange", followHash);
  followHash();

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
    if (find.query) showFindStatus();
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

  var findTimer = null;
  var findRequest = 0;

  function findable() {
    return find.steps.filter(function (step) { return !hiddenTypes[find.types[step]]; });
  }

  function showFindStatus() {
    if (!findStatus) return;
    if (!find.query) {
      findStatus.textContent = "";
      return;
    }
    var steps = findable();
    if (!steps.length) {
      findStatus.textContent = "No matches";
      return;
    }
    var position = find.index >= 0 ? steps.indexOf(find.steps[find.index]) + 1 : 0;
    findStatus.textContent = (position ? position + " / " : "") + steps.length + " step" +
      (steps.length === 1 ? "" : "s") + " · " + find.hits + " match" + (find.hits === 1 ? "" : "es");
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

  function runFind(query) {
    var ticket = ++findRequest;
    clearMarks();
    find = { query: query, steps: [], types: {}, index: -1, hits: 0, matching: {} };
    prepare(cards());
    if (!query) {
      showFindStatus();
      return Promise.resolve();
    }
    if (findStatus) findStatus.textContent = "Searching…";
    return get(base + "find?q=" + encodeURIComponent(query)).then(function (response) {
      return response.json();
    }).then(function (data) {
      if (ticket !== findRequest) return;
      find.steps = data.steps.map(function (row) { return row[0]; });
      data.steps.forEach(function (row) {
        find.types[row[0]] = row[2];
        find.matching[row[0]] = true;
      });
      find.hits = data.total;
      prepare(cards());
      showFindStatus();
    }).catch(function () {
      if (findStatus) findStatus.textContent = "Search failed";
    });
  }

  function goToMatch(delta) {
    var steps = findable();
    if (!steps.length) return;
    var currentStep = find.index >= 0 ? find.steps[find.index] : null;
    var next;
    if (currentStep === null) {
      var from = topVisibleStep();
      next = delta > 0 ? steps.filter(function (s) { return s >= from; })[0] || steps[0]
        : steps.filter(function (s) { return s < from; }).pop() || steps[steps.length - 1];
    } else {
      var at = steps.indexOf(currentStep);
      next = steps[(at + delta + steps.length) % steps.length];
    }
    find.index = find.steps.indexOf(next);
    showFindStatus();
    var ticket = ++navigation;
    ensureLoaded(next).then(function () {
      if (ticket !== navigation) return;
      if (next > current) setCurrent(next, { scroll: false });
      var node = card(next);
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
    findInput.addEventListener("input", function () {
      clearTimeout(findTimer);
      findTimer = setTimeout(function () { runFind(findInput.value.trim()); }, 250);
    });
    findForm.addEventListener("submit", function (event) {
      event.preventDefault();
      var query = findInput.value.trim();
      if (query !== find.query) {
        clearTimeout(findTimer);
        runFind(query).then(function () { goToMatch(1); });
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
