/* The upload page and its result page, as progressive enhancement: both work without this.
 *
 * Upload page: pick or drop a file and see what TrajHub understood before sharing. The preview
 * runs the importers on the server without storing anything (POST /api/v1/trajectories/preview,
 * with the chosen ?format=). Sharing is the form's own submission to /upload/, which answers
 * with the result page. Every text that comes back is put in the page with textContent, never
 * as HTML.
 *
 * Result page: the Copy buttons next to the link and the one-time password.
 */
(function () {
  "use strict";

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // --- Result page: copy the link or the password -------------------------------------------

  function copyText(field) {
    field.focus();
    field.select();
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(field.value).then(
        function () {
          return true;
        },
        function () {
          return document.execCommand("copy");
        }
      );
    }
    return Promise.resolve(document.execCommand("copy"));
  }

  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) return;
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      copyText(field).then(function (copied) {
        if (!copied) return; // the text stays selected: Ctrl+C copies it
        button.textContent = "Copied";
        window.setTimeout(function () {
          button.textContent = label;
        }, 2000);
      });
    });
  });

  // --- Upload page ------------------------------------------------------------------------------

  var form = document.getElementById("upload-form");
  if (!form) return;
  var input = document.getElementById("upload-file");
  var dropzone = document.getElementById("dropzone");
  var fileName = document.getElementById("dropzone-file");
  var formatSelect = document.getElementById("upload-format");
  var preview = document.getElementById("preview");
  var submit = document.getElementById("upload-submit");
  var status = document.getElementById("upload-status");
  var licenseBox = document.getElementById("license-box");
  var licenseAgreed = document.getElementById("license-agreed");
  var maxBytes = parseInt(form.getAttribute("data-max-bytes"), 10) || 0;
  var previewUrl = form.getAttribute("data-preview-url");

  var chosen = null; // the File the form will send
  var previewOk = false;
  var previewSerial = 0; // ignore answers to an earlier choice
  var sending = false;

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
    var ready = chosen !== null && previewOk && !sending;
    var needsLicense = visibility() === "public" && !licenseAgreed.checked;
    submit.disabled = !ready;
    if (sending) return;
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

  function formatHint() {
    return formatSelect.value
      ? "If the file is in another format, choose it under Format, or Detect automatically."
      : "If detection got the format wrong, choose the right one under Format.";
  }

  function showPreviewError(message, hint) {
    preview.hidden = false;
    preview.replaceChildren();
    preview.className = "preview bad";
    preview.appendChild(el("p", "preview-title", "This file cannot be shared"));
    preview.appendChild(el("p", null, message));
    if (hint) preview.appendChild(el("p", "muted small", hint));
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
      [formatSelect.value ? "Format (chosen)" : "Format", data.format_label || data.format],
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
        list.appendChild(el("li", null, (item.where ? item.where + ": " : "") + parts.join(" · ")));
      });
      if (data.items_truncated) list.appendChild(el("li", "muted", "… and " + data.items_truncated + " more"));
      preview.appendChild(list);
      showScan(data.items);
    }

    if (data.errors && data.errors.length) {
      var total = data.errors.length + (data.errors_truncated || 0);
      var heading = previewOk
        ? plural(total, "record") + " cannot be imported and will be skipped:"
        : "Nothing in this file can be imported:";
      preview.appendChild(el("p", "preview-errors-title", heading));
      var errors = el("ul", "preview-errors");
      data.errors.forEach(function (error) {
        errors.appendChild(el("li", null, errorText(error)));
      });
      if (data.errors_truncated) errors.appendChild(el("li", "muted", "… and " + data.errors_truncated + " more"));
      preview.appendChild(errors);
      if (!previewOk) preview.appendChild(el("p", "muted small", formatHint()));
    }
    if (!previewOk) setStatus("Nothing to share in this file.", "bad");
    refreshSubmit();
  }

  // What the scan would redact and which files' contents the upload holds, summed over its
  // trajectories: the sharer sees it before anything is stored. Values come back masked.
  function showScan(items) {
    var values = [];
    var files = [];
    var held = false;
    items.forEach(function (item) {
      var redactions = item.redactions || {};
      (redactions.values || []).forEach(function (value) {
        values.push(value);
      });
      if (redactions.decision === "held") held = true;
      (item.files || []).forEach(function (file) {
        files.push(file);
      });
    });
    var box = el("div", "preview-scan");
    if (values.length) {
      box.appendChild(el("p", "preview-errors-title", "Redacted before anyone else sees it:"));
      var list = el("ul", "preview-redactions");
      values.slice(0, 50).forEach(function (value) {
        var row = el("li");
        row.appendChild(el("code", null, value.placeholder));
        row.appendChild(
          document.createTextNode(" " + value.kind.replace(/_/g, " ") + " " + value.masked + ", " + plural(value.count, "place"))
        );
        list.appendChild(row);
      });
      if (values.length > 50) list.appendChild(el("li", "muted", "… and " + (values.length - 50) + " more"));
      box.appendChild(list);
      if (held) box.appendChild(el("p", "muted small", "Some of these are secrets: a moderator looks at the share before it is shown to anyone else."));
    } else {
      box.appendChild(el("p", "muted small", "The scan found no secrets or personal data to redact."));
    }
    if (files.length) {
      box.appendChild(el("p", "preview-errors-title", "It holds the contents of " + plural(files.length, "file") + ":"));
      var fileList = el("ul", "preview-files");
      files.slice(0, 30).forEach(function (file) {
        var row = el("li", file.sensitive ? "sensitive" : null, file.path);
        if (file.sensitive) row.appendChild(el("span", "badge", "usually holds secrets"));
        fileList.appendChild(row);
      });
      if (files.length > 30) fileList.appendChild(el("li", "muted", "… and " + (files.length - 30) + " more"));
      box.appendChild(fileList);
    }
    preview.appendChild(box);
  }

  function runPreview() {
    var file = chosen;
    var serial = ++previewSerial;
    previewOk = false;
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
    preview.hidden = false;
    preview.className = "preview";
    preview.replaceChildren(el("p", "muted", "Reading " + file.name + "…"));
    submit.disabled = true;
    setStatus("Checking the file…");
    var body = new FormData();
    body.append("file", file, file.name);
    var url = previewUrl + (formatSelect.value ? "?format=" + encodeURIComponent(formatSelect.value) : "");
    fetch(url, {
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
        else if (answer.status === 413) showPreviewError(errorText(answer.data.error || answer.data));
        else showPreviewError(errorText(answer.data.error || answer.data), formatHint());
      })
      .catch(function () {
        if (serial !== previewSerial) return;
        showPreviewError("The file could not be sent to the server. Check your connection and try again.");
      });
  }

  function choose(file) {
    chosen = file;
    fileName.textContent = file ? file.name + " (" + formatSize(file.size) + ")" : "";
    runPreview();
  }

  input.addEventListener("change", function () {
    choose(input.files && input.files.length ? input.files[0] : null);
  });
  formatSelect.addEventListener("change", runPreview);

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
    // The form sends what its file input holds: put the dropped file there (one file only).
    try {
      var transfer = new DataTransfer();
      transfer.items.add(files[0]);
      input.files = transfer.files;
    } catch (ignored) {
      /* checked below */
    }
    var held = input.files && input.files.length === 1 ? input.files[0] : null;
    if (!held || held.name !== files[0].name || held.size !== files[0].size) {
      chosen = null;
      showPreviewError("This browser cannot take a dropped file here: choose the file with the picker instead.");
      return;
    }
    choose(files[0]);
  });

  function showLicenseBox() {
    var isPublic = visibility() === "public";
    licenseBox.hidden = !isPublic;
    licenseAgreed.required = isPublic;
    if (!isPublic) licenseAgreed.checked = false;
  }

  form.addEventListener("change", function (event) {
    if (event.target.name === "visibility") showLicenseBox();
    if (event.target.name === "visibility" || event.target === licenseAgreed) refreshSubmit();
  });

  // The form posts itself (the server answers with the result page); this only holds it back
  // while the file is not known to be shareable, and sends it once.
  form.addEventListener("submit", function (event) {
    if (sending || !chosen || !previewOk) {
      event.preventDefault();
      return;
    }
    if (visibility() === "public" && !licenseAgreed.checked) {
      event.preventDefault();
      setStatus("To share publicly, agree to the licence above.", "bad");
      licenseAgreed.focus();
      return;
    }
    sending = true;
    setStatus("Sharing " + chosen.name + "…");
    // Disabled after the submission has started (a disabled button would not submit).
    window.setTimeout(function () {
      submit.disabled = true;
    }, 0);
  });
  // Back from the result page (bfcache): the form can be used again.
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) return;
    sending = false;
    refreshSubmit();
  });

  dropzone.classList.add("enhanced");
  var errors = document.getElementById("upload-errors");
  if (errors) errors.focus();
  // The license box is always shown without JavaScript; here only with "public".
  showLicenseBox();
  if (input.files && input.files.length) choose(input.files[0]); // a file kept by the browser
  else refreshSubmit();
})();
