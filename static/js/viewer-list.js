/* TrajHub trajectory page: the windowed list of steps (issue 24), used by viewer.js.
 *
 * The page holds only the cards near the viewport (a margin above and below, more kept until they
 * are KEEP margins away) and stands in for every other step with the list's own padding: above the
 * first card the sum of the heights of the steps before it, below the last the sum of those
 * after; a step's height is measured once it has been on the page, estimated (the mean of the
 * measured ones) before. So the document keeps the length of the whole trajectory (the
 * scrollbar, a drag to its middle, the end key) while it holds a few hundred elements however
 * long the run and however far the reader goes: a full scroll of 2,001 steps kept 40,000
 * elements before. Padding, not spacer elements: no element of ours among the cards, and no
 * style attribute in markup (the CSP allows style set from script, which this is).
 *
 * Cards come from the server's `events` fragments (already escaped), kept as HTML strings in a
 * bounded cache; a card leaving the page is kept as it is then (its opened "show all" or JSON
 * with it). The browser's own scroll anchoring is off (html.windowed): this module keeps the
 * card the reader looks at where it is whenever cards come or go or estimates change.
 */
(function () {
  "use strict";

  // px rendered beyond each edge of the viewport: a third of a screen, at least MARGIN_MIN.
  // Cards come from cached HTML in the same frame and fetches run a chunk further ahead, so a
  // small margin shows no gaps while scrolling; one screen each side held 610 elements at the
  // peak of a full scroll, more than Inspect's virtual list (465) on the same 2,001 messages.
  var MARGIN_MIN = 300;
  var KEEP = 1.5; // cards already on the page stay until they are this many margins away
  var CHUNK = 40; // steps per fetch while scrolling
  var JUMP_BEFORE = 4; // steps fetched before a step jumped to, and after it:
  var JUMP_AFTER = 14;
  var MAX_CARDS = 160; // never more cards on the page than this, whatever their height
  var MAX_CACHED = 600; // HTML strings kept for steps off the page
  var MAX_PAD = 15e6; // px: Chromium lays out up to about 33 million
  var DEFAULT_HEIGHT = 160;

  function create(options) {
    var list = options.list;
    var base = options.base;
    var total = options.total;
    var prepare = options.prepare || function () {};
    var onStatus = options.onStatus || function () {};

    var heights = new Float64Array(total + 2); // px a step takes with the gap after it; 0: not measured
    var measuredSum = 0;
    var measuredCount = 0;
    var types = new Uint16Array(total + 2); // index into typeNames; 0: not known yet
    var typeNames = [""];
    var typeIndex = {};
    var cache = new Map(); // step -> card HTML
    var nodes = new Map(); // step -> its <li> on the page
    var ids = {}; // original event id -> step (for "the action this answers")
    var lo = 1;
    var hi = 0; // the window: steps lo..hi are on the page (those shown); empty when hi < lo
    var padTop = 0;
    var padBottom = 0;
    // A short trajectory the server sent whole stays whole (nothing to gain, and the browser's
    // own find then sees every step).
    var windowing = !options.whole;
    var scheduled = 0;
    var hiddenTypes = {};
    var visibleFraction = 1;
    var current = total;
    var hidingLater = false;
    var scrollFetch = null; // {controller, from, to}
    var navController = null;
    var failedAt = 0;
    var lastAnchor = null;
    var focus = 1;
    var gap = parseFloat(getComputedStyle(list).rowGap) || 0;
    var template = document.createElement("template");

    (options.types || []).forEach(typeId);

    function typeId(name) {
      if (!typeIndex[name]) {
        typeNames.push(name);
        typeIndex[name] = typeNames.length - 1;
      }
      return typeIndex[name];
    }

    function stepOf(node) {
      return parseInt(node.getAttribute("data-step"), 10);
    }

    // ---- what a step takes on the page ---------------------------------------------------

    function knownHidden(step) {
      if (hidingLater && step > current) return true;
      var type = types[step];
      return type !== 0 && !!hiddenTypes[typeNames[type]];
    }

    function shown(step) {
      return !knownHidden(step);
    }

    function estimate() {
      return measuredCount ? measuredSum / measuredCount : DEFAULT_HEIGHT;
    }

    function height(step) {
      if (knownHidden(step)) return 0;
      if (types[step] === 0) return estimate() * visibleFraction;
      return heights[step] || estimate();
    }

    function sum(from, to) {
      var size = 0;
      for (var step = from; step <= to; step++) size += height(step);
      return size;
    }

    function record(step, size) {
      if (!(size > 0)) return;
      if (heights[step]) {
        measuredSum -= heights[step];
        measuredCount--;
      }
      heights[step] = size;
      measuredSum += size;
      measuredCount++;
    }

    function measure() {
      var kids = list.children;
      var previous = null;
      var previousTop = 0;
      for (var i = 0; i < kids.length; i++) {
        var rect = kids[i].getBoundingClientRect();
        if (previous) record(stepOf(previous), rect.top - previousTop);
        previous = kids[i];
        previousTop = rect.top;
        if (i === kids.length - 1) record(stepOf(kids[i]), rect.height + gap);
      }
    }

    function available(step) {
      return nodes.has(step) || cache.has(step) || knownHidden(step);
    }

    // ---- learning cards ------------------------------------------------------------------

    function learn(node) {
      var step = stepOf(node);
      var type = node.getAttribute("data-type");
      if (type !== null) types[step] = typeId(type);
      var id = node.getAttribute("data-id");
      if (id !== null) ids[id] = step;
      return step;
    }

    function keep(html) {
      template.innerHTML = html;
      var kids = template.content.children;
      var count = 0;
      for (var i = 0; i < kids.length; i++) {
        var step = learn(kids[i]);
        if (step >= 1 && step <= total && !nodes.has(step)) cache.set(step, kids[i].outerHTML);
        count++;
      }
      template.innerHTML = "";
      trimCache();
      return count;
    }

    function trimCache() {
      if (cache.size <= MAX_CACHED) return;
      var middle = focus; // where the reader is, or is going: not the window left behind
      var steps = Array.from(cache.keys());
      steps.sort(function (x, y) { return Math.abs(y - middle) - Math.abs(x - middle); });
      for (var i = 0; i < steps.length && cache.size > MAX_CACHED; i++) cache.delete(steps[i]);
    }

    function learnTypes(rows) {
      // [[step, hits, type], ...] from /find: types of steps not fetched yet.
      for (var i = 0; i < rows.length; i++) {
        var step = rows[i][0];
        if (step >= 1 && step <= total && typeof rows[i][2] === "string") types[step] = typeId(rows[i][2]);
      }
    }

    // ---- fetching ------------------------------------------------------------------------

    function get(url, signal) {
      return fetch(url, {
        credentials: "same-origin", headers: { "X-Requested-With": "fetch" }, signal: signal
      }).then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      });
    }

    function fetchAfter(after, limit, signal) {
      return get(base + "events?after=" + after + "&limit=" + limit, signal).then(keep);
    }

    function fetchBefore(before, limit, signal) {
      return get(base + "events?before=" + before + "&limit=" + limit, signal).then(keep);
    }

    function ensure(from, to, signal) {
      // Steps from..to in the cache (or known to be hidden); fetched from `from` on.
      from = Math.max(1, from);
      to = Math.min(total, to);
      var missing = 0;
      for (var step = from; step <= to; step++) {
        if (!available(step)) {
          missing = step;
          break;
        }
      }
      if (!missing) return Promise.resolve(true);
      var last = to;
      while (last > missing && available(last)) last--;
      return fetchAfter(missing - 1, Math.max(last - missing + 1, 1), signal).then(function (count) {
        if (!count) return false;
        return ensure(missing + 1, to, signal);
      });
    }

    function fetchFor(missing, pivot) {
      if (scrollFetch) {
        if (missing >= scrollFetch.from && missing <= scrollFetch.to) return;
        scrollFetch.controller.abort(); // the reader has gone elsewhere meanwhile
      }
      if (missing === failedAt) return;
      focus = pivot;
      var controller = new AbortController();
      var from;
      var to;
      var request;
      if (missing === pivot) {
        from = Math.max(1, missing - JUMP_BEFORE);
        to = Math.min(total, missing + JUMP_AFTER);
        request = fetchAfter(from - 1, to - from + 1, controller.signal);
      } else if (missing > pivot) {
        from = missing;
        to = Math.min(total, missing + CHUNK - 1);
        request = fetchAfter(missing - 1, CHUNK, controller.signal);
      } else {
        from = Math.max(1, missing - CHUNK + 1);
        to = missing;
        request = fetchBefore(missing, CHUNK, controller.signal);
      }
      var mine = scrollFetch = { controller: controller, from: from, to: to };
      onStatus("loading");
      request.then(function (count) {
        if (scrollFetch === mine) scrollFetch = null;
        if (!count) failedAt = missing;
        onStatus(null);
        schedule();
      }, function (error) {
        if (scrollFetch === mine) scrollFetch = null;
        if (error && error.name === "AbortError") return;
        failedAt = missing;
        onStatus("failed");
      });
    }

    // ---- the window ----------------------------------------------------------------------

    function anchor() {
      var kids = list.children;
      for (var i = 0; i < kids.length; i++) {
        var rect = kids[i].getBoundingClientRect();
        if (rect.bottom > 0) return { node: kids[i], top: rect.top, y: window.scrollY };
      }
      return null;
    }

    function holdAnchor(mark) {
      if (!mark || !mark.node.isConnected) return;
      var moved = mark.node.getBoundingClientRect().top - mark.top;
      if (Math.abs(moved) >= 0.5) window.scrollBy(0, moved);
    }

    function setPadding() {
      padTop = hi >= lo ? Math.min(sum(1, lo - 1), MAX_PAD) : 0;
      padBottom = Math.min(hi >= lo ? sum(hi + 1, total) : sum(1, total), MAX_PAD);
      list.style.paddingTop = padTop.toFixed(1) + "px";
      list.style.paddingBottom = padBottom.toFixed(1) + "px";
    }

    function evict(step, node) {
      var marks = node.querySelectorAll("mark.find-hit");
      for (var i = 0; i < marks.length; i++) {
        var parent = marks[i].parentNode;
        parent.replaceChild(document.createTextNode(marks[i].textContent), marks[i]);
        parent.normalize();
      }
      cache.set(step, node.outerHTML);
      node.remove();
      nodes.delete(step);
    }

    function render(from, to) {
      // The page holds the shown steps from..to, in order, and nothing else.
      measure();
      var mark = anchor();
      nodes.forEach(function (node, step) {
        if (step < from || step > to || !shown(step)) evict(step, node);
      });
      var added = [];
      var pending = [];
      var at = list.firstElementChild;
      function flush(before) {
        if (!pending.length) return;
        template.innerHTML = pending.join("");
        pending = [];
        var kids = Array.prototype.slice.call(template.content.children);
        list.insertBefore(template.content, before);
        kids.forEach(function (node) {
          nodes.set(learn(node), node);
          added.push(node);
        });
      }
      var reached = to;
      for (var step = from; step <= to; step++) {
        if (!shown(step)) continue;
        if (at && stepOf(at) === step) {
          flush(at);
          at = at.nextElementSibling;
          continue;
        }
        var html = cache.get(step);
        if (html === undefined) {
          reached = step - 1; // never a hole in the window (callers check first)
          break;
        }
        pending.push(html);
        cache.delete(step); // the card on the page is the copy now (evict() keeps it back)
      }
      flush(at);
      while (at) {
        var extra = at;
        at = at.nextElementSibling;
        evict(stepOf(extra), extra);
      }
      lo = from;
      hi = Math.max(reached, from - 1);
      if (added.length) prepare(added);
      measure();
      setPadding();
      holdAnchor(mark);
      lastAnchor = anchor();
    }

    function margin() {
      return Math.max(MARGIN_MIN, window.innerHeight / 3);
    }

    function stepAt(y) {
      // The step whose place in the list (px from its top) holds y.
      if (hi < lo) {
        var start = 0;
        for (var s0 = 1; s0 <= total; s0++) {
          start += height(s0);
          if (start > y) return s0;
        }
        return total;
      }
      if (y < padTop) {
        var top = padTop;
        for (var s1 = lo - 1; s1 >= 1; s1--) {
          top -= height(s1);
          if (top <= y) return s1;
        }
        return 1;
      }
      var kids = list.children;
      var origin = list.getBoundingClientRect().top;
      var end = padTop;
      if (kids.length) {
        var lastRect = kids[kids.length - 1].getBoundingClientRect();
        end = lastRect.bottom - origin + gap;
        if (y < end) {
          var low = 0;
          var high = kids.length - 1;
          while (low < high) {
            var mid = (low + high + 1) >> 1;
            if (kids[mid].getBoundingClientRect().top - origin <= y) low = mid;
            else high = mid - 1;
          }
          return stepOf(kids[low]);
        }
      }
      for (var s2 = hi + 1; s2 <= total; s2++) {
        end += height(s2);
        if (end > y) return s2;
      }
      return total;
    }

    function update() {
      scheduled = 0;
      if (!windowing || !total) return;
      lastAnchor = anchor();
      var origin = list.getBoundingClientRect().top;
      var top = -origin;
      var bottom = window.innerHeight - origin;
      var room = margin();
      var wantFrom = stepAt(top - room);
      var wantTo = stepAt(bottom + room);
      var keepFrom = stepAt(top - KEEP * room);
      var keepTo = stepAt(bottom + KEEP * room);
      var pivot = stepAt(Math.max(top, 0));
      var overlaps = hi >= lo && lo <= keepTo && hi >= keepFrom;
      var from = overlaps ? Math.max(keepFrom, Math.min(lo, wantFrom)) : wantFrom;
      var to = overlaps ? Math.min(keepTo, Math.max(hi, wantTo)) : wantTo;
      if (hidingLater) to = Math.min(to, Math.max(current, 1));
      pivot = Math.max(from, Math.min(to, pivot));
      if (!available(pivot)) {
        fetchFor(pivot, pivot);
        return;
      }
      var cards = shown(pivot) ? 1 : 0;
      var first = pivot;
      while (first > from && available(first - 1) && cards < MAX_CARDS / 2) {
        first--;
        if (shown(first)) cards++;
      }
      var last = pivot;
      while (last < to && available(last + 1) && cards < MAX_CARDS) {
        last++;
        if (shown(last)) cards++;
      }
      if (first !== lo || last !== hi || changed) {
        changed = false;
        render(first, last);
        // The cards just put on the page replaced estimated heights with measured ones; when
        // they turned out much shorter than estimated, they may no longer reach the screen's
        // edges (a fast scroll past steps never seen). Place them again from the new heights
        // now rather than at the next scroll, which may never come (a few passes at most).
        if (settling < 3 && !reachesEdges()) {
          settling++;
          schedule();
        } else {
          settling = 0;
        }
      } else {
        lastAnchor = anchor();
        settling = 0;
      }
      // Fetch what the margins still lack, nearest the screen first, then a margin more ahead.
      var missing = 0;
      if (first > wantFrom && !available(first - 1)) missing = first - 1;
      if (last < wantTo && !available(last + 1)) missing = last + 1;
      if (!missing) {
        var ahead = Math.min(hidingLater ? current : total, last + CHUNK / 2);
        for (var step = last + 1; step <= ahead; step++) {
          if (!available(step)) {
            missing = step;
            break;
          }
        }
      }
      if (!missing) return;
      var wait = holdUntil - performance.now();
      if (wait > 0) {
        // The margins wait while the reader types in find: each of their fetches would queue
        // ahead of the next keystroke's find.
        if (!holdTimer) holdTimer = setTimeout(function () { holdTimer = 0; schedule(); }, wait);
        return;
      }
      fetchFor(missing, pivot);
    }

    var changed = false;
    var settling = 0;

    function reachesEdges() {
      // Whether the cards on the page cover the screen, or end where the steps end.
      var head = list.firstElementChild;
      var tail = list.lastElementChild;
      if (!head || !tail) return true;
      var top = head.getBoundingClientRect().top;
      var bottom = tail.getBoundingClientRect().bottom;
      return (top <= 0 || lo <= 1) && (bottom >= window.innerHeight || hi >= total);
    }
    var holdUntil = 0;
    var holdTimer = 0;

    function schedule() {
      if (!scheduled) scheduled = requestAnimationFrame(update);
    }

    // ---- what viewer.js asks for ---------------------------------------------------------

    function show(step) {
      // The card of `step` on the page (fetched if need be), or null if a later call came first.
      step = Math.max(1, Math.min(total, step));
      focus = step;
      if (navController) navController.abort();
      var controller = navController = new AbortController();
      return ensure(step - JUMP_BEFORE, step + JUMP_AFTER, controller.signal).then(function () {
        if (controller !== navController) return null;
        navController = null;
        if (!windowing) return document.getElementById("step-" + step);
        if (!nodes.has(step) && available(step)) {
          var first = step;
          var last = step;
          while (first > 1 && first > step - JUMP_BEFORE && available(first - 1)) first--;
          while (last < total && last < step + JUMP_AFTER && available(last + 1)) last++;
          if (hidingLater) last = Math.min(last, Math.max(current, step));
          render(first, last);
        }
        schedule();
        return nodes.get(step) || null;
      }, function (error) {
        if (controller === navController) navController = null;
        if (error && error.name === "AbortError") return null;
        onStatus("failed");
        return null;
      });
    }

    function refresh() {
      // What is shown changed (filter, time travel): the same window, re-made, the reader kept.
      changed = true;
      if (windowing && hi >= lo) render(lo, hi);
      schedule();
    }

    function setFilter(hidden, fraction) {
      hiddenTypes = hidden;
      visibleFraction = fraction;
      refresh();
    }

    function setTime(step, hiding) {
      var wasHiding = hidingLater;
      var was = current;
      current = step;
      hidingLater = hiding;
      if (wasHiding !== hiding || (hiding && was !== step)) refresh();
    }

    function renderAll(progress) {
      // Every step on the page (to print): fetched 500 at a time, the window given up.
      var after = 0;
      function next() {
        if (after >= total) return Promise.resolve();
        return get(base + "events?after=" + after + "&limit=500").then(function (html) {
          if (windowing) return null;
          var before = list.lastElementChild;
          list.insertAdjacentHTML("beforeend", html);
          var added = [];
          for (var node = before ? before.nextElementSibling : list.firstElementChild; node; node = node.nextElementSibling) {
            learn(node);
            added.push(node);
          }
          if (!added.length) return null;
          prepare(added);
          after = stepOf(added[added.length - 1]);
          if (progress) progress(after, total);
          return next();
        });
      }
      windowing = false;
      nodes.forEach(function (node, step) { evict(step, node); });
      list.innerHTML = "";
      list.style.paddingTop = "0px";
      list.style.paddingBottom = "0px";
      return next();
    }

    function resume(step) {
      // Back to the window after renderAll, around `step`.
      var kids = Array.prototype.slice.call(list.children);
      windowing = true;
      lo = 1;
      hi = 0;
      kids.forEach(function (node) {
        var at = stepOf(node);
        if (Math.abs(at - step) < JUMP_AFTER) cache.set(at, node.outerHTML);
      });
      list.innerHTML = "";
      trimCache();
      setPadding();
      return show(step);
    }

    function adopt() {
      // The cards the server rendered become the first window.
      var kids = list.children;
      for (var i = 0; i < kids.length; i++) nodes.set(learn(kids[i]), kids[i]);
      if (kids.length) {
        lo = stepOf(kids[0]);
        hi = stepOf(kids[kids.length - 1]);
      }
      measure();
      setPadding();
    }

    if (windowing) adopt();

    window.addEventListener("scroll", schedule, { passive: true });
    window.addEventListener("resize", function () {
      heights.fill(0);
      measuredSum = 0;
      measuredCount = 0;
      measure();
      schedule();
    });
    // Whatever changes height above the card the reader looks at (an image loading, the
    // timeline strip appearing in the toolbar, a card's "show all"), the card stays where it is:
    // the browser's own anchoring would do this, but it is off (it would also move the reader
    // when this module changes the padding). Only if nothing has scrolled since the card's place
    // was taken: a jump is not undone.
    if (window.ResizeObserver) {
      var watcher = new ResizeObserver(function () {
        if (!windowing) return;
        if (lastAnchor && lastAnchor.y === window.scrollY) holdAnchor(lastAnchor);
        lastAnchor = anchor();
      });
      watcher.observe(list);
      var above = list.parentNode ? list.parentNode.children : [];
      for (var i = 0; i < above.length && above[i] !== list; i++) watcher.observe(above[i]);
    }

    return {
      show: show,
      refresh: refresh,
      schedule: schedule,
      setFilter: setFilter,
      setTime: setTime,
      learnTypes: learnTypes,
      // Cards that came with another answer (find's, around its first match): kept as a
      // fetch's would be, so that showing that match asks nothing more.
      keepCards: function (html) { return windowing ? keep(html) : 0; },
      holdMargins: function (ms) { holdUntil = Math.max(holdUntil, performance.now() + ms); },
      renderAll: renderAll,
      resume: resume,
      typeOf: function (step) { return types[step] ? typeNames[types[step]] : null; },
      stepOfId: function (id) { return ids[id]; },
      windowed: function () { return windowing; },
      range: function () { return [lo, hi]; },
      node: function (step) { return nodes.get(step) || (windowing ? null : document.getElementById("step-" + step)); }
    };
  }

  window.TrajHubList = { create: create };
})();
