// A heatmap's cells by keyboard (ui/widgets/keyboard_grid.py): a roving-tabindex grid (the WAI-ARIA grid pattern) beside
// the chart. One Tab stop; the arrow keys, Home / End (with Ctrl: the first / last cell) and Page Up / Down move;
// Enter or Space sends the cell's (row, col) indices as the trigger "open", which keeps the cell a click keeps.
//
// What a sighted learner sees: the grid itself stays visually hidden (screen readers read it); while it has focus a
// focus ring is drawn over the chart's own cell, with a chip naming the cell and its value. The ring finds the cell
// from the chart's plot area (Vega's SVG draws the view's background as the root group's path.background; as a
// second way, the group of rect marks with one mark per cell): the box divided by rows and columns, the cells being
// square. Where neither is found, the grid itself appears while it has focus, as a table of the values.
// Beyond WINDOW_ROWS rows or MAX_COLUMNS columns only a window of the grid around the active cell is in the page
// (aria-rowcount / aria-colindex say where it is).
//
// The script also makes the arithmetic container a polite live region (read out when it opens, by keyboard or by
// mouse), and when the chart still outlines a clicked cell other than the opened one (the keyboard opened another),
// it clears the chart's selection as a double click does, so the outline never points at another cell than the
// arithmetic and a click on that cell opens it again.
// Labels and numbers are set as text (textContent, setAttribute), never parsed as HTML: labels are the learner's.

const WINDOW_ROWS = 12;
const MAX_COLUMNS = 12;
// The width a column of the table needs ('-0.1234' and a ring), for how many columns fit
const CELL_PX = 64;

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  if (!data) return;
  const host = parentElement;
  // The component's html is this root (so the page's style hides it before the script runs).
  const root = host.querySelector(".alab-cells");
  if (!root) return;
  if (!root.ring) {
    const ring = document.createElement("div");
    ring.className = "alab-cells-ring";
    const chip = document.createElement("div");
    chip.className = "alab-cells-chip";
    // The focused cell's own name says the same to a screen reader
    chip.setAttribute("aria-hidden", "true");
    host.append(ring, chip);
    root.ring = ring;
    root.chip = chip;
    listen(root);
  }
  const holder = host.closest ? host.closest("[data-testid='stElementContainer']") : null;
  if (holder && holder.parentElement) holder.style.setProperty("--alab-gap", getComputedStyle(holder.parentElement).rowGap);
  // The latest mount's sender
  root.send = setTriggerValue;
  root.chart = data.chart || "";
  markLive(data.live, 0);
  if (data.stale) clearChartSelection(root);
  // A raster image: its pickers choose the cell; this only marks the live region
  if (!data.grid) return root.cleanup;
  if (root.text !== data.grid.id) {
    root.text = data.grid.id;
    root.grid = { ...data.grid, values: data.grid.values.split("|") };
  }
  const focused = root.contains(document.activeElement);
  const opened = Array.isArray(data.opened) ? data.opened : null;
  const g = root.grid;
  if (!root.cursor || (!focused && opened)) root.cursor = opened ? [opened[0], opened[1]] : [0, 0];
  root.cursor = [clamp(root.cursor[0], g.rows.length), clamp(root.cursor[1], g.cols.length)];
  root.opened = opened;
  draw(root, focused);
  return root.cleanup;
}

function clamp(i, n) {
  return Math.max(0, Math.min(n - 1, i | 0));
}

function keyed(name) {
  return name ? document.querySelector(`.st-key-${CSS.escape(name)}`) : null;
}

function markLive(name, tries) {
  // The arithmetic container (st.container(key=...)) carries the class st-key-<key>.
  if (!name) return;
  const box = keyed(name);
  if (!box) {
    if (tries < 40) requestAnimationFrame(() => markLive(name, tries + 1));
    return;
  }
  box.setAttribute("role", "status");
  box.setAttribute("aria-live", "polite");
  box.setAttribute("aria-atomic", "true");
}

// The chart's plot area, {left, top, width, height} in the viewport, or null: the view's background, else the
// group of rect marks with one mark per cell (a mask's blocked scores draw no mark, so that group may be short).
// Either must be as wide for a column as it is tall for a row (the heatmap's cells are square).
function plotArea(root) {
  const chart = keyed(root.chart);
  const g = root.grid;
  if (!chart || !g) return null;
  const square = (box) =>
    box.width > 0 && Math.abs(box.width / g.cols.length - box.height / g.rows.length) < 0.5 + box.width * 0.01;
  const view = chart.querySelector("svg g.role-frame.root > g > path.background");
  if (view && square(view.getBoundingClientRect())) return view.getBoundingClientRect();
  const n = g.rows.length * g.cols.length;
  for (const group of chart.querySelectorAll("svg g.mark-rect")) {
    if (group.childElementCount === n && square(group.getBoundingClientRect())) return group.getBoundingClientRect();
  }
  return null;
}

// The viewport box of the cell (r, c), or null.
function cellBox(root, r, c) {
  const box = plotArea(root);
  if (!box) return null;
  const w = box.width / root.grid.cols.length;
  const h = box.height / root.grid.rows.length;
  return { left: box.left + c * w, top: box.top + r * h, width: w, height: h };
}

// A double click on a cell mark, as the learner would give it (the selection's "clear" event).
function clearChartSelection(root) {
  const chart = keyed(root.chart);
  const mark = chart && chart.querySelector("svg g.mark-rect path");
  if (!mark) return;
  const box = mark.getBoundingClientRect();
  const at = { bubbles: true, cancelable: true, view: window, clientX: box.left + 1, clientY: box.top + 1 };
  mark.dispatchEvent(new MouseEvent("dblclick", at));
}

function columnsThatFit(root) {
  const width = (root.parentElement && root.parentElement.getBoundingClientRect().width) || 0;
  return Math.max(3, Math.min(MAX_COLUMNS, Math.floor((width - 90) / CELL_PX) || MAX_COLUMNS));
}

// The first row and column of the drawn window: kept while the cursor stays inside it, moved just enough otherwise.
function placeWindow(root) {
  const g = root.grid;
  const sizes = [Math.min(WINDOW_ROWS, g.rows.length), Math.min(columnsThatFit(root), g.cols.length)];
  const start = root.start || [0, 0];
  root.start = [0, 1].map((axis) => {
    const n = axis === 0 ? g.rows.length : g.cols.length;
    let first = Math.min(start[axis], n - sizes[axis]);
    const at = root.cursor[axis];
    if (at < first) first = at;
    if (at >= first + sizes[axis]) first = at - sizes[axis] + 1;
    return Math.max(0, first);
  });
  root.sizes = sizes;
}

// A text of the grid's language (keyboard_grid.grid_texts) with its {names} filled in, in one pass: a label that
// holds "{row}" stays as typed.
function say(g, name, values) {
  const template = (g.texts && g.texts[name]) || "";
  return template.replace(/\{(\w+)\}/g, (whole, key) => (key in values ? String(values[key]) : whole));
}

function label(g, r, c) {
  const names = { row_title: g.rowTitle, row: g.rows[r], col_title: g.colTitle, col: g.cols[c] };
  if (!g.values) return say(g, "cell", names);
  return say(g, "cellValue", { ...names, value: g.values[r * g.cols.length + c] });
}

function draw(root, focused) {
  const before = root.start && root.sizes ? root.start.join() + "/" + root.sizes.join() : "";
  placeWindow(root);
  const after = root.start.join() + "/" + root.sizes.join();
  if (!root.table || before !== after || root.drawn !== root.text) build(root);
  mark(root);
  if (focused) focusCursor(root);
  showRing(root);
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function build(root) {
  const g = root.grid;
  const [r0, c0] = root.start;
  const [nr, nc] = root.sizes;
  const hadFocus = root.contains(document.activeElement);
  root.replaceChildren();
  const windowed = nr < g.rows.length || nc < g.cols.length;
  const help = el(
    "p",
    "alab-cells-help",
    say(g, "help", { title: g.title }) +
      (windowed ? " " + say(g, "window", { rows: g.rows.length, cols: g.cols.length }) : "")
  );
  if (!root.id) root.id = "alab-cells-" + Math.random().toString(36).slice(2);
  help.id = `${root.id}-help`;
  const table = el("table", "alab-cells-grid");
  table.setAttribute("role", "grid");
  table.setAttribute("aria-label", say(g, "table", { title: g.title, rows: g.rows.length, cols: g.cols.length }));
  table.setAttribute("aria-describedby", help.id);
  table.setAttribute("aria-rowcount", String(g.rows.length + 1));
  table.setAttribute("aria-colcount", String(g.cols.length + 1));
  const head = el("tr");
  head.setAttribute("aria-rowindex", "1");
  const corner = el("th", "alab-cells-corner", `${g.rowTitle} \\ ${g.colTitle}`);
  corner.setAttribute("aria-colindex", "1");
  head.appendChild(corner);
  for (let c = c0; c < c0 + nc; c++) {
    const th = el("th", "", g.cols[c]);
    th.setAttribute("role", "columnheader");
    th.setAttribute("scope", "col");
    th.setAttribute("aria-colindex", String(c + 2));
    head.appendChild(th);
  }
  const thead = el("thead");
  thead.appendChild(head);
  const body = el("tbody");
  for (let r = r0; r < r0 + nr; r++) {
    const tr = el("tr");
    tr.setAttribute("aria-rowindex", String(r + 2));
    const th = el("th", "", g.rows[r]);
    th.setAttribute("role", "rowheader");
    th.setAttribute("scope", "row");
    th.setAttribute("aria-colindex", "1");
    tr.appendChild(th);
    for (let c = c0; c < c0 + nc; c++) {
      const td = el("td", "", g.values ? g.values[r * g.cols.length + c] : "");
      td.setAttribute("role", "gridcell");
      td.setAttribute("aria-colindex", String(c + 2));
      td.setAttribute("aria-label", label(g, r, c));
      td.dataset.r = String(r);
      td.dataset.c = String(c);
      td.tabIndex = -1;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  table.append(thead, body);
  root.append(help, table);
  root.table = table;
  root.drawn = root.text;
  // Focus left with the old cells: focusCursor puts it back
  if (hadFocus) root.moving = true;
}

function cellAt(root, r, c) {
  return root.table.querySelector(`td[data-r="${r}"][data-c="${c}"]`);
}

// The roving tab stop and the opened cell's mark.
function mark(root) {
  for (const td of root.table.querySelectorAll("td")) {
    td.tabIndex = -1;
    td.removeAttribute("aria-selected");
    td.classList.remove("alab-cells-opened");
  }
  const [r, c] = root.cursor;
  const active = cellAt(root, r, c);
  if (active) active.tabIndex = 0;
  if (root.opened) {
    const open = cellAt(root, root.opened[0], root.opened[1]);
    if (open) {
      open.setAttribute("aria-selected", "true");
      open.classList.add("alab-cells-opened");
    }
  }
}

function focusCursor(root) {
  const active = cellAt(root, root.cursor[0], root.cursor[1]);
  if (active && document.activeElement !== active) active.focus({ preventScroll: true });
  root.moving = false;
}

// The focus ring over the chart's cell and its chip, while the grid has focus (else the table itself shows). A cell
// of a long sentence's heatmap is a few pixels: the ring is at least MIN_RING pixels, centred on it.
const MIN_RING = 14;

function showRing(root) {
  const { ring, chip } = root;
  const focused = root.contains(document.activeElement);
  const [r, c] = root.cursor || [0, 0];
  const cell = focused && root.grid ? cellBox(root, r, c) : null;
  root.classList.toggle("alab-cells-table", Boolean(focused && root.grid && !cell));
  if (!cell) {
    ring.style.display = chip.style.display = "none";
    return;
  }
  const opened = root.opened && root.opened[0] === r && root.opened[1] === c;
  chip.textContent = say(root.grid, opened ? "opened" : "enter", { cell: label(root.grid, r, c) });
  const w = Math.max(cell.width, MIN_RING);
  const h = Math.max(cell.height, MIN_RING);
  const left = cell.left - (w - cell.width) / 2;
  const top = cell.top - (h - cell.height) / 2;
  Object.assign(ring.style, { display: "block", left: `${left}px`, top: `${top}px`, width: `${w}px`, height: `${h}px` });
  chip.style.display = "block";
  const tip = chip.getBoundingClientRect();
  const below = top + h + 6;
  const chipTop = below + tip.height < window.innerHeight ? below : top - tip.height - 6;
  const chipLeft = Math.max(4, Math.min(left, window.innerWidth - tip.width - 4));
  Object.assign(chip.style, { left: `${chipLeft}px`, top: `${chipTop}px` });
}

// The nearest ancestor that scrolls along an axis ("X" or "Y"), else the page.
function scroller(element, axis) {
  for (let e = element && element.parentElement; e; e = e.parentElement) {
    const overflow = getComputedStyle(e)[`overflow${axis}`];
    const size = axis === "Y" ? e.scrollHeight > e.clientHeight : e.scrollWidth > e.clientWidth;
    if ((overflow === "auto" || overflow === "scroll") && size) return e;
  }
  return document.scrollingElement;
}

// Scroll the cursor's cell (and the chip under it) into view: the page up or down, a wide chart sideways.
function bringIntoView(root) {
  const [r, c] = root.cursor;
  const cell = cellBox(root, r, c);
  if (!cell) {
    const active = cellAt(root, r, c);
    if (active) active.scrollIntoView({ block: "nearest", inline: "nearest" });
    return;
  }
  const chart = keyed(root.chart).querySelector("[data-testid='stVegaLiteChart']") || keyed(root.chart);
  const across = scroller(chart.querySelector("svg") || chart, "X");
  const frame = across === document.scrollingElement ? { left: 0, right: window.innerWidth } : across.getBoundingClientRect();
  if (cell.left < frame.left) across.scrollLeft -= frame.left - cell.left + 8;
  else if (cell.left + cell.width > frame.right) across.scrollLeft += cell.left + cell.width - frame.right + 8;
  const down = scroller(chart, "Y");
  const room = { top: 8, bottom: window.innerHeight - 56 };
  if (cell.top < room.top) down.scrollTop -= room.top - cell.top;
  else if (cell.top + cell.height > room.bottom) down.scrollTop += cell.top + cell.height - room.bottom;
}

function moveTo(root, r, c) {
  const g = root.grid;
  root.cursor = [clamp(r, g.rows.length), clamp(c, g.cols.length)];
  draw(root, true);
  bringIntoView(root);
  showRing(root);
}

function open(root) {
  const [r, c] = root.cursor;
  root.opened = [r, c];
  mark(root);
  showRing(root);
  if (root.send) root.send("open", [r, c]);
}

function listen(root) {
  root.addEventListener("keydown", (event) => {
    if (!root.grid || !event.target.matches("td")) return;
    const [r, c] = root.cursor;
    const g = root.grid;
    const page = (root.sizes && root.sizes[0]) || 1;
    const ctrl = event.ctrlKey || event.metaKey;
    const moves = {
      ArrowUp: [r - 1, c],
      ArrowDown: [r + 1, c],
      ArrowLeft: [r, c - 1],
      ArrowRight: [r, c + 1],
      Home: ctrl ? [0, 0] : [r, 0],
      End: ctrl ? [g.rows.length - 1, g.cols.length - 1] : [r, g.cols.length - 1],
      PageUp: [r - page, c],
      PageDown: [r + page, c],
    };
    if (event.key in moves && !event.altKey) {
      event.preventDefault();
      moveTo(root, ...moves[event.key]);
    } else if ((event.key === "Enter" || event.key === " ") && !ctrl && !event.altKey) {
      event.preventDefault();
      open(root);
    }
  });
  root.addEventListener("click", (event) => {
    const td = event.target.closest && event.target.closest("td[data-r]");
    if (!td || !root.grid) return;
    root.cursor = [Number(td.dataset.r), Number(td.dataset.c)];
    mark(root);
    td.focus();
    open(root);
  });
  const follow = () => showRing(root);
  root.addEventListener("focusin", () => {
    bringIntoView(root);
    showRing(root);
    window.addEventListener("scroll", follow, true);
    window.addEventListener("resize", follow);
  });
  const unfollow = () => {
    window.removeEventListener("scroll", follow, true);
    window.removeEventListener("resize", follow);
  };
  root.addEventListener("focusout", (event) => {
    if (root.moving || root.contains(event.relatedTarget)) return;
    unfollow();
    requestAnimationFrame(() => showRing(root));
  });
  // Streamlit runs the cleanup the last call returned when the element goes (another step, another page).
  root.cleanup = unfollow;
}
