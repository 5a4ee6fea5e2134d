
const STATES = new Map();
function state(model) {
  const key = model.get("key");
  if (!STATES.has(key)) STATES.set(key, { segs: [], views: new Set(), last: 0 });
  return STATES.get(key);
}
function seg(s, i) {
  if (!s.segs[i]) s.segs[i] = { html: null, blocks: [], tail: "" };
  return s.segs[i];
}
function apply(s, op) {
  s.last = op.i;
  const g = seg(s, op.i);
  if ("h" in op) { g.html = op.h; g.blocks = []; g.tail = ""; }
  if ("b" in op) { g.html = null; if (op.b) g.blocks.push(op.b); g.tail = op.t || ""; }
  if ("a" in op) g.tail += op.a;
  for (const view of s.views) view(op, g);
}
export default {
  initialize({ model }) {
    const s = state(model);
    model.on("msg:custom", (msg) => {
      if (typeof msg === "string") apply(s, { i: s.last, a: msg });
      else for (const op of (msg && msg.o) || []) apply(s, op);
    });
    return () => STATES.delete(model.get("key"));
  },
  render({ model, el }) {
    const s = state(model);
    const root = document.createElement("div");
    root.className = "brute-live";
    const nodes = [];
    const node = (i) => {
      while (nodes.length <= i) {
        const box = document.createElement("div");
        const body = document.createElement("div");
        const tail = document.createElement("div");
        tail.style.whiteSpace = "pre-wrap";
        const text = document.createTextNode("");
        tail.appendChild(text);
        box.append(body, tail);
        root.appendChild(box);
        nodes.push({ body, text });
      }
      return nodes[i];
    };
    const draw = (i, g) => {
      const n = node(i);
      n.body.innerHTML = g.html !== null ? g.html : g.blocks.join("");
      n.text.data = g.tail;
    };
    s.segs.forEach((g, i) => { if (g) draw(i, g); });
    const view = (op, g) => {
      const n = node(op.i);
      if ("a" in op && !("b" in op) && !("h" in op)) n.text.appendData(op.a);
      else if ("b" in op && g.html === null) {
        if (op.b) n.body.insertAdjacentHTML("beforeend", op.b);
        n.text.data = g.tail;
      } else draw(op.i, g);
    };
    s.views.add(view);
    el.appendChild(root);
    return () => s.views.delete(view);
  },
};
