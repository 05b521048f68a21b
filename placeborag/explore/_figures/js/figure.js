// One figure: decode the arrays, Plotly.react, apply the kernel's selection, report events.
const TYPES = { f4: Float32Array, f8: Float64Array, i1: Int8Array, u1: Uint8Array,
  i2: Int16Array, u2: Uint16Array, i4: Int32Array, u4: Uint32Array };
// An array's bytes are one of the message's binary buffers (`buffer`: its index in the
// figure's or the patch's `buffers`), or base64 or bytes in place (`bdata`).
function typed(spec, buffers) {
  const T = TYPES[spec.dtype];
  let bytes;
  if (typeof spec.bdata === "string") {
    const raw = atob(spec.bdata);
    bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  } else {
    const b = "buffer" in spec ? buffers[spec.buffer] : spec.bdata;
    bytes = new Uint8Array(b.buffer, b.byteOffset, b.byteLength).slice();
  }
  const flat = new T(bytes.buffer, 0, bytes.byteLength / T.BYTES_PER_ELEMENT);
  const shape = spec.shape ? String(spec.shape).split(",").map(Number) : [];
  if (shape.length !== 2) return flat;
  const rows = [];
  for (let r = 0; r < shape[0]; r++) rows.push(flat.subarray(r * shape[1], (r + 1) * shape[1]));
  return rows;
}
function decode(value, buffers) {
  if (Array.isArray(value)) return value.map((v) => decode(v, buffers));
  if (value && typeof value === "object" && !ArrayBuffer.isView(value)) {
    if (typeof value.dtype === "string" && TYPES[value.dtype]
        && ("bdata" in value || "buffer" in value)) {
      return typed(value, buffers);
    }
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = decode(v, buffers);
    return out;
  }
  return value;
}
// A trace's objects copied (Plotly writes into them), its arrays shared; a layout copied whole.
function own(value) {
  if (!value || typeof value !== "object" || Array.isArray(value) || ArrayBuffer.isView(value)) {
    return value;
  }
  const out = {};
  for (const [k, v] of Object.entries(value)) out[k] = own(v);
  return out;
}
function copy(value) {
  if (Array.isArray(value)) return value.map(copy);
  if (!value || typeof value !== "object" || ArrayBuffer.isView(value)) return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) out[k] = copy(v);
  return out;
}
const NOT_SELECTABLE = new Set(["scatter3d", "heatmap", "funnel"]);
function pairs(event) {
  return ((event && event.points) || [])
    .filter((p) => Number.isInteger(p.curveNumber) && Number.isInteger(p.pointNumber))
    .map((p) => [p.curveNumber, p.pointNumber]);
}
function ranges(gd) {
  const out = {};
  for (const [key, axis] of Object.entries(gd.layout || {})) {
    if (!/^[xy]axis[0-9]*$/.test(key) || !axis || !Array.isArray(axis.range)) continue;
    const r = axis.range.map(Number);
    if (r.length === 2 && r.every(Number.isFinite)) out[key] = r;
  }
  return out;
}
async function render({ model, el }) {
  const s = slot(model.get("bundle_key"));
  const late = setTimeout(() => console.error(
    "placeborag: plotly.js has not loaded after 30 s (no loader widget in the page?)"
  ), 30000);
  const Plotly = await s.promise;
  clearTimeout(late);
  const gd = document.createElement("div");
  gd.className = "placeborag-plot";
  el.appendChild(gd);
  let drawn = null;  // the revision on screen
  let width = 0, pending = false;  // the width last fitted to; a resize asked for this frame
  let queue = Promise.resolve();
  const on = (name, handler) => { gd.removeAllListeners(name); gd.on(name, handler); };
  const bind = () => {
    on("plotly_selected", (e) => model.send({ kind: "select", revision: drawn, points: pairs(e) }));
    on("plotly_deselect", () => model.send({ kind: "select", revision: drawn, points: [] }));
    on("plotly_click", (e) => {
      const p = pairs(e)[0];
      if (p) model.send({ kind: "click", revision: drawn, point: p });
    });
    on("plotly_relayout", (e) => {
      if (!e || !Object.keys(e).some((k) => /axis[0-9]*[.](range|autorange)/.test(k))) return;
      model.send({ kind: "view", revision: drawn, ranges: ranges(gd) });
    });
  };
  const select = () => {
    const chosen = model.get("selected") || {};
    if (drawn === null || chosen.revision !== drawn || !gd.data) return;
    const indexes = [], values = [];
    for (const [trace, points] of chosen.points || []) {
      const t = gd.data[trace];
      if (!t || NOT_SELECTABLE.has(t.type)) continue;
      indexes.push(trace);
      values.push(points === null ? null : points);
    }
    if (indexes.length) Plotly.restyle(gd, { selectedpoints: values }, indexes);
    if (chosen.clear && (gd.layout.selections || []).length) {
      Plotly.relayout(gd, { selections: [] });
    }
  };
  // The figure the kernel sent whole (its arrays decoded once), and the patch on it last
  // decoded: a redraw that changes a few traces sends only those (a patch names the revision
  // of the whole figure it applies to, and is never applied to another one).
  let base = null, patched = null, asked = null;
  const compose = () => {
    const figure = model.get("figure") || {};
    if (!Array.isArray(figure.data)) return null;
    if (!base || base.revision !== figure.revision) {
      const buffers = figure.buffers || [];
      base = { revision: figure.revision, data: decode(figure.data, buffers),
        layout: decode(figure.layout || {}, buffers), config: figure.config || {} };
      patched = null;
    }
    const patch = model.get("patch") || {};
    if (patch.revision === undefined || patch.revision === null) {
      return { revision: base.revision, data: base.data, layout: base.layout };
    }
    if (patch.base !== base.revision) {
      // A patch on a figure this page does not hold: ask for the whole figure, once.
      if (asked !== patch.revision) {
        asked = patch.revision;
        model.send({ kind: "resend", revision: patch.revision });
      }
      return null;
    }
    if (!patched || patched.revision !== patch.revision) {
      // A changed trace: its changed properties over the base's trace, those gone removed.
      const buffers = patch.buffers || [];
      patched = { revision: patch.revision, traces: new Map(),
        layout: decode(patch.layout || {}, buffers) };
      for (const [i, changed, gone] of patch.traces || []) {
        const trace = Object.assign({}, base.data[i] || {}, decode(changed, buffers));
        for (const key of gone || []) delete trace[key];
        patched.traces.set(i, trace);
      }
    }
    const data = [];
    for (let i = 0; i < patch.length; i++) {
      data.push(patched.traces.has(i) ? patched.traces.get(i) : base.data[i]);
    }
    const layout = Object.assign({}, base.layout, patched.layout);
    for (const key of patch.drop || []) delete layout[key];
    return { revision: patch.revision, data, layout };
  };
  const draw = () => {
    queue = queue.then(async () => {
      const next = compose();
      if (next === null || next.revision === drawn) return;
      // A plot plotly.js first draws into a box of no width (not yet in the page, or in a
      // hidden tab) is drawn at its default 700 px, and at a fixed width from then on: the
      // first drawing waits until the box has its width (the size observer below says when).
      if (drawn === null && gd.clientWidth === 0) return;
      const config = Object.assign({
        responsive: true, displaylogo: false,
        // WebGL at the screen's own pixel ratio (plotly's default draws twice the page's
        // pixels each way: four times the work a standard screen shows).
        plotGlPixelRatio: Math.min(2, Math.max(1, globalThis.devicePixelRatio || 1)),
      }, base.config);
      // Plotly keeps what it is given and writes into it (autoranges, a selection): it gets
      // copies of the objects, and the decoded arrays themselves (unchanged traces keep them).
      await Plotly.react(gd, next.data.map(own), copy(next.layout), config);
      drawn = next.revision;
      gd.dataset.revision = String(drawn);
      bind();
      select();
      await fit();
    }).catch((error) => console.error("placeborag: drawing the figure failed", error));
  };
  model.on("change:figure", draw);
  model.on("change:patch", draw);
  model.on("change:selected", () => { queue = queue.then(select); });
  draw();
  // The figure takes its container's width whenever the container changes size (a side
  // panel, a notebook resized, a tab shown), not only when the window does; and after each
  // draw (a redraw keeps the plot's width, and a size change during it was skipped). Once
  // per frame at most, outside the observer's callback, never on a hidden plot (plotly
  // refuses to resize one). The observer also starts a first drawing put off for a width.
  function fit() {
    const now = el.getBoundingClientRect().width;
    if (drawn === null || now < 1) return Promise.resolve();
    const full = gd._fullLayout ? gd._fullLayout.width : 0;
    if (Math.abs(now - width) <= 1 && Math.abs(full - gd.getBoundingClientRect().width) <= 1) {
      return Promise.resolve();
    }
    width = now;
    return Promise.resolve(Plotly.Plots.resize(gd)).catch(() => {});
  }
  const resized = new ResizeObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      if (drawn === null) draw();  // a first drawing put off for a width, or not yet sent
      else queue = queue.then(fit);
    });
  });
  resized.observe(el);
  return () => {
    resized.disconnect();
    model.off("change:figure", draw);
    model.off("change:patch", draw);
    Plotly.purge(gd);
  };
}
export default { render };
