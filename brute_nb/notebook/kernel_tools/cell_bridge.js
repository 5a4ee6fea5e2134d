// The cell tools' hands in the front end: applies the kernel's cell operations to the notebook's live document
// (the shared model JupyterLab's widget manager exposes as `context`), as a person's edit would be, so the change
// shows at once and the editor's own undo reverts it. Operations arrive in the synced `ops` list (state, not
// custom messages, so none is lost if this script loads after the kernel sent them); each is applied once, by
// its number `n`. A front end without a notebook document (VS Code, Voila) applies nothing.
//
//   {n, op: "edit", id, source}                            the cell's source (its outputs stay until it runs,
//                                                          as after a person's edit)
//   {n, op: "insert", id, after, cell_type, source}        a new cell (with the kernel's id) after cell `after`,
//                                                          or at the end when `after` is not in the notebook
//   {n, op: "outputs", id, outputs}                        a code cell's outputs (nbformat JSON), unnumbered;
//                                                          a widget shown there (the "Fix with brute" chat that
//                                                          asked for this run) stays, above them
//   {n, op: "delete", id}                                  the cell (undo of an insert)

const WIDGET_VIEW = "application/vnd.jupyter.widget-view+json";

function notebookOf(model) {
  try {
    const context = model.widget_manager && model.widget_manager.context;
    const shared = context && context.model && context.model.sharedModel;
    return shared && typeof shared.insertCell === "function" ? shared : null;
  } catch (error) {
    return null;
  }
}

function indexOf(notebook, id) {
  const cells = notebook.cells || [];
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i];
    const cellId = typeof cell.getId === "function" ? cell.getId() : cell.id;
    if (cellId === id) return i;
  }
  return -1;
}

function apply(notebook, op) {
  const at = indexOf(notebook, op.id);
  if (op.op === "insert") {
    if (at >= 0) return;  // already there (a second view of this kernel applied it)
    const after = op.after ? indexOf(notebook, op.after) : -1;
    const index = after >= 0 ? after + 1 : notebook.cells.length;
    notebook.insertCell(index, { id: op.id, cell_type: op.cell_type, source: op.source, metadata: {} });
    return;
  }
  if (at < 0) return;
  const cell = notebook.getCell(at);
  if (op.op === "edit") {
    cell.setSource(op.source);
  } else if (op.op === "outputs" && cell.cell_type === "code") {
    const widgets = (cell.getOutputs ? cell.getOutputs() : cell.outputs || []).filter(
      (o) => o && o.data && o.data[WIDGET_VIEW]);
    cell.setOutputs([...widgets, ...op.outputs]);
    cell.execution_count = null;
  } else if (op.op === "delete") {
    notebook.deleteCell(at);
  }
}

export default {
  initialize({ model }) {
    const done = new Set();
    const run = () => {
      const notebook = notebookOf(model);
      if (!notebook) return;
      for (const op of model.get("ops") || []) {
        if (done.has(op.n)) continue;
        done.add(op.n);
        try {
          apply(notebook, op);
        } catch (error) {
          console.error("brute_nb: could not apply a cell operation", op, error);
        }
      }
    };
    run();
    model.on("change:ops", run);
    return () => model.off("change:ops", run);
  },
  render({ el }) {
    el.style.display = "none";  // nothing to see: the change shows in the cells themselves
  },
};
