// The kernel's one hidden loader: plotly.js, gzipped, imported once and handed to every figure.
// plotly.min.js is a UMD bundle: given a CommonJS `module`, it exports Plotly through it, so
// the page needs no require.js and no global of ours.
// anywidget gives initialize() two seconds: plotly.js loads in the background instead, and
// every figure waits on the slot's promise.
function initialize({ model }) {
  const s = slot(model.get("bundle_key"));
  const gzipped = model.get("bundle");
  if (s.started || !gzipped || !gzipped.byteLength) return;
  s.started = true;
  load(s, gzipped);
}
async function load(s, gzipped) {
  let url = null;
  try {
    const stream = new Blob([gzipped]).stream().pipeThrough(new DecompressionStream("gzip"));
    const source = await new Response(stream).text();
    const wrapped = "const module = { exports: {} }; const exports = module.exports;\n"
      + source + "\nexport default module.exports;";
    url = URL.createObjectURL(new Blob([wrapped], { type: "text/javascript" }));
    const mod = await import(/* webpackIgnore: true */ url);
    const Plotly = mod.default && mod.default.react ? mod.default : globalThis.Plotly;
    if (!Plotly || !Plotly.react) throw new Error("plotly.js did not export Plotly.react");
    s.resolve(Plotly);
  } catch (error) {
    s.started = false;
    s.reject(error);
  } finally {
    if (url) URL.revokeObjectURL(url);
  }
}
export default { initialize, render() {} };
