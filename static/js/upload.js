/* The upload page: pick or drop a file, preview what TrajHub understood, then share it.
 *
 * The preview runs the importers on the server without storing anything
 * (POST /api/v1/trajectories/preview); sharing posts the same file to the share API
 * (POST /api/v1/trajectories). Every text that comes back is put in the page with textContent,
 * never as HTML. Passwords of anonymous shares are shown once and kept nowhere else.
 */
(function () {
  "use strict";

  var form = document.getElementById("upload-form");
  if (!form) return;
  var input = document.getElementById("upload-file");
  var dropzone = document.getElementById("dropzone");
  var fileName = document.getElementById("dropzone-file");
  var preview = document.getElementById("preview");
  var submit = document.getElementById("upload-submit");
  var status = document.getElementById("upload-status");
  var licenseBox = document.getElementById("license-box");
  var licenseAgreed = document.getElementById("license-agreed");
  var result = document.getElementById("upload-result");
  var maxBytes = parseInt(form.getAttribute("data-max-bytes"), 10) || 0;
  var previewUrl = form.getAttribute("data-preview-url");

  var chosen = null; // the File to send
  var previewOk = false;
  var previewSerial = 0; // ignore answers to an earlier choice

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function plural(n, word) {
    return n.toLocaleString("en") + " " + word + (n === 1 ? "" : "s");
  }

  function formatSize(bytes) {
    if (bytes < 1024) return bytes + " bytes";
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " KB";
    return (bytes / (1024 * 1024)).toFixed(1) + " MB";
  }

  function csrfToken() {
    var field = form.querySelector("input[name=csrfmiddlewaretoken]");
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : field ? field.value : "";
  }

  function setStatus(text, kind) {
    status.textContent = text;
    status.className = "status" + (kind ? " " + kind : "");
  }

  function visibility() {
    var checked = form.querySelector("input[name=visibility]:checked");
    return checked ? checked.value : "private";
  }

  function refreshSubmit() {
    var ready = chosen !== null && previewOk;
    var needsLicense = visibility() === "public" && !licenseAgreed.checked;
    submit.disabled = !ready;
    if (!chosen) setStatus("Choose a file first.");
    else if (!previewOk) return; // the preview says what is wrong
    else if (needsLicense) setStatus("To share publicly, agree to the licence above.", "warn");
    else setStatus("Ready to share.");
  }

  // Where an error is in the file ("line 3", "[5], event 2"), in plain words.
  function errorText(error) {
    if (!error) return "";
    if (typeof error === "string") return error;
    var message = error.message || error.detail || JSON.stringify(error);
    return error.where ? error.where + ": " + message : message;
  }

  function showPreviewError(message) {
    preview.hidden = false;
    preview.replaceChildren();
    preview.className = "preview bad";
    preview.appendChild(el("p", "preview-title", "This file cannot be shared"));
    preview.appendChild(el("p", null, message));
    previewOk = false;
    submit.disabled = true;
    setStatus("Fix the file, or choose another.", "bad");
  }

  function showPreview(data) {
    preview.hidden = false;
    preview.replaceChildren();
    var count = data.trajectories || 0;
    previewOk = count > 0;
    preview.className = "preview " + (previewOk ? (data.errors && data.errors.length ? "warn" : "ok") : "bad");

    var summary = el("dl", "preview-summary");
    [
      ["Format", data.format_label || data.format],
      ["Trajectories", count.toLocaleString("en")],
      ["Events", (data.events || 0).toLocaleString("en")],
    ].forEach(function (pair) {
      var item = el("div");
      item.appendChild(el("dt", null, pair[0]));
      item.appendChild(el("dd", null, pair[1]));
      summary.appendChild(item);
    });
    preview.appendChild(summary);

    if (data.items && data.items.length) {
      var list = el("ul", "preview-items");
      data.items.forEach(function (item) {
        var parts = [item.title || "Untitled"];
        if (item.agent) parts.push(item.agent);
        if (item.model) parts.push(item.model);
        parts.push(plural(item.events, "event"));
        var li = el("li", null, (item.where ? item.where + ": " : "") + parts.join(" · "));
        list.appendChild(li);
      });
      if (data.items_truncated) list.appendChild(el("li", "muted", "… and " + data.items_truncated + " more"));
      preview.appendChild(list);
    }

    if (data.errors && data.errors.length) {
      var heading = previewOk
        ? plural(data.errors.length, "record") + " cannot be imported and will be skipped:"
        : "Nothing in this file can be imported:";
      preview.appendChild(el("p", "preview-errors-title", heading));
      var errors = el("ul", "preview-errors");
      data.errors.forEach(function (error) {
        errors.appendChild(el("li", null, errorText(error)));
      });
      if (data.errors_truncated) errors.appendChild(el("li", "muted", "… and " + data.errors_truncated + " more"));
      preview.appendChild(errors);
    }
    if (!previewOk) setStatus("Nothing to share in this file.", "bad");
    refreshSubmit();
  }

  function choose(file) {
    chosen = file;
    previewOk = false;
    result.hidden = true;
    fileName.textContent = file ? file.name + " (" + formatSize(file.size) + ")" : "";
    if (!file) {
      preview.hidden = true;
      refreshSubmit();
      return;
    }
    if (maxBytes && file.size > maxBytes) {
      showPreviewError("The file is " + formatSize(file.size) + "; the limit is " + formatSize(maxBytes) + ".");
      return;
    }
    if (file.size === 0) {
      showPreviewError("The file is empty.");
      return;
    }
    var serial = ++previewSerial;
    preview.hidden = false;
    preview.className = "preview";
    preview.replaceChildren(el("p", "muted", "Reading " + file.name + "…"));
    submit.disabled = true;
    setStatus("Checking the file…");
    var body = new FormData();
    body.append("file", file, file.name);
    fetch(previewUrl, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
    })
      .then(function (response) {
        return response
          .json()
          .catch(function () {
            return { error: { message: "The server answered " + response.status + " without details." } };
          })
          .then(function (data) {
            return { ok: response.ok, status: response.status, data: data };
          });
      })
      .then(function (answer) {
        if (serial !== previewSerial) return;
        if (answer.ok) showPreview(answer.data);
        else if (answer.status === 429) showPreviewError("Too many files checked from your network; wait a little and try again.");
        else showPreviewError(errorText(answer.data.error || answer.data));
      })
      .catch(function () {
        if (serial !== previewSerial) return;
        showPreviewError("The file could not be sent to the server. Check your connection and try again.");
      });
  }

  input.addEventListener("change", function () {
    choose(input.files && input.files.length ? input.files[0] : null);
  });

  ["dragenter", "dragover"].forEach(function (name) {
    dropzone.addEventListener(name, function (event) {
      event.preventDefault();
      dropzone.classList.add("dragging");
    });
  });
  ["dragleave", "dragend", "drop"].forEach(function (name) {
    dropzone.addEventListener(name, function () {
      dropzone.classList.remove("dragging");
    });
  });
  dropzone.addEventListener("drop", function (event) {
    event.preventDefault();
    var files = event.dataTransfer && event.dataTransfer.files;
    if (!files || !files.length) return;
    try {
      input.files = files; // keeps the picker in step where the browser allows it
    } catch (ignored) {
      /* older browsers: `chosen` is what is sent anyway */
    }
    choose(files[0]);
  });

  form.addEventListener("change", function (event) {
    if (event.target.name === "visibility") {
      var isPublic = visibility() === "public";
      licenseBox.hidden = !isPublic;
      licenseAgreed.required = isPublic;
      if (!isPublic) licenseAgreed.checked = false;
    }
    if (event.target.name === "visibility" || event.target === licenseAgreed) refreshSubmit();
  });

  function copyButton(field) {
    var button = el("button", "secondary copy", "Copy");
    button.type = "button";
    button.addEventListener("click", function () {
      function done() {
        button.textContent = "Copied";
        window.setTimeout(function () {
          button.textContent = "Copy";
        }, 2000);
      }
      field.select();
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(done, function () {
          if (document.execCommand("copy")) done();
        });
      } else if (document.execCommand("copy")) {
        done();
      }
    });
    return button;
  }

  function copyRow(label, value, id) {
    var row = el("div", "copy-row");
    var labelNode = el("label", null, label);
    labelNode.htmlFor = id;
    var field = el("input", "copy-field");
    field.id = id;
    field.type = "text";
    field.readOnly = true;
    field.value = value;
    field.spellcheck = false;
    row.appendChild(labelNode);
    var line = el("div", "copy-line");
    line.appendChild(field);
    line.appendChild(copyButton(field));
    row.appendChild(line);
    return row;
  }

  function showResult(data) {
    result.replaceChildren();
    var stored = data.trajectories || [];
    var anyPassword = stored.some(function (item) {
      return item.password;
    });
    result.appendChild(el("h2", null, stored.length === 1 ? "Shared" : stored.length.toLocaleString("en") + " trajectories shared"));
    if (anyPassword) {
      result.appendChild(
        el(
          "p",
          "alert warn",
          "Save the link and the password now: the password is shown only this once and cannot be recovered. " +
            "With it you can open a private trajectory and delete it at any time."
        )
      );
    }
    var origin = window.location.origin;
    stored.forEach(function (item, index) {
      var card = el("div", "card shared-item");
      var path = "/t/" + item.id + "/";
      var url = item.url && /^https?:\/\//.test(item.url) ? item.url : origin + (item.url || path);
      var title = el("p", "shared-title");
      var link = el("a", null, item.title || "Open the trajectory");
      link.href = path;
      title.appendChild(link);
      card.appendChild(title);
      var facts = [];
      if (item.num_events !== undefined) facts.push(plural(item.num_events, "event"));
      if (item.visibility === "public") facts.push(item.review_state === "approved" ? "public" : "public once reviewed");
      else if (item.visibility) facts.push(item.visibility);
      if (facts.length) card.appendChild(el("p", "shared-facts muted small", facts.join(" · ")));
      card.appendChild(copyRow("Link", url, "shared-link-" + index));
      if (item.password) {
        card.appendChild(copyRow("Deletion password", item.password, "shared-password-" + index));
        var manage = el("p", "small");
        manage.appendChild(document.createTextNode("Open or delete it later at "));
        var manageLink = el("a", null, url.replace(/\/?$/, "/") + "unlock");
        manageLink.href = path + "unlock";
        manage.appendChild(manageLink);
        manage.appendChild(document.createTextNode(" with this password."));
        card.appendChild(manage);
      }
      result.appendChild(card);
    });
    if (data.errors && data.errors.length) {
      result.appendChild(el("p", "preview-errors-title", "Not stored:"));
      var errors = el("ul", "preview-errors");
      data.errors.forEach(function (error) {
        errors.appendChild(el("li", null, errorText(error)));
      });
      result.appendChild(errors);
    }
    var again = el("a", "button secondary", "Share another");
    again.href = "/upload/";
    result.appendChild(again);
    form.hidden = true;
    result.hidden = false;
    result.focus();
  }

  function showSubmitError(answer) {
    var data = answer.data || {};
    var message;
    if (answer.status === 429) message = "Too many shares from your network in the last hour. Try again later.";
    else if (answer.status === 413) message = "The file is too large for this site.";
    else if (answer.status === 401 || answer.status === 403)
      message = errorText(data.error || data) || "You need to sign in to share here.";
    else if (data.errors && data.errors.length) message = data.errors.map(errorText).join("; ");
    else message = errorText(data.error || data) || "The server answered " + answer.status + ".";
    setStatus("Not shared: " + message, "bad");
    submit.disabled = false;
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (!chosen || !previewOk) return;
    if (visibility() === "public" && !licenseAgreed.checked) {
      setStatus("To share publicly, agree to the licence above.", "bad");
      licenseAgreed.focus();
      return;
    }
    var body = new FormData();
    body.append("file", chosen, chosen.name);
    body.append("visibility", visibility());
    body.append("polarity", (form.querySelector("input[name=polarity]:checked") || {}).value || "none");
    body.append("title", form.elements.title.value);
    body.append("feedback_text", form.elements.feedback_text.value);
    body.append("license_agreed", visibility() === "public" && licenseAgreed.checked ? "true" : "false");
    submit.disabled = true;
    setStatus("Sharing…");
    fetch(form.action, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
    })
      .then(function (response) {
        return response
          .json()
          .catch(function () {
            return {};
          })
          .then(function (data) {
            return { ok: response.ok, status: response.status, data: data };
          });
      })
      .then(function (answer) {
        if (answer.ok && answer.data.trajectories && answer.data.trajectories.length) showResult(answer.data);
        else showSubmitError(answer);
      })
      .catch(function () {
        setStatus("Not shared: the server could not be reached. Try again.", "bad");
        submit.disabled = false;
      });
  });

  refreshSubmit();
})();
