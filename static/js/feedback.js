/* TrajHub step feedback on the trajectory page (apps/feedback).
 *
 * A module of its own beside viewer.js: it reads only the page's cards (li[data-step]) and the
 * viewer's data-base, so that however the viewer renders and replaces cards, every card that
 * appears gets its bar. From /t/<id>/feedback (one request) it draws, per step, the ratings for
 * and against and the first-wrong marks, and a strip of those marks under the timeline; steps
 * with corrections or comments get them next to the step (the server's escaped fragment).
 * Signed-in readers rate with one click (the API, with the CSRF cookie); everything else is on
 * the step's feedback page, which works without JavaScript. Text from the page is only ever set
 * with textContent; no inline script or style (the CSP forbids both).
 */
(function () {
  "use strict";

  var viewer = document.getElementById("viewer");
  var list = document.getElementById("events");
  if (!viewer || !list) return;
  var base = viewer.getAttribute("data-base");
  var total = parseInt(viewer.getAttribute("data-total"), 10) || 0;
  var shareId = base.split("/").filter(Boolean).pop();
  var summary = null;
  var fetchedNotes = {}; // step -> its notes' <section> (detached), once fetched

  function get(url) {
    return fetch(url, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response;
      });
  }

  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function el(name, className, text) {
    var node = document.createElement(name);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function counts(step) {
    return (summary && summary.steps[String(step)]) || {};
  }

  function pageUrl(step) {
    return base + "steps/" + step + "/feedback";
  }

  function bar(card) {
    var step = parseInt(card.getAttribute("data-step"), 10);
    var old = card.querySelector(":scope > .fb-bar");
    if (old) old.remove();
    var c = counts(step);
    var node = el("div", "fb-bar");
    node.setAttribute("data-step", String(step));
    if (summary.can_give) {
      var mine = summary.mine.ratings[String(step)];
      [["good", "✓"], ["bad", "✗"]].forEach(function (pair) {
        var button = el("button", "fb-quick secondary" + (mine === pair[0] ? " is-on" : ""),
          pair[1] + " " + (c[pair[0]] || 0));
        button.type = "button";
        button.setAttribute("data-rate", pair[0]);
        button.setAttribute("aria-pressed", mine === pair[0] ? "true" : "false");
        button.title = mine === pair[0] ? "Take back your rating" : "Rate this step " + pair[0];
        node.appendChild(button);
      });
    } else {
      if (c.good) node.appendChild(el("span", "fb-count fb-good", "✓ " + c.good));
      if (c.bad) node.appendChild(el("span", "fb-count fb-bad", "✗ " + c.bad));
    }
    if (c.first_wrong) {
      var wrong = el("span", "fb-count fb-wrong", "⚑ " + c.first_wrong + " first wrong");
      wrong.title = c.first_wrong + " reader" + (c.first_wrong > 1 ? "s" : "") +
        " mark this as the step where it first went wrong";
      node.appendChild(wrong);
    }
    var notes = (c.corrections || 0) + (c.comments || 0);
    if (c.corrections) node.appendChild(el("span", "fb-count", c.corrections + " correction" + (c.corrections > 1 ? "s" : "")));
    if (c.comments) node.appendChild(el("span", "fb-count", c.comments + " comment" + (c.comments > 1 ? "s" : "")));
    var open = el("a", "fb-open small", summary.can_give ? "Give feedback…" : (notes ? "Feedback" : ""));
    open.href = pageUrl(step);
    if (open.textContent) node.appendChild(open);
    if (!node.childNodes.length) return false; // nothing to show, nothing to give: no bar
    var body = card.querySelector(":scope > .ev-body");
    if (body && body.nextSibling) card.insertBefore(node, body.nextSibling);
    else card.appendChild(node);
    return notes > 0;
  }

  function placeNotes(card, step) {
    var section = fetchedNotes[step];
    var after = card.querySelector(":scope > .fb-bar");
    if (!section || !after || card.querySelector(":scope > .fb-notes")) return;
    after.parentNode.insertBefore(section.cloneNode(true), after.nextSibling);
  }

  // The notes of every step of a batch of cards in one request (a chunk is up to 500 cards).
  function loadNotes(steps) {
    var wanted = steps.filter(function (step) { return !(step in fetchedNotes); });
    if (!wanted.length) {
      steps.forEach(function (step) { var card = document.getElementById("step-" + step); if (card) placeNotes(card, step); });
      return;
    }
    wanted.forEach(function (step) { fetchedNotes[step] = null; });
    get(base + "feedback/notes?steps=" + wanted.join(",")).then(function (response) {
      return response.text();
    }).then(function (html) {
      var holder = document.createElement("template");
      holder.innerHTML = html; // our server's fragment, escaped there; a template runs nothing
      var sections = holder.content.querySelectorAll(".fb-notes[data-step]");
      for (var i = 0; i < sections.length; i++) {
        fetchedNotes[parseInt(sections[i].getAttribute("data-step"), 10)] = sections[i];
      }
      steps.forEach(function (step) {
        var card = document.getElementById("step-" + step);
        if (card) placeNotes(card, step);
      });
    }).catch(function () {
      wanted.forEach(function (step) { delete fetchedNotes[step]; }); // the step's page has them
    });
  }

  function decorate(nodes) {
    if (!summary) return;
    var withNotes = [];
    for (var i = 0; i < nodes.length; i++) {
      var node = nodes[i];
      if (node.nodeType !== 1 || !node.hasAttribute("data-step")) continue;
      if (bar(node)) withNotes.push(parseInt(node.getAttribute("data-step"), 10));
    }
    if (withNotes.length) loadNotes(withNotes);
  }

  function rate(step, value) {
    var mine = summary.mine.ratings[String(step)];
    var body = { rating: mine === value ? null : value };
    return fetch("/api/v1/trajectories/" + shareId + "/steps/" + step + "/feedback", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().then(function (data) {
        if (!response.ok) throw new Error((data.error && data.error.message) || "HTTP " + response.status);
        var c = summary.steps[String(step)] = summary.steps[String(step)] || {};
        c.good = data.ratings.good;
        c.bad = data.ratings.bad;
        if (data.mine.rating) summary.mine.ratings[String(step)] = data.mine.rating;
        else delete summary.mine.ratings[String(step)];
        var card = document.getElementById("step-" + step);
        if (card && bar(card)) placeNotes(card, step);
      });
    }).catch(function (error) {
      var card = document.getElementById("step-" + step);
      var where = card && card.querySelector(":scope > .fb-bar");
      if (where) where.appendChild(el("span", "muted small", String(error.message || error)));
    });
  }

  list.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-rate]");
    if (!button) return;
    var step = parseInt(button.parentNode.getAttribute("data-step"), 10);
    rate(step, button.getAttribute("data-rate"));
  });

  // ---- the first-wrong strip: where readers think it went wrong, under the timeline --------

  var SVG = "http://www.w3.org/2000/svg";

  function svgEl(name, attrs) {
    var node = document.createElementNS(SVG, name);
    for (var key in attrs) node.setAttribute(key, attrs[key]);
    return node;
  }

  function drawStrip() {
    var marks = [];
    var top = 0;
    Object.keys(summary.steps).forEach(function (step) {
      var n = summary.steps[step].first_wrong || 0;
      if (n) { marks.push([parseInt(step, 10), n]); top = Math.max(top, n); }
    });
    if (!marks.length || total < 1) return;
    var strip = el("div", "fb-strip");
    strip.id = "fb-strip";
    strip.title = "Where readers mark that it first went wrong: click a mark to go there";
    strip.setAttribute("role", "list");
    strip.setAttribute("aria-label", "First-wrong marks");
    var svg = svgEl("svg", { viewBox: "0 0 1000 12", preserveAspectRatio: "none", width: "100%", height: "12" });
    marks.forEach(function (mark) {
      var x = ((mark[0] - 0.5) / total) * 1000;
      var height = 4 + Math.round((8 * mark[1]) / top);
      var rect = svgEl("rect", { x: Math.max(0, x - 2).toFixed(2), y: String(12 - height), width: "4",
        height: String(height), "class": "fb-mark", "data-step": String(mark[0]) });
      var label = svgEl("title", {});
      label.textContent = "Step " + mark[0] + ": " + mark[1] + " reader" + (mark[1] > 1 ? "s" : "") +
        " mark it the first wrong step";
      rect.appendChild(label);
      svg.appendChild(rect);
    });
    svg.addEventListener("click", function (event) {
      var step = event.target.getAttribute && event.target.getAttribute("data-step");
      if (step) location.hash = "#step-" + step; // the viewer follows the address
    });
    strip.appendChild(svg);
    var timeline = document.getElementById("timeline");
    var tools = document.getElementById("tools");
    if (timeline && timeline.parentNode) timeline.parentNode.insertBefore(strip, timeline.nextSibling);
    else if (tools) tools.appendChild(strip);
    else viewer.insertBefore(strip, list);
  }

  get(base + "feedback").then(function (response) { return response.json(); }).then(function (data) {
    summary = data;
    decorate(list.children);
    drawStrip();
    // Cards come and go as the viewer loads chunks or jumps: each new one gets its bar.
    new MutationObserver(function (records) {
      records.forEach(function (record) { decorate(record.addedNodes); });
    }).observe(list, { childList: true });
  }).catch(function () { /* feedback is an extra: the page works without it */ });
})();
