// The cell tools' hands in the front end: applies the kernel's cell operations to the notebook's live document
// (the shared model JupyterLab's widget manager exposes as `context`), as a person's edit would be, so the change
// shows at once and the editor's own undo reverts it. Operations arrive in the synced `ops` list (state, not
// custom messages, so none is lost if this script loads after the kernel sent them); each is applied once, by
// its number `n`. A front end without a notebook document (VS Code, Voila, jupyter console) applies nothing and
// answers nothing, and the kernel then changes the saved file instead.
//
// What it answers, as synced state the kernel reads when it is free to hear it (a running cell blocks it):
//   doc      {cells: [{id, cell_type, source}]}: the document as it is now, sent at load and after each change,
//            so the kernel checks a cell the model names against the cells the user has, not the ones it sent
//   applied  [{n, why}]: each operation's outcome, `why` empty when it was applied, else what stopped it
//
//   {n, op: "edit", id, source}                            the cell's source (its outputs stay until it runs,
//                                                          as after a person's edit)
//   {n, op: "insert", id, after, cell_type, source}        a new cell (with the kernel's id) after cell `after`,
//                                                          or at the end when `after` is not in the notebook
//   {n, op: "outputs", id, outputs, execution_count}       a code cell's outputs (nbformat JSON) and the count
//                                                          its run took (null: none), so it shows [n] as run;
//                                                          a widget shown there (the "Fix with brute" chat that
//                                                          asked for this run) stays, above them
//   {n, op: "delete", id}                                  the cell (undo of an insert)

const WIDGET_VIEW = "application/vnd.jupyter.widget-view+json";
const KEPT_ANSWERS = 200;
const SETTLE_MS = 300;

function notebookOf(model) {
  try {
    const context = model.widget_manager && model.widget_manager.context;
    const shared = context && context.model && context.model.sharedModel;
    return shared && typeof shared.insertCell === "function" ? shared : null;
  } catch (error) {
    return null;
  }
}

function idOf(cell) {
  return typeof cell.getId === "function" ? cell.getId() : cell.id;
}

function indexOf(notebook, id) {
  const cells = notebook.cells || [];
  for (let i = 0; i < cells.length; i++) {
    if (idOf(cells[i]) === id) return i;
  }
  return -1;
}

function cellsOf(notebook) {
  return (notebook.cells || []).map((cell) => ({
    id: idOf(cell),
    cell_type: cell.cell_type,
    source: typeof cell.getSource === "function" ? cell.getSource() : String(cell.source || ""),
  }));
}

// The operation applied to the document: "" when done, else why not.
function apply(notebook, op) {
  const at = indexOf(notebook, op.id);
  if (op.op === "insert") {
    if (at >= 0) return "";  // already there (a second view of this kernel applied it)
    const after = op.after ? indexOf(notebook, op.after) : -1;
    const index = after >= 0 ? after + 1 : notebook.cells.length;
    notebook.insertCell(index, { id: op.id, cell_type: op.cell_type, source: op.source, metadata: {} });
    return "";
  }
  if (at < 0) return op.op === "delete" ? "" : `the notebook has no cell with id ${op.id}`;
  const cell = notebook.getCell(at);
  if (op.op === "edit") {
    cell.setSource(op.source);
  } else if (op.op === "outputs") {
    if (cell.cell_type !== "code") return `cell ${op.id} is a ${cell.cell_type} cell`;
    const widgets = (cell.getOutputs ? cell.getOutputs() : cell.outputs || []).filter(
      (o) => o && o.data && o.data[WIDGET_VIEW]);
    cell.setOutputs([...widgets, ...op.outputs]);
    cell.execution_count = Number.isInteger(op.execution_count) ? op.execution_count : null;
  } else if (op.op === "delete") {
    notebook.deleteCell(at);
  } else {
    return `unknown operation ${op.op}`;
  }
  return "";
}

export default {
  initialize({ model }) {
    const done = new Set();
    let timer = null;
    const answer = (results) => {
      const notebook = notebookOf(model);
      if (!notebook) return;
      if (results.length) model.set("applied", [...(model.get("applied") || []), ...results].slice(-KEPT_ANSWERS));
      model.set("doc", { cells: cellsOf(notebook) });
      model.save_changes();
    };
    const run = () => {
      const notebook = notebookOf(model);
      if (!notebook) return;  // no document here: nothing applied, nothing answered
      const results = [];
      for (const op of model.get("ops") || []) {
        if (done.has(op.n)) continue;
        done.add(op.n);
        let why = "";
        try {
          why = apply(notebook, op);
        } catch (error) {
          why = `the front end could not apply it: ${error}`;
          console.error("brute_nb: could not apply a cell operation", op, error);
        }
        results.push({ n: op.n, why });
      }
      answer(results);
    };
    const settle = () => {
      if (timer === null) timer = setTimeout(() => { timer = null; answer([]); }, SETTLE_MS);
    };
    run();
    model.on("change:ops", run);
    const notebook = notebookOf(model);
    const ydoc = notebook && notebook.ydoc;
    if (ydoc && typeof ydoc.on === "function") ydoc.on("update", settle);  // a person's edit, a new cell
    return () => {
      model.off("change:ops", run);
      if (ydoc && typeof ydoc.off === "function") ydoc.off("update", settle);
      if (timer !== null) clearTimeout(timer);
    };
  },
  render({ el }) {
    el.style.display = "none";  // nothing to see: the change shows in the cells themselves
  },
};
