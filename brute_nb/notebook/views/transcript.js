
const CODE_BLOCKS = __CODE_BLOCKS__;
const LABEL = __LABEL__;
const ENDED = __ENDED__;
const VIEW = "application/vnd.jupyter.widget-view+json";

function codeOf(pre) {
  return (pre.textContent || "").replace(/\n+$/, "");
}

function holds(cell, anchor) {
  if (!anchor || cell.cell_type !== "code" || typeof cell.getOutputs !== "function") return false;
  return cell.getOutputs().some((o) => o && o.data && o.data[VIEW] && o.data[VIEW].model_id === anchor);
}

function domIndex(el) {
  const cell = el.closest(".jp-Notebook .jp-Cell");
  if (!cell) return -1;
  const index = Number.parseInt(cell.dataset.windowedListIndex ?? "", 10);
  if (!Number.isNaN(index)) return index;
  return Array.from(cell.parentElement.children).filter((c) => c.classList.contains("jp-Cell")).indexOf(cell);
}

function cellIndex(notebook, anchor, el) {
  const cells = notebook.cells || [];
  const around = domIndex(el);
  if (around >= 0 && around < cells.length) return around;
  for (let i = 0; i < cells.length; i++) if (holds(cells[i], anchor)) return i;
  return -1;
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch (error) {
    const area = document.createElement("textarea");
    area.value = text;
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    return done;
  }
}

function say(button, text) {
  button.textContent = text;
  setTimeout(() => { button.textContent = LABEL; }, 2000);
}

async function insert(model, el, code, button) {
  let notebook = null;
  try {
    const context = model.widget_manager && model.widget_manager.context;
    notebook = context && context.model && context.model.sharedModel;
  } catch (error) {
    notebook = null;  // a widget manager without a document (VS Code, Colab, Voila)
  }
  const usable = notebook && typeof notebook.insertCell === "function";
  // A panel in JupyterLab's side area (front/side.py) has no cell: its code goes in after the notebook's last cell.
  const beside = usable && el.closest(".jupyterlab-sidecar") !== null;
  const index = !usable ? -1 : beside ? (notebook.cells || []).length - 1 : cellIndex(notebook, model.get("anchor"), el);
  if (index >= 0) {
    notebook.insertCell(index + 1, { cell_type: "code", source: code, metadata: {} });
    say(button, beside ? "inserted at the end" : "inserted below");
    return;
  }
  say(button, (await copy(code)) ? "copied" : "copy failed: select the code");
}

// After a kernel restart the panel is dead (its model is gone from the kernel): its output area is marked ended,
// and the static copy beside it (chat_static.STYLE) takes its place instead of a Send button that does nothing.
function watchKernel(model, el) {
  let session = null;
  try {
    session = model.widget_manager && model.widget_manager.context && model.widget_manager.context.sessionContext;
  } catch (error) {
    session = null;
  }
  if (!session || !session.statusChanged) return () => {};
  const onStatus = (_, status) => {
    if (status !== "restarting" && status !== "autorestarting" && status !== "dead") return;
    const area = el.closest(".jp-OutputArea");
    if (area) area.classList.add(ENDED);
  };
  session.statusChanged.connect(onStatus);
  return () => session.statusChanged.disconnect(onStatus);
}

function render({ model, el }) {
  el.classList.add("brute-transcript");
  const unwatch = watchKernel(model, el);
  const content = document.createElement("div");
  content.className = "brute-transcript-content";
  el.appendChild(content);
  const finished = document.createElement("div");
  const running = document.createElement("div");
  content.append(finished, running);
  const fill = (box, html) => {
    box.innerHTML = html;
    for (const pre of box.querySelectorAll(CODE_BLOCKS)) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "brute-insert";
      button.textContent = LABEL;
      button.title = "Put this code in a new cell below the chat's cell, not run";
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        insert(model, el, codeOf(pre), button);
      });
      pre.after(button);
    }
  };
  const drawFinished = () => fill(finished, model.get("value"));
  const drawRunning = () => fill(running, model.get("live"));
  drawFinished();
  drawRunning();
  model.on("change:value", drawFinished);
  model.on("change:live", drawRunning);
  return () => {
    unwatch();
    model.off("change:value", drawFinished);
    model.off("change:live", drawRunning);
  };
}
export default { render };
