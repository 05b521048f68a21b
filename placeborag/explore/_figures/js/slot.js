// One promise of plotly.js per bundle digest, on globalThis, made by whichever module runs
// first (the kernel puts this file before loader.js and figure.js); the loader resolves it.
function slot(key) {
  const name = Symbol.for(key);
  let s = globalThis[name];
  if (!s) {
    let resolve, reject;
    const promise = new Promise((yes, no) => { resolve = yes; reject = no; });
    s = globalThis[name] = { promise, resolve, reject, started: false };
  }
  return s;
}
