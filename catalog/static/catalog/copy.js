// Copy buttons beside every install line ([data-copy]): progressive enhancement, so without
// JavaScript the line is still there to select, and no button that cannot work is shown.
(function () {
  "use strict";

  function textOf(element) {
    return (element.value !== undefined ? element.value : element.textContent).trim();
  }

  function copyWithSelection(text) {
    // Clipboard API is only on secure origins (https, localhost); elsewhere the old way.
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "offscreen";
    document.body.appendChild(area);
    area.select();
    var done = false;
    try { done = document.execCommand("copy"); } catch (e) { done = false; }
    document.body.removeChild(area);
    return done ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return copyWithSelection(text); });
    }
    return copyWithSelection(text);
  }

  function addButton(element) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy: " + textOf(element));
    var status = document.createElement("span");
    status.className = "copy-status";
    status.setAttribute("role", "status");
    button.addEventListener("click", function () {
      copy(textOf(element)).then(
        function () { button.textContent = "Copied"; status.textContent = "Copied to the clipboard"; },
        function () { button.textContent = "Select and copy"; status.textContent = "Could not copy: select the text"; }
      );
      window.setTimeout(function () { button.textContent = "Copy"; status.textContent = ""; }, 2000);
    });
    element.insertAdjacentElement("afterend", status);
    element.insertAdjacentElement("afterend", button);
  }

  document.querySelectorAll("[data-copy]").forEach(addButton);
})();
