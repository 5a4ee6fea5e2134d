
function render({ model, el }) {
  const box = document.createElement("textarea");
  box.className = "brute-input";
  const sync = () => {
    if (box.value !== model.get("value")) box.value = model.get("value");
    box.placeholder = model.get("placeholder");
    box.disabled = model.get("disabled");
    box.rows = model.get("rows");
  };
  sync();
  box.addEventListener("input", () => {
    model.set("value", box.value);
    model.save_changes();
  });
  box.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.isComposing || event.keyCode === 229) return;
    event.stopPropagation();
    event.preventDefault();
    if (event.shiftKey) {
      if (!box.disabled && !document.execCommand("insertText", false, "\n")) {
        box.setRangeText("\n", box.selectionStart, box.selectionEnd, "end");
        box.dispatchEvent(new Event("input", { bubbles: true }));
      }
      return;
    }
    const text = box.value;
    if (box.disabled || !text.trim()) return;
    box.value = "";
    model.set("value", "");
    model.save_changes();
    model.send({ type: "submit", value: text });
  });
  for (const name of ["value", "placeholder", "disabled", "rows"]) model.on(`change:${name}`, sync);
  el.classList.add("brute-input-host");
  el.appendChild(box);
  return () => {
    for (const name of ["value", "placeholder", "disabled", "rows"]) model.off(`change:${name}`, sync);
  };
}
export default { render };
