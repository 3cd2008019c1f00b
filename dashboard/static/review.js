// kosti label review: check and fix the dice boxes and faces of captured throws.
// Vanilla JS, no external assets. API: /api/review/* (dashboard/review.py).
"use strict";

const T = {
  en: {
    title: "review dice labels", back: "Back to the table", empty: "No captured images yet. Run kosti capture --source SRC --out DIR, or correct throws while playing.",
    delete: "Delete", prev: "← Previous", skip: "Skip", save: "Save ✓ next", images: "Images",
    f_all: "all", f_unreviewed: "to check", f_reviewed: "checked",
    help_title: "How to review",
    help_select: "Tap a box to select it; tap it again to step its face (1→2→…→6).",
    help_keys: "Keys 1–6 set the selected die's face; Delete or Backspace removes it; Tab selects the next box.",
    help_draw: "Drag on empty space to draw a box round a die the camera missed; drag a selected box or its corners to fix it.",
    help_zoom: "Small dice: zoom with + and − (or pinch with two fingers); scroll or two-finger drag to move around.",
    help_nav: "Enter or → saves and opens the next unchecked image; ← goes back (edits are kept).",
    help_suggest: "Grey dashed boxes are dice the reader saw but did not take (it scored them low or took them for something else): tap one to keep it as a die, then set its face.",
    suggested: (n) => `${n} ${n === 1 ? "box" : "boxes"} to confirm (grey, dashed): tap to keep`,
    train_hint: "When enough images are checked, retrain: kosti train --data DIR.",
    counter: (n, m) => `${n} of ${m} reviewed`, reviewed: "reviewed", to_check: "to check",
    dice: "dice", uncertain: "unsure", saved: "Saved", all_done: "All images are reviewed. Retrain with kosti train --data DIR.",
    pin_needed: "Enter the PIN shown when the dashboard started, then save again.",
    src_capture: "capture", src_correction: "correction while playing", src_import: "imported",
    unsaved: "Unsaved changes", none_selected: "Select a box first (tap it), or draw one.",
    faces_stat: "faces", load_failed: "Could not load", die: "die", conf: "model confidence",
  },
  ru: {
    title: "проверка разметки костей", back: "Назад к столу", empty: "Снимков пока нет. Запустите kosti capture --source SRC --out DIR или исправляйте броски во время игры.",
    delete: "Удалить", prev: "← Назад", skip: "Пропустить", save: "Сохранить ✓ дальше", images: "Снимки",
    f_all: "все", f_unreviewed: "непроверенные", f_reviewed: "проверенные",
    help_title: "Как проверять",
    help_select: "Нажмите на рамку, чтобы выбрать её; ещё нажатие меняет грань (1→2→…→6).",
    help_keys: "Клавиши 1–6 задают грань выбранной кости; Delete или Backspace удаляют её; Tab выбирает следующую.",
    help_draw: "Протяните по пустому месту, чтобы обвести пропущенную кость; выбранную рамку можно двигать за середину и углы.",
    help_zoom: "Мелкие кости: увеличьте кнопками + и − (или двумя пальцами); прокрутка или жест двумя пальцами двигает снимок.",
    help_nav: "Enter или → сохраняет и открывает следующий непроверенный снимок; ← назад (правки сохраняются).",
    help_suggest: "Серые пунктирные рамки — кости, которые модель увидела, но не приняла (низкая оценка или приняла за другое): нажмите на рамку, чтобы оставить кость, затем задайте грань.",
    suggested: (n) => `${n} ${ruPlural(n, "рамка", "рамки", "рамок")} на подтверждение (серые, пунктир): нажмите, чтобы оставить`,
    train_hint: "Когда проверено достаточно снимков, дообучите: kosti train --data DIR.",
    counter: (n, m) => `${n} из ${m} проверено`, reviewed: "проверен", to_check: "не проверен",
    dice: "костей", uncertain: "неуверенно", saved: "Сохранено", all_done: "Все снимки проверены. Дообучите: kosti train --data DIR.",
    pin_needed: "Введите PIN, показанный при запуске, и сохраните снова.",
    src_capture: "съёмка", src_correction: "исправление в игре", src_import: "импорт",
    unsaved: "Есть несохранённые правки", none_selected: "Сначала выберите рамку (нажмите на неё) или нарисуйте новую.",
    faces_stat: "грани", load_failed: "Не удалось загрузить", die: "кость", conf: "уверенность модели",
  },
};

let lang = localStorage.getItem("kosti.lang") || ((navigator.language || "").startsWith("ru") ? "ru" : "en");
const $ = (id) => document.getElementById(id);
// Russian plural: 1 рамка, 2 рамки, 5 рамок (21 рамка, 11 рамок).
const ruPlural = (n, one, few, many) => {
  const m10 = n % 10, m100 = n % 100;
  return m10 === 1 && m100 !== 11 ? one : m10 >= 2 && m10 <= 4 && (m100 < 12 || m100 > 14) ? few : many;
};
const t = (k) => (T[lang] && T[lang][k] !== undefined ? T[lang][k] : T.en[k] !== undefined ? T.en[k] : k);
const SVG_NS = "http://www.w3.org/2000/svg";
const MIN_BOX_SCREEN_PX = 8; // a drag shorter than this is a tap, not a box

const state = {
  items: [],        // [{id, reviewed, dice, source, ...}]
  stats: null,
  rec: null,        // the open image: {id, width, height, dice: [{value, box, confidence, uncertain}], reviewed, ...}
  dice: [],         // working copy of rec.dice
  suggested: [],    // boxes the reader saw but did not take: [{box, guess, confidence, reason}]; a tap keeps one
  sel: -1,          // selected die index
  dirty: false,
  lastFace: 1,
  busy: false,
  zoom: 1,          // 1 = the whole image fits; up to 5 (buttons, keys + and -, two-finger pinch)
};

// -- helpers ------------------------------------------------------------------------------------------
function applyLang() {
  document.documentElement.lang = lang;
  $("lang-toggle").textContent = lang === "ru" ? "EN" : "RU";
  document.querySelectorAll("[data-i18n]").forEach((el) => {
    const v = t(el.dataset.i18n);
    if (typeof v === "string") el.textContent = v;
  });
  document.querySelectorAll("[data-i18n-title]").forEach((el) => { el.title = t(el.dataset.i18nTitle); });
  renderCounter();
  renderList();
  renderInfo();
}

function showMessage(text, info) {
  const m = $("message");
  if (!text) { m.hidden = true; return; }
  m.textContent = text;
  m.className = "message" + (info ? " info" : "");
  m.hidden = false;
  if (info) setTimeout(() => { if (m.textContent === text) m.hidden = true; }, 2500);
}

function errorText(body, status) {
  const d = body && body.detail;
  const pick = (o) => (lang === "ru" ? o.error_ru || o.error : o.error);
  if (body && (body.error || body.error_ru)) return pick(body);
  if (d && typeof d === "object" && !Array.isArray(d) && (d.error || d.error_ru)) return pick(d);
  if (Array.isArray(d) && d.length) {
    return d.map((e) => `${(e.loc || []).filter((x) => x !== "body").join(".")}: ${e.msg}`).join("; ");
  }
  return `HTTP ${status}`;
}

async function api(path, opts = {}) {
  const headers = { "Content-Type": "application/json" };
  const pin = $("pin").value.trim();
  if (pin) headers["X-Kosti-Pin"] = pin;
  const r = await fetch(path, { ...opts, headers: { ...headers, ...(opts.headers || {}) } });
  let body = null;
  try { body = await r.json(); } catch (_) { body = null; }
  if (!r.ok) {
    if (r.status === 403) { $("pin").hidden = false; $("pin").focus(); }
    const err = new Error(errorText(body, r.status) + (r.status === 403 ? " — " + t("pin_needed") : ""));
    err.status = r.status;
    throw err;
  }
  return body;
}

// -- list and counter ---------------------------------------------------------------------------------
async function loadList() {
  const body = await api("/api/review/images");
  state.items = body.images;
  state.stats = body.stats;
  renderCounter();
  renderList();
  $("empty").hidden = state.items.length > 0;
  $("stage-wrap").hidden = state.items.length === 0;
}

function renderCounter() {
  const s = state.stats;
  const c = $("counter");
  if (!s) { c.textContent = "–"; return; }
  c.textContent = t("counter")(s.reviewed, s.images);
  c.classList.toggle("done", s.images > 0 && s.reviewed === s.images);
  const faces = s.faces || {};
  $("faces-stats").textContent = `${s.dice} ${t("dice")} · ${t("faces_stat")}: ` +
    ["1", "2", "3", "4", "5", "6"].map((f) => `${f}×${faces[f] || 0}`).join(" ");
}

function renderList() {
  const ol = $("list");
  if (!ol) return;
  const filter = $("filter").value;
  ol.innerHTML = "";
  for (const it of state.items) {
    if (filter === "reviewed" && !it.reviewed) continue;
    if (filter === "unreviewed" && it.reviewed) continue;
    const li = document.createElement("li");
    li.className = (it.reviewed ? "reviewed" : "todo") + (state.rec && state.rec.id === it.id ? " cur" : "");
    li.dataset.id = it.id;
    const st = document.createElement("span");
    st.className = "st";
    st.textContent = it.reviewed ? "✓" : "•";
    const name = document.createElement("span");
    name.textContent = it.id;
    const n = document.createElement("span");
    n.className = "small";
    n.textContent = `${it.dice}` + (it.uncertain ? ` (${it.uncertain}?)` : "") + (it.source === "correction" ? " ✎" : "");
    li.append(st, name, n);
    li.addEventListener("click", () => go(it.id, { keep: true }));
    ol.appendChild(li);
  }
  const cur = ol.querySelector("li.cur");
  if (cur && cur.scrollIntoView) cur.scrollIntoView({ block: "nearest" });
}

// -- one image ----------------------------------------------------------------------------------------
async function openImage(id) {
  const rec = await api(`/api/review/images/${encodeURIComponent(id)}`);
  state.rec = rec;
  state.dice = rec.dice.map((d) => ({ ...d, box: d.box.slice() }));
  state.suggested = (rec.suggested || []).map((s) => ({ ...s, box: s.box.slice() }));
  state.sel = -1;
  state.dirty = false;
  state.zoom = 1;
  if (rec.stats) state.stats = rec.stats;
  if (location.hash.slice(1) !== id) history.replaceState(null, "", "#" + encodeURIComponent(id));
  const img = $("photo");
  await new Promise((resolve) => {
    img.onload = resolve;
    img.onerror = resolve;
    img.src = rec.image_url + "?v=" + encodeURIComponent(rec.time || "");
  });
  layout();
  render();
  renderInfo();
  renderCounter();
  renderList();
}

function renderInfo() {
  const rec = state.rec;
  if (!rec) return;
  const st = $("img-status");
  st.textContent = rec.reviewed ? t("reviewed") : t("to_check");
  st.className = "badge " + (rec.reviewed ? "ok" : "todo");
  const when = rec.time ? rec.time.replace("T", " ").replace(/\.\d+Z$/, " UTC") : "";
  const src = t("src_" + (rec.source || "import"));
  $("img-info").textContent = [rec.id, `${rec.width}×${rec.height}`, src, rec.model || "", when].filter(Boolean).join(" · ")
    + (state.dirty ? " · " + t("unsaved") : "");
  const note = $("img-note");
  note.hidden = !rec.note;
  note.textContent = rec.note || "";
  const sug = $("img-suggested");
  if (sug) {
    sug.hidden = !state.suggested.length;
    sug.textContent = state.suggested.length ? t("suggested")(state.suggested.length) : "";
  }
}

// Size the stage to fit the image into the card width and ~64 % of the window height (the face buttons
// stay in view), times the zoom; when zoomed the frame keeps the fitted size and scrolls.
function layout() {
  const rec = state.rec;
  if (!rec) return;
  const wrap = $("stage-wrap");
  const maxW = wrap.clientWidth || 320;
  const maxH = Math.max(200, window.innerHeight * 0.64);
  const s = Math.min(maxW / rec.width, maxH / rec.height);
  const stage = $("stage");
  stage.style.width = Math.round(rec.width * s * state.zoom) + "px";
  stage.style.height = Math.round(rec.height * s * state.zoom) + "px";
  wrap.style.height = state.zoom > 1 ? Math.round(rec.height * s) + "px" : "";
  wrap.classList.toggle("zoomed", state.zoom > 1);
  $("boxes").setAttribute("viewBox", `0 0 ${rec.width} ${rec.height}`);
  $("zoom-level").textContent = state.zoom > 1 ? `${state.zoom.toFixed(1)}×` : "";
}

// Zoom to `z` (1–5) keeping the image point at fraction (fx, fy) under screen point (cx, cy).
function zoomTo(z, fx, fy, cx, cy) {
  state.zoom = Math.min(5, Math.max(1, z));
  layout();
  const wrap = $("stage-wrap");
  const w = wrap.getBoundingClientRect();
  const st = $("stage");
  wrap.scrollLeft = fx * st.offsetWidth - (cx - w.left);
  wrap.scrollTop = fy * st.offsetHeight - (cy - w.top);
  render();
}

// Zoom in or out around the selected box (else the middle of the view).
function zoomStep(factor) {
  if (!state.rec) return;
  const w = $("stage-wrap").getBoundingClientRect();
  const r = $("stage").getBoundingClientRect();
  let fx, fy;
  const d = state.dice[state.sel];
  if (d) { fx = (d.box[0] + d.box[2]) / 2 / state.rec.width; fy = (d.box[1] + d.box[3]) / 2 / state.rec.height; }
  else { fx = (w.left + w.width / 2 - r.left) / r.width; fy = (w.top + w.height / 2 - r.top) / r.height; }
  zoomTo(state.zoom * factor, fx, fy, w.left + w.width / 2, w.top + w.height / 2);
}

// Image pixels per screen pixel.
function scale() {
  const r = $("boxes").getBoundingClientRect();
  return state.rec && r.width ? state.rec.width / r.width : 1;
}

function toImage(ev) {
  const r = $("boxes").getBoundingClientRect();
  const rec = state.rec;
  const x = ((ev.clientX - r.left) / r.width) * rec.width;
  const y = ((ev.clientY - r.top) / r.height) * rec.height;
  return [Math.min(Math.max(x, 0), rec.width), Math.min(Math.max(y, 0), rec.height)];
}

function el(name, attrs) {
  const e = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

function render() {
  const svg = $("boxes");
  svg.innerHTML = "";
  if (!state.rec) return;
  const k = scale();
  const fs = 18 * k;
  state.suggested.forEach((s, j) => {
    const [x1, y1, x2, y2] = s.box;
    const g = el("g", { class: "suggest", "data-s": j });
    g.appendChild(el("rect", { class: "box", x: x1, y: y1, width: x2 - x1, height: y2 - y1, "stroke-width": 2 * k, "data-s": j }));
    const tx = el("text", { x: x1 + fs * 0.2, y: y1 + fs * 0.95, "font-size": fs * 0.9 });
    tx.textContent = `${s.guess}?`;
    g.appendChild(tx);
    svg.appendChild(g);
  });
  state.dice.forEach((d, i) => {
    const [x1, y1, x2, y2] = d.box;
    const g = el("g", { class: "die" + (d.uncertain ? " unsure" : "") + (i === state.sel ? " sel" : ""), "data-i": i });
    g.appendChild(el("rect", { class: "box", x: x1, y: y1, width: x2 - x1, height: y2 - y1, "stroke-width": 2.5 * k, "data-i": i }));
    const label = String(d.value) + (d.uncertain ? "?" : "");
    const tw = fs * (0.62 * label.length + 0.5);
    const ty = y1 - fs * 1.2 >= 0 ? y1 - fs * 1.2 : y1;
    g.appendChild(el("rect", { class: "tag", x: x1, y: ty, width: tw, height: fs * 1.2, rx: 3 * k, "data-i": i }));
    const tx = el("text", { x: x1 + fs * 0.25, y: ty + fs * 0.98, "font-size": fs });
    tx.textContent = label;
    g.appendChild(tx);
    svg.appendChild(g);
  });
  if (state.sel >= 0 && state.dice[state.sel]) {
    const [x1, y1, x2, y2] = state.dice[state.sel].box;
    const h = 14 * k;
    for (const [name, x, y] of [["nw", x1, y1], ["ne", x2, y1], ["sw", x1, y2], ["se", x2, y2]]) {
      svg.appendChild(el("rect", { class: "handle " + name, x: x - h / 2, y: y - h / 2, width: h, height: h, "stroke-width": 1.5 * k, "data-handle": name }));
    }
  }
  document.querySelectorAll("button.face").forEach((b) => {
    const d = state.dice[state.sel];
    b.classList.toggle("on", !!d && String(d.value) === b.dataset.face);
  });
  $("btn-delete").disabled = state.sel < 0;
  const d = state.dice[state.sel];
  $("sel-info").textContent = d
    ? `${t("die")} ${state.sel + 1}/${state.dice.length}: ${d.value}${d.uncertain ? "?" : ""}` +
      (d.confidence != null ? ` · ${t("conf")} ${Math.round(d.confidence * 100)}%` : "") +
      ` · ${Math.round(d.box[2] - d.box[0])}×${Math.round(d.box[3] - d.box[1])} px`
    : `${state.dice.length} ${t("dice")}`;
}

function markDirty() {
  state.dirty = true;
  renderInfo();
}

function select(i) {
  state.sel = i;
  render();
}

function setFace(v) {
  const d = state.dice[state.sel];
  if (!d) { showMessage(t("none_selected"), true); return; }
  if (d.value !== v) d.confidence = null; // the model's confidence was for its own proposal
  d.value = v;
  d.uncertain = false;
  state.lastFace = v;
  markDirty();
  render();
}

// A tap on a suggested box keeps it: it becomes a die with the reader's guessed face, selected (so a key or
// a face button sets its face), and is no longer a suggestion.
function keepSuggested(j) {
  const s = state.suggested[j];
  if (!s) return;
  state.suggested.splice(j, 1);
  state.dice.push({ value: s.guess, box: s.box.slice(), confidence: null, uncertain: false });
  state.sel = state.dice.length - 1;
  state.lastFace = s.guess;
  markDirty();
  render();
}

function removeSelected() {
  if (state.sel < 0) return;
  state.dice.splice(state.sel, 1);
  state.sel = -1;
  markDirty();
  render();
}

// -- pointer: select, cycle, move, resize, draw -------------------------------------------------------
let drag = null; // {kind: "draw"|"move"|"resize", i, start, box0, handle, moved, sx, sy, draft}
const pointers = new Map(); // active pointers (touch fingers) by id → {x, y}
let pinch = null;            // two fingers: {fx, fy, d0, z0} — zoom and pan the view

function cancelDrag() {
  if (!drag) return;
  if (drag.draft) drag.draft.remove();
  if ((drag.kind === "move" || drag.kind === "resize") && drag.moved) state.dice[drag.i].box = drag.box0;
  drag = null;
  render();
}

function startPinch() {
  const [a, b] = [...pointers.values()];
  const r = $("stage").getBoundingClientRect();
  const mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2;
  pinch = { fx: (mx - r.left) / r.width, fy: (my - r.top) / r.height, d0: Math.hypot(a.x - b.x, a.y - b.y) || 1, z0: state.zoom };
}

function onDown(ev) {
  if (!state.rec || ev.button > 0) return;
  ev.preventDefault();
  const svg = $("boxes");
  svg.setPointerCapture(ev.pointerId);
  pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
  if (pointers.size === 2) { cancelDrag(); startPinch(); return; }
  if (pointers.size > 2 || pinch) return;
  const p = toImage(ev);
  const target = ev.target;
  const base = { start: p, sx: ev.clientX, sy: ev.clientY, moved: false };
  if (target.dataset && target.dataset.handle) {
    drag = { ...base, kind: "resize", i: state.sel, handle: target.dataset.handle, box0: state.dice[state.sel].box.slice() };
  } else if (target.dataset && target.dataset.s !== undefined) {
    drag = { ...base, kind: "suggest", j: Number(target.dataset.s) };
  } else if (target.dataset && target.dataset.i !== undefined) {
    const i = Number(target.dataset.i);
    drag = { ...base, kind: "move", i, wasSelected: i === state.sel, box0: state.dice[i].box.slice() };
    if (i !== state.sel) select(i);
  } else {
    drag = { ...base, kind: "draw" };
  }
}

function onMove(ev) {
  if (pointers.has(ev.pointerId)) pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
  if (pinch && pointers.size === 2) {
    const [a, b] = [...pointers.values()];
    const z = pinch.z0 * Math.hypot(a.x - b.x, a.y - b.y) / pinch.d0;
    zoomTo(z, pinch.fx, pinch.fy, (a.x + b.x) / 2, (a.y + b.y) / 2);
    return;
  }
  if (!drag) return;
  const far = Math.hypot(ev.clientX - drag.sx, ev.clientY - drag.sy) >= MIN_BOX_SCREEN_PX;
  if (!drag.moved && !far) return;
  drag.moved = true;
  const p = toImage(ev);
  const rec = state.rec;
  if (drag.kind === "draw") {
    const [x1, y1] = drag.start;
    const box = [Math.min(x1, p[0]), Math.min(y1, p[1]), Math.max(x1, p[0]), Math.max(y1, p[1])];
    if (!drag.draft) { drag.draft = el("rect", { class: "draft" }); $("boxes").appendChild(drag.draft); }
    drag.draft.setAttribute("x", box[0]); drag.draft.setAttribute("y", box[1]);
    drag.draft.setAttribute("width", box[2] - box[0]); drag.draft.setAttribute("height", box[3] - box[1]);
    drag.draft.setAttribute("stroke-width", 2 * scale());
    drag.box = box;
  } else if (drag.kind === "move") {
    const [bx1, by1, bx2, by2] = drag.box0;
    const w = bx2 - bx1, h = by2 - by1;
    const dx = Math.min(Math.max(p[0] - drag.start[0], -bx1), rec.width - bx2);
    const dy = Math.min(Math.max(p[1] - drag.start[1], -by1), rec.height - by2);
    state.dice[drag.i].box = [bx1 + dx, by1 + dy, bx1 + dx + w, by1 + dy + h];
    markDirty();
    render();
  } else if (drag.kind === "resize") {
    let [x1, y1, x2, y2] = drag.box0;
    if (drag.handle.includes("w")) x1 = p[0]; else x2 = p[0];
    if (drag.handle.includes("n")) y1 = p[1]; else y2 = p[1];
    state.dice[drag.i].box = [Math.min(x1, x2), Math.min(y1, y2), Math.max(x1, x2), Math.max(y1, y2)];
    markDirty();
    render();
  }
}

function onUp(ev) {
  pointers.delete(ev.pointerId);
  if (pinch) { if (pointers.size === 0) pinch = null; return; }
  if (!drag) return;
  const d = drag;
  drag = null;
  if (d.kind === "draw") {
    if (d.draft) d.draft.remove();
    const k = scale();
    if (d.moved && d.box && (d.box[2] - d.box[0]) / k >= MIN_BOX_SCREEN_PX && (d.box[3] - d.box[1]) / k >= MIN_BOX_SCREEN_PX) {
      state.dice.push({ value: state.lastFace, box: d.box, confidence: null, uncertain: false });
      state.sel = state.dice.length - 1;
      markDirty();
    } else {
      state.sel = -1; // a tap on empty space deselects
    }
    render();
  } else if (d.kind === "suggest" && !d.moved) {
    keepSuggested(d.j);
  } else if (d.kind === "move" && !d.moved && d.wasSelected) {
    const die = state.dice[d.i]; // a tap on the selected box steps its face
    setFace((die.value % 6) + 1);
  } else if (d.kind === "resize") {
    const b = state.dice[d.i].box;
    if (b[2] - b[0] < 1 || b[3] - b[1] < 1) state.dice[d.i].box = d.box0;
    render();
  }
}

// -- saving and navigation ----------------------------------------------------------------------------
function payload(reviewed) {
  return JSON.stringify({
    dice: state.dice.map((d) => ({ value: d.value, box: d.box.map((v) => Math.round(v * 100) / 100) })),
    reviewed,
  });
}

async function save(reviewed) {
  const rec = await api(`/api/review/images/${encodeURIComponent(state.rec.id)}/labels`, { method: "PUT", body: payload(reviewed) });
  state.rec = rec;
  state.dice = rec.dice.map((d) => ({ ...d, box: d.box.slice() }));
  state.suggested = (rec.suggested || []).map((s) => ({ ...s, box: s.box.slice() }));
  state.dirty = false;
  if (rec.stats) state.stats = rec.stats;
  const it = state.items.find((x) => x.id === rec.id);
  if (it) { it.reviewed = rec.reviewed; it.dice = rec.dice.length; it.uncertain = 0; }
  return rec;
}

async function guarded(fn) {
  if (state.busy || !state.rec) return;
  state.busy = true;
  try { await fn(); } catch (e) { showMessage(e.message); } finally { state.busy = false; }
}

// Enter / →: save as reviewed, open the next unreviewed image.
function saveNext() {
  return guarded(async () => {
    const rec = await save(true);
    showMessage(t("saved"), true);
    if (rec.next_unreviewed) await openImage(rec.next_unreviewed);
    else { renderInfo(); renderCounter(); renderList(); render(); showMessage(t("all_done"), true); }
  });
}

// Skip: keep the labels unchecked and open the next image in order.
function skip() {
  return guarded(async () => {
    if (state.dirty) await save(state.rec.reviewed);
    const nxt = state.rec.next || state.rec.next_unreviewed;
    if (nxt) await openImage(nxt);
  });
}

function prev() {
  return guarded(async () => {
    if (state.dirty) await save(state.rec.reviewed); // keep the edits, leave the flag as it was
    if (state.rec.prev) await openImage(state.rec.prev);
  });
}

function go(id, opts) {
  return guarded(async () => {
    if (state.dirty && opts && opts.keep) await save(state.rec.reviewed);
    await openImage(id);
  });
}

function onKey(ev) {
  if (ev.target && (ev.target.tagName === "INPUT" || ev.target.tagName === "SELECT")) return;
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const k = ev.key;
  if (k >= "1" && k <= "6") { setFace(Number(k)); ev.preventDefault(); }
  else if (k === "Delete" || k === "Backspace") { removeSelected(); ev.preventDefault(); }
  else if (k === "Enter" || k === "ArrowRight") { saveNext(); ev.preventDefault(); }
  else if (k === "ArrowLeft") { prev(); ev.preventDefault(); }
  else if (k === "Escape") { select(-1); }
  else if (k === "+" || k === "=") { zoomStep(1.5); ev.preventDefault(); }
  else if (k === "-" || k === "_") { zoomStep(1 / 1.5); ev.preventDefault(); }
  else if (k === "Tab" && state.dice.length && (document.activeElement === document.body || state.sel >= 0)) {
    const n = state.dice.length;
    select(((state.sel < 0 ? (ev.shiftKey ? 0 : -1) : state.sel) + (ev.shiftKey ? n - 1 : 1)) % n);
    ev.preventDefault();
  }
}

// -- start --------------------------------------------------------------------------------------------
async function start() {
  $("pin").value = localStorage.getItem("kosti.pin") || "";
  if ($("pin").value) $("pin").hidden = false;
  $("pin").addEventListener("change", () => localStorage.setItem("kosti.pin", $("pin").value.trim()));
  $("lang-toggle").addEventListener("click", () => { lang = lang === "ru" ? "en" : "ru"; localStorage.setItem("kosti.lang", lang); applyLang(); });
  $("filter").addEventListener("change", renderList);
  document.querySelectorAll("button.face").forEach((b) => b.addEventListener("click", () => setFace(Number(b.dataset.face))));
  $("btn-delete").addEventListener("click", removeSelected);
  $("btn-save").addEventListener("click", saveNext);
  $("btn-skip").addEventListener("click", skip);
  $("btn-prev").addEventListener("click", prev);
  $("btn-zoom-in").addEventListener("click", () => zoomStep(1.5));
  $("btn-zoom-out").addEventListener("click", () => zoomStep(1 / 1.5));
  const svg = $("boxes");
  svg.addEventListener("pointerdown", onDown);
  svg.addEventListener("pointermove", onMove);
  svg.addEventListener("pointerup", onUp);
  svg.addEventListener("pointercancel", onUp);
  document.addEventListener("keydown", onKey);
  window.addEventListener("resize", () => { layout(); render(); });
  window.addEventListener("beforeunload", (e) => { if (state.dirty) { e.preventDefault(); e.returnValue = ""; } });
  applyLang();
  try {
    await loadList();
    if (!state.items.length) return;
    const want = decodeURIComponent(location.hash.slice(1));
    const first = state.items.find((x) => x.id === want) || state.items.find((x) => !x.reviewed) || state.items[0];
    await openImage(first.id);
  } catch (e) {
    showMessage(`${t("load_failed")}: ${e.message}`);
  }
}

start();
