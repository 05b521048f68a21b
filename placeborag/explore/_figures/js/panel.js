// An HTML panel (the pre/post tables) whose row clicks come back as messages.
function render({ model, el }) {
  const show = () => { el.innerHTML = model.get("value"); };
  el.addEventListener("click", (event) => {
    const row = event.target && event.target.closest && event.target.closest("tr[data-id]");
    if (row && el.contains(row)) {
      const occurrence = Number(row.dataset.occurrence || "0");
      model.send({ kind: "row", revision: model.get("revision"), id: row.dataset.id, occurrence });
    }
  });
  model.on("change:value", show);
  show();
  return () => model.off("change:value", show);
}
export default { render };
