// A busy note: shown only once work has lasted half a second, with the app's views dimmed;
// then the step the kernel is at and the seconds elapsed, so slow work shows it is moving.
function render({ model, el }) {
  el.classList.add("placeborag-status");
  let timer = null, ticker = null, since = 0;
  const mark = (on) => {
    const app = el.closest(".placeborag-app");
    if (app) app.classList.toggle("placeborag-busy", on);
  };
  const write = () => {
    const text = model.get("busy"), step = model.get("step");
    const seconds = Math.floor((performance.now() - since) / 1000);
    el.textContent = "";
    const spin = document.createElement("span");
    spin.className = "placeborag-spinner";
    const elapsed = seconds >= 1 ? " (" + seconds + " s)" : "";
    el.append(spin, " " + text + (step ? ": " + step : "") + elapsed);
    el.dataset.busy = "1";
  };
  const stop = () => {
    clearTimeout(timer); clearInterval(ticker); timer = ticker = null;
    el.textContent = ""; delete el.dataset.busy; mark(false);
  };
  const show = () => {
    if (!model.get("busy")) { stop(); return; }
    if (timer !== null || ticker !== null) { if (ticker !== null) write(); return; }
    since = performance.now();
    timer = setTimeout(() => {
      timer = null;
      write();
      mark(true);
      ticker = setInterval(write, 1000);
    }, 500);
  };
  model.on("change:busy", show);
  model.on("change:step", show);
  show();
  return () => { stop(); model.off("change:busy", show); model.off("change:step", show); };
}
export default { render };
