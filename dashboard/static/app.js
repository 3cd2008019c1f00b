// kosti dashboard — vanilla JS, no external assets. State arrives over /ws (and /api/state as fallback).
"use strict";

const T = {
  en: {
    subtitle: "dice 1000 / Тысяча", offline: "offline", online: "live", turn: "Turn", no_game: "No game yet: start one below.",
    to_move: "To throw", turn_points: "Turn points", dice_left: "Dice to throw", last_throw: "Last throw",
    throw: "Throw (virtual table)", bank: "Stop / хватит", undo: "Undo", keep_choose: "Choose the dice to set aside:",
    keep: "Keep selected", pending_title: "Check this throw", add_die: "+ missed die", confirm: "Confirm",
    discard: "Throw again", fix_title: "Fix a die of the last throw", die: "Die", value: "Value", fix: "Fix",
    scoreboard: "Scoreboard", player: "Player", score: "Score", status: "Status", events: "What happened",
    new_game: "New game", players: "Players (comma separated)", preset: "Rules", overrides: "Overrides (JSON, optional)",
    start: "Start", history: "History", refresh: "Refresh", settings: "Settings", source: "Source",
    conf: "Detector confidence", value_conf: "Face confidence", still_s: "Settle time, s",
    calibrate: "Mark the tray: click its corners on the live view", zones_done: "Done", zones_clear: "Whole frame", save: "Save",
    opened: "opened", not_opened: "not opened", pit: "pit / яма", barrel: "barrel / бочка", bolts: "bolts / болты",
    dots: "dots / точки", falls: "falls", skips: "skips next turn", wins: "wins!", ok: "ok", uncertain: "uncertain",
    applied: "scored", pending: "waiting", corrected: "corrected", superseded: "replaced", discarded: "dropped", undone: "undone",
    ignored: "no game", "not stored": "not stored: nothing scored", force_faces: "faces?", turn_n: "Turn", bad_json: "Overrides must be JSON", saved: "Saved",
    zones_hint: "Click the tray corners on the live view, then Done.", zones_whole: "Tray: whole frame",
    zones_points: "Tray corners", aside_points: "Set-aside area", calibrate_aside: "Mark the set-aside area", game_over: "Game over", reader: "Reader", pin_needed: "Enter the PIN to control", review: "Review labels",
    rules_page: "Rules of this game", family_1000: "1000 / Farkle / 10000", other_games: "Other dice games",
  },
  ru: {
    subtitle: "кости 1000 / Тысяча", offline: "нет связи", online: "в эфире", turn: "Ход", no_game: "Игры нет: начните новую ниже.",
    to_move: "Бросает", turn_points: "Очки хода", dice_left: "Костей бросать", last_throw: "Последний бросок",
    throw: "Бросить (виртуальный стол)", bank: "Хватит / stop", undo: "Отменить", keep_choose: "Выберите кости, которые отложить:",
    keep: "Отложить выбранные", pending_title: "Проверьте бросок", add_die: "+ пропущенная кость", confirm: "Подтвердить",
    discard: "Перебросить", fix_title: "Исправить кость последнего броска", die: "Кость", value: "Значение", fix: "Исправить",
    scoreboard: "Счёт", player: "Игрок", score: "Очки", status: "Статус", events: "Что было",
    new_game: "Новая игра", players: "Игроки (через запятую)", preset: "Правила", overrides: "Изменения правил (JSON, необязательно)",
    start: "Начать", history: "История", refresh: "Обновить", settings: "Настройки", source: "Источник",
    conf: "Порог детектора", value_conf: "Порог грани", still_s: "Время успокоения, с",
    calibrate: "Отметить лоток: щёлкните по углам на видео", zones_done: "Готово", zones_clear: "Весь кадр", save: "Сохранить",
    opened: "открыт", not_opened: "не открыт", pit: "яма / pit", barrel: "бочка / barrel", bolts: "болты / bolts",
    dots: "точки / dots", falls: "падения", skips: "пропускает ход", wins: "победил!", ok: "ок", uncertain: "неуверенно",
    applied: "засчитан", pending: "ждёт", corrected: "исправлен", superseded: "заменён", discarded: "сброшен", undone: "отменён",
    ignored: "нет игры", "not stored": "не сохранён: очки не засчитаны", force_faces: "грани?", turn_n: "Ход", bad_json: "Изменения правил должны быть в JSON", saved: "Сохранено",
    zones_hint: "Щёлкните по углам лотка на видео, затем «Готово».", zones_whole: "Лоток: весь кадр",
    zones_points: "Углы лотка", aside_points: "Зона отложенных", calibrate_aside: "Отметить зону отложенных костей", game_over: "Игра окончена", reader: "Распознавание", pin_needed: "Введите PIN для управления", review: "Проверка разметки",
    rules_page: "Правила этой игры", family_1000: "1000 / Фаркл / 10000", other_games: "Другие игры в кости",
  },
};

// How a turn ended (engine event kinds), with the Russian rule terms beside the English ones.
const OUTCOMES = {
  en: { bank: "stop / хватит", bust: "bust (nothing scored)", win: "wins", instant_win: "instant win", dump_truck: "dump truck / самосвал",
        overshoot: "overshoot / перебор", dot: "dot / точка", toxic_twos: "toxic twos", capped: "barrel / бочка 850", end: "turn over" },
  ru: { bank: "хватит / stop", bust: "пусто (ноль)", win: "победа", instant_win: "мгновенная победа", dump_truck: "самосвал / dump truck",
        overshoot: "перебор / overshoot", dot: "точка / dot", toxic_twos: "токсичные двойки", capped: "бочка 850 / barrel", end: "ход окончен" },
};

let lang = localStorage.getItem("kosti.lang") || ((navigator.language || "").startsWith("ru") ? "ru" : "en");
let snap = null;          // latest snapshot
let presets = [];
let keepSel = new Set();  // indices of dice selected for Keep
let pendingFaces = null;  // editable faces of the pending throw
let zonePts = null;       // tray corners being clicked (normalised), or null
let settings = null;
let zoneWhich = "roll_area"; // which zone the clicks mark
let ws = null;

const $ = (id) => document.getElementById(id);
const t = (k) => (T[lang] && T[lang][k]) || T.en[k] || k;
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
const pick = (r) => (r ? (lang === "ru" ? r.ru || r.en : r.en) : "");

function applyLang() {
  document.documentElement.lang = lang;
  $("lang-toggle").textContent = lang === "ru" ? "EN" : "RU";
  document.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
  document.querySelectorAll("[data-i18n-ph]").forEach((el) => { el.placeholder = t(el.dataset.i18nPh); });
  if (snap) render(snap);
}

function showMessage(text, info) {
  const m = $("message");
  m.textContent = text;
  m.className = "message" + (info ? " info" : "");
  m.hidden = !text;
  clearTimeout(showMessage.timer);
  if (text) showMessage.timer = setTimeout(() => { m.hidden = true; }, info ? 2500 : 8000);
}

function errorText(body, status) {
  if (body && (body.error || body.error_ru)) return lang === "ru" ? body.error_ru || body.error : body.error;
  return `HTTP ${status}`;
}

async function api(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  const pin = $("pin").value.trim();
  if (pin) headers["X-Kosti-Pin"] = pin;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) {
    if (res.status === 403) { $("pin").hidden = false; $("pin").focus(); }
    showMessage(errorText(data, res.status));
    throw new Error(errorText(data, res.status));
  }
  return data;
}

function gid() { return snap && snap.game ? snap.game.id : null; }
async function control(action, body) {
  if (!gid()) return;
  try {
    const r = await api("POST", `/api/games/${gid()}/${action}`, body);
    if (r && r.type === "state") render(r);
  } catch (e) { /* shown */ }
}

// ------------------------------------------------------------------ rendering
function dieEl(value, cls) {
  const d = document.createElement("span");
  d.className = "die" + (cls ? " " + cls : "");
  d.dataset.value = value;
  d.textContent = value >= 1 && value <= 6 ? String(value) : "?";
  return d;
}

function statusTags(p, rules) {
  // games other than 1000 send their own marks, already in both languages
  if (p.tags) return p.tags.map((x) => `<span class="tag">${esc(pick(x))}</span>`).join(" ");
  const tags = [];
  tags.push(`<span class="tag">${p.opened ? t("opened") : t("not_opened")}</span>`);
  if (p.in_pit) tags.push(`<span class="tag pit">${t("pit")}${p.pit ? ` ${p.pit.lo}–${p.pit.hi}` : ""}</span>`);
  if (p.on_barrel) tags.push(`<span class="tag barrel">${p.barrel ? pick(p.barrel) : t("barrel")}</span>`);
  if (p.bolts) tags.push(`<span class="tag bolt">${t("bolts")} ${p.bolts}</span>`);
  if (p.dots) tags.push(`<span class="tag">${t("dots")} ${p.dots}</span>`);
  if (p.falls) tags.push(`<span class="tag">${t("falls")} ${p.falls}</span>`);
  if (p.skip_next) tags.push(`<span class="tag">${t("skips")}</span>`);
  return tags.join(" ");
}

function renderChoices(st) {
  // a game's own choices (games.md games): one button each, sent as {key, value}
  const box = $("choices");
  const list = (st && !st.over && st.allowed.choices) || [];
  box.hidden = !list.length;
  box.innerHTML = "";
  list.forEach((c, i) => {
    const b = document.createElement("button");
    b.type = "button";
    b.id = `choice-${i}`;
    b.textContent = lang === "ru" ? c.label_ru : c.label_en;
    if (c.value === null) {
      // a free value (a claim, a bet, a stake): typed as text, read by the game ("3 3 3 2 2", "Boris 3 2")
      const inp = document.createElement("input");
      inp.type = "text";
      inp.id = `choice-input-${i}`;
      inp.size = 12;
      inp.placeholder = c.key;
      b.addEventListener("click", () => { if (inp.value.trim()) control("choose", { key: c.key, value: inp.value.trim() }); });
      box.appendChild(inp);
    } else b.addEventListener("click", () => control("choose", { key: c.key, value: c.value }));
    box.appendChild(b);
  });
}

function renderBoard(st) {
  // the virtual board of Martinetti / Ohio: fields 1–12 with the players' tokens
  const el = $("board");
  const board = st && st.game_state && st.game_state.board;
  el.hidden = !board;
  if (!board) { el.innerHTML = ""; return; }
  let cells = "";
  for (let f = 1; f <= 12; f++) {
    const here = board.filter((p) => p.field === f).map((p) => esc(p.name)).join(", ");
    cells += `<td class="field${here ? " taken" : ""}"><b>${f}</b><br><span class="small">${here}</span></td>`;
  }
  el.innerHTML = `<table class="board"><tr>${cells}</tr></table>`;
}

function renderSource(src) {
  if (!src) { $("source-info").textContent = ""; return; }
  const st = src.status && typeof src.status === "object" ? src.status.state : src.status;
  const bad = st && st !== "ok" && st !== "none" ? ` · ${st}${src.status.message ? ": " + src.status.message : ""}` : "";
  const msg = src.message ? ` · ${src.message}` : "";
  $("source-info").textContent = `${src.kind}${src.spec ? " (" + src.spec + ")" : ""} · ${src.fps || 0} fps${src.motion ? " · " + src.motion : ""}${bad}${msg}`;
}

// The database cannot be written (disk full, read-only): nothing is being stored; say so on every screen.
function renderStorage(storage) {
  const el = $("storage-banner");
  const bad = storage && storage.ok === false;
  el.hidden = !bad;
  el.textContent = bad ? (lang === "ru" ? storage.error_ru || storage.error : storage.error) : "";
}

function render(s) {
  snap = s;
  renderStorage(s.storage);
  const st = s.state;
  const pinReq = !!s.pin_required || (snap && snap.pin_required);
  if (pinReq) $("pin").hidden = false;
  $("review-link").hidden = !s.review_url;
  $("no-game").hidden = !!st;
  $("turn-body").hidden = !st;
  renderSource(s.source);
  $("reader-info").textContent = s.reader ? `${t("reader")}: ${s.reader}` : "";
  // scoreboard
  const rows = $("score-rows");
  rows.innerHTML = "";
  if (st) {
    $("rules-name").textContent = `${st.rules}: ${(st.rules_summary || []).map(pick).join(" · ")}` + (s.game && s.game.rules && s.game.rules.overrides && Object.keys(s.game.rules.overrides).length ? " + " + JSON.stringify(s.game.rules.overrides) : "");
    st.players.forEach((p, i) => {
      const tr = document.createElement("tr");
      tr.id = `player-${i}`;
      tr.dataset.name = p.name;
      if (p.to_move) tr.className = "to-move";
      tr.innerHTML = `<td class="name">${p.to_move ? "▶ " : ""}${esc(p.name)}</td><td class="score">${p.score}</td><td class="status">${statusTags(p, st.rules)}</td>`;
      rows.appendChild(tr);
    });
    $("turn-player").textContent = st.to_move || "—";
    $("turn-points").textContent = st.turn.turn_points;
    const opts = st.allowed.dice_options || [];
    $("dice-left").textContent = st.turn.dice_to_throw;
    $("dice-options").textContent = opts.length > 1 ? ` (${opts.join(" / ")})` : "";
    $("hint").textContent = pick(st.allowed.hint);
    $("game-status").textContent = st.status ? pick(st.status) : "";
    renderChoices(st);
    renderBoard(st);
    const rp = $("rules-page");
    rp.hidden = !st.rules_page;
    $("rules-page-text").innerHTML = st.rules_page
      ? pick(st.rules_page).split("\n\n").map((para) => `<p>${esc(para)}</p>`).join("") : "";
    const whyNot = pick(st.allowed.why_not_bank) || "";
    // The hint often already carries the reason ("throw 4 dice (needs 40 more …)"): say it once.
    $("why-not-bank").textContent = st.allowed.bank || st.over || pick(st.allowed.hint).includes(whyNot) ? "" : whyNot;
    const w = $("winner");
    if (st.over) {
      const names = Array.isArray(st.winner) ? st.winner.join(", ") : st.winner;
      w.textContent = names ? `${names} — ${t("wins")}` : t("game_over");
      w.hidden = false;
    } else w.hidden = true;
  }
  // last throw
  const dice = $("dice");
  dice.innerHTML = "";
  const lt = s.last_throw;
  const kept = st ? st.turn.last_keep.slice() : [];
  if (lt) {
    lt.faces.forEach((f, i) => {
      let cls = lt.status === "uncertain" && (f < 1 || f > 6) ? "unsure" : "";
      const k = kept.indexOf(f);
      if (k >= 0 && lt.resolution !== "pending") { kept.splice(k, 1); cls += " kept"; }
      dice.appendChild(dieEl(f, cls.trim()));
    });
    const b = $("throw-status");
    b.textContent = `${t(lt.status)} · ${t(lt.resolution) || lt.resolution}`;
    b.className = "badge " + lt.status;
    $("fix-index").innerHTML = lt.faces.map((f, i) => `<option value="${i}">${i + 1} (${f || "?"})</option>`).join("");
    // warnings of a throw that was scored (e.g. a die found only on a second look); pending ones show below
    $("throw-notes").textContent = lt.resolution !== "pending" ? (lt.reasons || []).join("; ") : "";
  } else {
    $("throw-notes").textContent = "";
    $("throw-status").textContent = "";
    $("fix-index").innerHTML = "";
  }
  // controls
  const live = st && !st.over;
  const virtual = s.source && s.source.virtual;
  $("btn-throw").hidden = !virtual;
  $("throw-faces").hidden = !virtual;
  $("btn-throw").disabled = !live || !!s.pending;
  $("btn-bank").disabled = !live || !st.allowed.bank || !!s.pending;
  $("btn-undo").disabled = !s.game;
  // keep choice (presets where the player chooses)
  const kp = $("keep-panel");
  const pk = st && st.turn.pending_keep;
  if (live && st.allowed.keep && pk && !s.pending) {
    kp.hidden = false;
    const kd = $("keep-dice");
    kd.innerHTML = "";
    pk.forEach((f, i) => {
      const d = dieEl(f, keepSel.has(i) ? "selected" : "");
      d.dataset.index = i;
      d.addEventListener("click", () => { keepSel.has(i) ? keepSel.delete(i) : keepSel.add(i); render(snap); });
      kd.appendChild(d);
    });
  } else { kp.hidden = true; keepSel.clear(); }
  // pending (uncertain) throw
  const pd = $("pending");
  if (s.pending) {
    pd.hidden = false;
    if (!pendingFaces || pendingFaces.id !== s.pending.id) pendingFaces = { id: s.pending.id, faces: s.pending.faces.slice() };
    pendingFaces.faces = s.pending.faces.slice();
    $("pending-reasons").textContent = (s.pending.reasons || []).join("; ");
    const img = $("pending-img");
    if (s.pending.image_url) { img.src = s.pending.image_url + "?thumb=1"; img.hidden = false; } else img.hidden = true;
    const pdd = $("pending-dice");
    pdd.innerHTML = "";
    pendingFaces.faces.forEach((f, i) => {
      const d = dieEl(f, f >= 1 && f <= 6 ? "" : "unsure");
      const sel = document.createElement("select");
      sel.className = "fix";
      sel.id = `pending-die-${i}`;
      sel.innerHTML = `<option value="0">?</option>` + [1, 2, 3, 4, 5, 6].map((v) => `<option value="${v}"${v === f ? " selected" : ""}>${v}</option>`).join("");
      sel.addEventListener("change", () => control("fix", { die_index: i, value: Number(sel.value) }));
      d.textContent = "";
      d.appendChild(sel);
      pdd.appendChild(d);
    });
  } else { pd.hidden = true; pendingFaces = null; }
  // events
  const ev = $("events");
  ev.innerHTML = "";
  (s.events || []).slice().reverse().forEach((e) => {
    const li = document.createElement("li");
    li.textContent = lang === "ru" ? e.text_ru : e.text_en;
    ev.appendChild(li);
  });
  const errKey = s.error ? JSON.stringify(s.error) : "";
  if (errKey && errKey !== render.lastError) showMessage(errorText(s.error, 409));
  render.lastError = errKey;
}

// ------------------------------------------------------------------ history
async function loadHistory() {
  if (!gid()) { $("history-list").innerHTML = ""; return; }
  let h;
  try { h = await api("GET", `/api/games/${gid()}/history`); } catch (e) { return; }
  const byTurn = new Map();
  h.turns.forEach((tu) => byTurn.set(tu.turn_no, { turn: tu, throws: [] }));
  h.throws.forEach((th) => { const k = th.turn_no; if (!byTurn.has(k)) byTurn.set(k, { turn: { turn_no: k, player: th.player }, throws: [] }); byTurn.get(k).throws.push(th); });
  const out = [];
  [...byTurn.values()].sort((a, b) => b.turn.turn_no - a.turn.turn_no).forEach(({ turn, throws }) => {
    const res = turn.outcome ? ` — ${esc(OUTCOMES[lang][turn.outcome] || turn.outcome)}: ${turn.score_before ?? "?"} → ${turn.score_after ?? "?"}` : "";
    const ths = throws.map((th) => {
      const img = th.image_url ? `<img src="${th.image_url}?thumb=1" alt="" loading="lazy">` : "";
      const cls = th.resolution === "undone" || th.resolution === "superseded" || th.resolution === "discarded" ? "undone" : "";
      return `<div class="${cls}">${img}${th.faces.map((f) => f || "?").join(" ")} <span class="badge ${th.status}">${t(th.status)} · ${t(th.resolution) || th.resolution}</span></div>`;
    }).join("");
    out.push(`<div class="turn-h"><b>${t("turn_n")} ${turn.turn_no}</b> ${esc(turn.player || "")}${res}${ths}</div>`);
  });
  $("history-list").innerHTML = out.join("");
}

// ------------------------------------------------------------------ settings and zones
async function loadSettings() {
  try { settings = await api("GET", "/api/settings"); } catch (e) { return; }
  $("set-source").value = settings.source || "";
  const th = settings.thresholds || {};
  $("set-conf").value = th.conf ?? "";
  $("set-value-conf").value = th.value_conf ?? "";
  $("set-still").value = th.still_s ?? "";
  drawZones(settings.zones && settings.zones.roll_area, settings.zones && settings.zones.set_aside);
}

function drawZones(poly, aside) {
  const svg = $("zone-overlay");
  const shape = (pl, color) => pl && pl.length >= 2
    ? `<polygon points="${pl.map((p) => `${p[0]},${p[1]}`).join(" ")}" fill="${color}22" stroke="${color}" stroke-width="0.004"/>` : "";
  const roll = zonePts && zoneWhich === "roll_area" ? zonePts : poly;
  const set = zonePts && zoneWhich === "set_aside" ? zonePts : aside;
  svg.innerHTML = shape(roll, "#ffc800") + shape(set, "#40a0ff");
  const fmt = (pl) => pl.map((p) => `(${p[0].toFixed(2)}, ${p[1].toFixed(2)})`).join(" ");
  if (zonePts) $("zones-info").textContent = t("zones_hint");
  else if (!poly || poly.length < 3) $("zones-info").textContent = t("zones_whole");
  else $("zones-info").textContent = `${t("zones_points")}: ${fmt(poly)}` + (aside && aside.length >= 3 ? ` · ${t("aside_points")}: ${fmt(aside)}` : "");
}

async function saveSettings(extra) {
  const body = { thresholds: {} };
  const num = (id) => { const v = $(id).value; return v === "" ? null : Number(v); };
  if (num("set-conf") !== null) body.thresholds.conf = num("set-conf");
  if (num("set-value-conf") !== null) body.thresholds.value_conf = num("set-value-conf");
  if (num("set-still") !== null) body.thresholds.still_s = num("set-still");
  const src = $("set-source").value.trim();
  if (src && (!settings || src !== settings.source)) body.source = src;
  Object.assign(body, extra || {});
  try { settings = await api("PUT", "/api/settings", body); showMessage(t("saved"), true); drawZones(settings.zones && settings.zones.roll_area, settings.zones && settings.zones.set_aside); } catch (e) { /* shown */ }
}

// ------------------------------------------------------------------ wiring
function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  ws = new WebSocket(`${proto}://${location.host}/ws`);
  ws.onopen = () => { $("conn").className = "conn on"; $("conn").dataset.i18n = "online"; $("conn").textContent = t("online"); };
  ws.onclose = () => { $("conn").className = "conn off"; $("conn").dataset.i18n = "offline"; $("conn").textContent = t("offline"); setTimeout(connect, 1500); };
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.type === "state") {
      const prevTurn = snap && snap.turn_no;
      render(msg);
      if (prevTurn !== msg.turn_no) loadHistory();
    } else if (msg.type === "source") renderSource(msg.source);
    else if (msg.type === "error") showMessage(errorText(msg, msg.status));
  };
}

async function loadPresets() {
  try { presets = (await api("GET", "/api/presets")).presets; } catch (e) { return; }
  const opt = (p) => `<option value="${esc(p.name)}">${esc(p.name)} (${p.dice} × d6${p.target ? " → " + p.target : ""})</option>`;
  const fam = presets.filter((p) => !p.game || p.game === "1000");
  const other = presets.filter((p) => p.game && p.game !== "1000");
  $("ng-preset").innerHTML = `<optgroup label="${esc(t("family_1000"))}">${fam.map(opt).join("")}</optgroup>`
    + (other.length ? `<optgroup label="${esc(t("other_games"))}">${other.map(opt).join("")}</optgroup>` : "");
  const desc = () => {
    const p = presets.find((x) => x.name === $("ng-preset").value);
    $("ng-preset-desc").textContent = p ? (lang === "ru" && p.description_ru ? p.description_ru : p.description) : "";
  };
  $("ng-preset").addEventListener("change", desc);
  desc();
}

function init() {
  $("lang-toggle").addEventListener("click", () => { lang = lang === "ru" ? "en" : "ru"; localStorage.setItem("kosti.lang", lang); applyLang(); loadHistory(); });
  $("pin").value = localStorage.getItem("kosti.pin") || "";
  $("pin").addEventListener("change", () => localStorage.setItem("kosti.pin", $("pin").value.trim()));
  $("btn-throw").addEventListener("click", () => {
    const raw = $("throw-faces").value.trim();
    const faces = raw ? raw.split(/[\s,]+/).map(Number) : null;
    control("throw", faces ? { faces } : undefined);
  });
  $("btn-bank").addEventListener("click", () => control("bank"));
  $("btn-undo").addEventListener("click", () => control("undo"));
  $("btn-keep").addEventListener("click", () => {
    const pk = snap.state.turn.pending_keep || [];
    control("keep", { faces: [...keepSel].sort().map((i) => pk[i]) });
    keepSel.clear();
  });
  $("btn-confirm").addEventListener("click", () => control("confirm", { faces: pendingFaces.faces }));
  $("btn-discard").addEventListener("click", () => control("discard"));
  $("btn-add-die").addEventListener("click", () => { if (pendingFaces) control("fix", { die_index: pendingFaces.faces.length, value: 1 }); });
  $("btn-fix").addEventListener("click", () => control("fix", { die_index: Number($("fix-index").value), value: Number($("fix-value").value) }));
  $("btn-history").addEventListener("click", loadHistory);
  $("new-game-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const players = $("ng-players").value.split(",").map((x) => x.trim()).filter(Boolean);
    let overrides = null;
    const raw = $("ng-overrides").value.trim();
    if (raw) { try { overrides = JSON.parse(raw); } catch (err) { showMessage(t("bad_json")); return; } }
    try {
      const r = await api("POST", "/api/games", { players, preset: $("ng-preset").value, overrides });
      render(r);
      loadHistory();
    } catch (err) { /* shown */ }
  });
  $("btn-save-settings").addEventListener("click", () => saveSettings());
  const startZone = (which) => {
    zoneWhich = which;
    zonePts = [];
    $("live-section").classList.add("calibrating");
    $("btn-zones-done").hidden = false;
    drawZones(settings && settings.zones && settings.zones.roll_area, settings && settings.zones && settings.zones.set_aside);
  };
  $("btn-zones").addEventListener("click", () => startZone("roll_area"));
  $("btn-zones-aside").addEventListener("click", () => startZone("set_aside"));
  $("btn-zones-done").addEventListener("click", () => {
    $("live-section").classList.remove("calibrating");
    $("btn-zones-done").hidden = true;
    const pts = zonePts;
    zonePts = null;
    const cur = (settings && settings.zones) || { roll_area: [[0, 0], [1, 0], [1, 1], [0, 1]], set_aside: null };
    if (pts && pts.length >= 3) saveSettings({ zones: { ...cur, [zoneWhich]: pts } });
    else drawZones(cur.roll_area, cur.set_aside);
  });
  $("btn-zones-clear").addEventListener("click", () => saveSettings({ zones: { roll_area: [[0, 0], [1, 0], [1, 1], [0, 1]], set_aside: null } }));
  $("live").addEventListener("click", (e) => {
    if (!zonePts) return;
    const r = e.target.getBoundingClientRect();
    const x = Math.min(1, Math.max(0, (e.clientX - r.left) / r.width));
    const y = Math.min(1, Math.max(0, (e.clientY - r.top) / r.height));
    zonePts.push([Number(x.toFixed(4)), Number(y.toFixed(4))]);
    drawZones(settings && settings.zones && settings.zones.roll_area, settings && settings.zones && settings.zones.set_aside);
  });
  applyLang();
  loadPresets();
  loadSettings();
  fetch("/api/state").then((r) => r.json()).then((s) => { render(s); loadHistory(); }).catch(() => {});
  connect();
}

document.addEventListener("DOMContentLoaded", init);
