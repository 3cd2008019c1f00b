// kosti dashboard — vanilla JS, no external assets. State arrives over /ws (and /api/state as fallback).
// One page, three views: the table (default), the spectator view (/tv: big scores only) and the same page
// on a phone (scoreboard and turn first, the live view folded away).
"use strict";

const T = {
  en: {
    subtitle: "dice 1000 / Тысяча", offline: "offline", online: "connected", connecting: "connecting…", loading: "Loading the table…", turn: "Turn", no_game: "No game yet: start one below.",
    to_move: "To throw", turn_points: "Turn points", dice_left: "Dice to throw", last_throw: "Last throw",
    throw: "Throw (virtual table)", bank: "Stop / хватит", undo: "Undo", keep_choose: "Tap the scoring dice to set aside:",
    keep: "Keep selected", pending_title: "Check this throw", add_die: "+ missed die", confirm: "Confirm",
    discard: "Throw again", remove_die: "remove this die (not thrown)",
    fix_title: "Fix a die of the last throw", die: "Die", value: "Value", fix: "Fix",
    scoreboard: "Scoreboard", player: "Player", score: "Score", events: "What happened",
    new_game: "New game", players: "Players (comma separated)", preset: "Rules", overrides: "Rule changes (JSON, optional)",
    start: "Start", history: "History", refresh: "Refresh", settings: "Settings", source: "Source",
    conf: "Detector confidence", value_conf: "Face confidence", still_s: "Settle time, s",
    record: "Keep each throw as a short clip, to check this table later", record_mb: "Size cap of the clips, MB",
    record_hint: "The oldest clips go first. Score them with kosti watch --truth on the clips folder.",
    turn_hint: "The dice look larger towards the top or a side of the picture: the camera seems turned, and dice seen at an angle are then read by a side face. Turn the picture so that the far side of the table is at the top.",
    turn_later: "Not now",
    turn_do: (deg) => `Set “Turn the picture” to ${deg}°`,
    rotate: "Turn the picture (clockwise)", rotate_hint: "For a camera mounted sideways or upside down: turn the picture until the far side of the table is at the top; the marked tray turns with it.",
    rotate_fixed: "The virtual table's picture is never turned.",
    calibrate: "Mark the tray: click its corners on the live view", zones_done: "Done", zones_clear: "Whole frame", save: "Save",
    opened: "opened", not_opened: "not opened", pit: "pit / яма", barrel: "on the barrel / на бочке", bolts: "bolts / болты",
    dots: "dots / точки", falls: "falls / падения", skips: "skips the next turn", wins: "wins!", ok: "read", uncertain: "check",
    applied: "scored", pending: "waiting", corrected: "corrected", superseded: "replaced", discarded: "dropped", undone: "undone",
    rejected: "refused", ignored: "no game", scored: "scored", bust: "bust: nothing scored", farkle: "Farkle: nothing scored",
    force_faces: "faces?", force_faces_label: "Faces for the virtual throw (optional):", turn_n: "Turn", bad_json: "Rule changes must be JSON, e.g. {\"opening\": {\"threshold\": 75}}", saved: "Saved", bad_faces: "Type the faces as digits 1–6, e.g. 11535 or 1 1 5 3 5",
    zones_hint: "Click the tray corners on the live view, then Done.", zones_whole: "Tray: whole frame",
    zones_points: "Tray corners", aside_points: "Set-aside area", calibrate_aside: "Mark the set-aside area", game_over: "Game over",
    reader: "Reader", pin_needed: "Enter the PIN to control", review: "Review labels", teach: "Teach my dice", tv: "TV", tv_long: "Spectator view (TV)",
    games: "Games", sheet: "Score sheet", round: "Round", live_view: "Live view", entry_title: "Enter the throw by hand",
    entry_help: "Tap the faces of the dice thrown (or type them: 11535).", entry_ph: "e.g. 11535", enter: "Score this throw",
    backspace: "remove the last die", cancel: "Cancel", replace_ok: "Put it aside and start", replace_resume: (id) => `Put it aside and resume game ${id}`, close: "Close",
    rematch: "Rematch: same players", resume: "Resume", standings: "Final standings", playing: "on the table",
    status_active: "being played", status_finished: "finished", status_abandoned: "put aside",
    join: "Join from a phone", join_scan: "Scan the code to watch the game on your phone", join_control: "Code with the PIN (for players)",
    join_control_hint: "This code holds the PIN: show it only to the players", join_local: "Only this machine can open the page: start kosti with --host 0.0.0.0 so that phones can join",
    download: "Download", dl_csv: "score sheet (CSV)", dl_json: "record (JSON, kosti replay)", dl_zip: "with photos (zip)",
    miss: "no points", setup_throw: "order throw (not a turn)", setup_turn: "Order throws (not a turn)",
    stop_now: "If you stop now", nothing_recorded: "nothing is recorded", points_short: "pts",
    cam_ok: "camera", cam_down: "camera down", cam_none: "no camera", cam_virtual: "virtual table",
    pending_hint: "Check the throw below: set each die, remove dice that were not thrown, add missed ones, then Confirm.",
    count_wrong: (n, want) => `${count(n, "die")} here, ${want} thrown: remove or add dice.`,
    no_games: "No stored games yet.",
    keep_total: (pts) => `Set aside: ${pts} points`, keep_invalid: "This choice is not a legal set-aside.",
    of: "of", entered: "entered by hand", turn_lost: (n) => `turn points lost: ${n}`, replace_q: (t) => t,
    motion: { moving: "moving", settled: "settled", still: "still", idle: "idle", "no reader": "no reader" },
    banner: { bust: "Bust! / Пусто", farkle: "Farkle! / Фаркл", three_farkles: "Three busts / Три пустых", toxic_twos: "Toxic twos",
      dump_truck: "Dump truck! / Самосвал!", bolt: "Bolt / Болт", bolt_penalty: "Bolts penalty / Штраф за болты",
      pit: "Pit / Яма", barrel: "Barrel / Бочка", fall: "Off the barrel / Падение с бочки", knocked_off: "Knocked off the barrel / Сбит с бочки",
      overtaken: "Overtaking / Обгон", capped: "Barrel / Бочка", overshoot: "Overshoot / Перебор", dot: "Dot / Точка",
      win: "Winner! / Победа!", instant_win: "Instant win! / Мгновенная победа!", skip_turn: "Skips a turn / Пропуск хода" },
    "not stored": "not stored: nothing scored", rules_page: "Rules of this game", house_changes: "changed", family_1000: "1000 / Farkle / 10000", other_games: "Other dice games",
  },
  ru: {
    subtitle: "кости 1000 / Тысяча", offline: "нет связи", online: "на связи", connecting: "подключение…", loading: "Загрузка стола…", turn: "Ход", no_game: "Игры нет: начните новую ниже.",
    to_move: "Бросает", turn_points: "Очки хода", dice_left: "Костей бросать", last_throw: "Последний бросок",
    throw: "Бросить (виртуальный стол)", bank: "Хватит / stop", undo: "Отменить", keep_choose: "Нажмите на очковые кости, которые отложить:",
    keep: "Отложить выбранные", pending_title: "Проверьте бросок", add_die: "+ пропущенная кость", confirm: "Подтвердить",
    discard: "Перебросить", remove_die: "убрать эту кость (её не бросали)",
    fix_title: "Исправить кость последнего броска", die: "Кость", value: "Значение", fix: "Исправить",
    scoreboard: "Счёт", player: "Игрок", score: "Очки", events: "Что было",
    new_game: "Новая игра", players: "Игроки (через запятую)", preset: "Правила", overrides: "Изменения правил (JSON, необязательно)",
    start: "Начать", history: "История", refresh: "Обновить", settings: "Настройки", source: "Источник",
    conf: "Порог детектора", value_conf: "Порог грани", still_s: "Время успокоения, с",
    record: "Сохранять каждый бросок коротким роликом, чтобы потом проверить этот стол", record_mb: "Предел размера роликов, МБ",
    record_hint: "Самые старые ролики удаляются первыми. Проверить стол по ним: kosti watch --truth с папкой роликов.",
    turn_hint: "Кости выглядят крупнее у верхнего или бокового края изображения: камера, похоже, повёрнута, и кости, снятые под углом, читаются по боковой грани. Поверните изображение так, чтобы дальний край стола оказался сверху.",
    turn_later: "Не сейчас",
    turn_do: (deg) => `Установить «Повернуть изображение» на ${deg}°`,
    rotate: "Повернуть изображение (по часовой стрелке)", rotate_hint: "Если камера закреплена боком или вверх ногами, поверните изображение так, чтобы дальний край стола оказался сверху; отмеченный лоток повернётся вместе с ним.",
    rotate_fixed: "Изображение виртуального стола не поворачивается.",
    calibrate: "Отметить лоток: щёлкните по углам на видео", zones_done: "Готово", zones_clear: "Весь кадр", save: "Сохранить",
    opened: "открыт", not_opened: "не открыт", pit: "яма / pit", barrel: "на бочке / on the barrel", bolts: "болты / bolts",
    dots: "точки / dots", falls: "падения / falls", skips: "пропускает следующий ход", wins: "победа!", ok: "прочитан", uncertain: "проверить",
    applied: "засчитан", pending: "ждёт", corrected: "исправлен", superseded: "заменён", discarded: "сброшен", undone: "отменён",
    rejected: "отклонён", ignored: "нет игры", scored: "засчитан", bust: "пусто: ничего не записано", farkle: "фаркл: ничего не записано",
    force_faces: "грани?", force_faces_label: "Грани виртуального броска (необязательно):", turn_n: "Ход", bad_json: "Изменения правил нужно записать в JSON, например {\"opening\": {\"threshold\": 75}}", saved: "Сохранено", bad_faces: "Введите грани цифрами от 1 до 6, например 11535 или 1 1 5 3 5",
    zones_hint: "Щёлкните по углам лотка на видео, затем «Готово».", zones_whole: "Лоток: весь кадр",
    zones_points: "Углы лотка", aside_points: "Зона отложенных", calibrate_aside: "Отметить зону отложенных костей", game_over: "Игра окончена",
    reader: "Распознавание", pin_needed: "Введите PIN для управления", review: "Проверка разметки", teach: "Научить мои кости", tv: "ТВ", tv_long: "Для зрителей (ТВ)",
    games: "Игры", sheet: "Записка", round: "Круг", live_view: "Видео со стола", entry_title: "Ввести бросок вручную",
    entry_help: "Нажмите грани брошенных костей (или наберите их: 11535).", entry_ph: "напр. 11535", enter: "Записать бросок",
    backspace: "убрать последнюю кость", cancel: "Отмена", replace_ok: "Отложить её и начать", replace_resume: (id) => `Отложить её и продолжить игру ${id}`, close: "Закрыть",
    rematch: "Реванш: те же игроки", resume: "Продолжить", standings: "Итоги игры", playing: "на столе",
    status_active: "идёт", status_finished: "окончена", status_abandoned: "отложена",
    join: "Подключиться с телефона", join_scan: "Наведите камеру телефона на код, чтобы следить за игрой", join_control: "Код с PIN (для игроков)",
    join_control_hint: "В этом коде PIN: показывайте его только игрокам", join_local: "Страницу можно открыть только на этой машине: запустите kosti с --host 0.0.0.0, чтобы подключались телефоны",
    download: "Скачать", dl_csv: "записку (CSV)", dl_json: "запись (JSON, kosti replay)", dl_zip: "со снимками (zip)",
    miss: "без очков", setup_throw: "бросок за очерёдность (не ход)", setup_turn: "Броски за очерёдность (не ход)",
    stop_now: "Если сказать «хватит» сейчас", nothing_recorded: "ничего не запишется", points_short: "оч.",
    cam_ok: "камера", cam_down: "камера не работает", cam_none: "без камеры", cam_virtual: "виртуальный стол",
    pending_hint: "Проверьте бросок ниже: укажите каждую кость, уберите лишние, добавьте пропущенные, затем «Подтвердить».",
    count_wrong: (n, want) => `Здесь ${count(n, "die")}, а бросали ${want}: уберите или добавьте кости.`,
    no_games: "Сохранённых игр пока нет.",
    keep_total: (pts) => `Отложено: ${pts} очков`, keep_invalid: "Так отложить нельзя.",
    of: "из", entered: "введён вручную", turn_lost: (n) => `очки хода сгорели: ${n}`, replace_q: (t) => t,
    motion: { moving: "кости катятся", settled: "кости лежат", still: "неподвижно", idle: "ожидание", "no reader": "нет распознавания" },
    banner: { bust: "Пусто! / Bust", farkle: "Фаркл! / Farkle", three_farkles: "Три пустых / Three busts", toxic_twos: "Ядовитые двойки / Toxic twos",
      dump_truck: "Самосвал! / Dump truck", bolt: "Болт / Bolt", bolt_penalty: "Штраф за болты / Bolts penalty",
      pit: "Яма / Pit", barrel: "Бочка / Barrel", fall: "Падение с бочки / Off the barrel", knocked_off: "Сбит с бочки / Knocked off",
      overtaken: "Обгон / Overtaking", capped: "Бочка / Barrel", overshoot: "Перебор / Overshoot", dot: "Точка / Dot",
      win: "Победа! / Winner", instant_win: "Мгновенная победа! / Instant win", skip_turn: "Пропуск хода / Skips a turn" },
    "not stored": "не сохранён: очки не засчитаны", rules_page: "Правила этой игры", house_changes: "изменено", family_1000: "1000 / Фаркл / 10000", other_games: "Другие игры в кости",
  },
};

// How a turn ended (engine event kinds), with the Russian rule terms beside the English ones.
const OUTCOMES = {
  en: { bank: "stop / хватит", bust: "bust / пусто", farkle: "Farkle / фаркл", win: "wins", instant_win: "instant win", dump_truck: "dump truck / самосвал",
        overshoot: "overshoot / перебор", dot: "dot / точка", toxic_twos: "toxic twos", capped: "barrel / бочка", end: "turn over" },
  ru: { bank: "хватит / stop", bust: "пусто / bust", farkle: "фаркл / Farkle", win: "победа", instant_win: "мгновенная победа", dump_truck: "самосвал / dump truck",
        overshoot: "перебор / overshoot", dot: "точка / dot", toxic_twos: "ядовитые двойки", capped: "бочка / barrel", end: "ход окончен" },
};

// The table's one word for a zero throw (engine/texts.py bust_word): "bust" / «пусто» in 1000, "Farkle" / «фаркл» in
// the six-dice games (Farkle, 10000) — the same word as the engine's sentences and kosti score.
function bustWord(k) {
  const st = snap && snap.state;
  return k === "bust" && st && st.game === "1000" && st.dice_count === 6 ? "farkle" : k;
}

// Counting words: the same nouns and CLDR plural rules as kosti.engine.plurals (a browser test compares them).
const NOUNS = {
  die: [["die", "dice"], ["кость", "кости", "костей"]], game: [["game", "games"], ["игра", "игры", "игр"]],
  turn: [["turn", "turns"], ["ход", "хода", "ходов"]], throw: [["throw", "throws"], ["бросок", "броска", "бросков"]],
  point: [["point", "points"], ["очко", "очка", "очков"]], player: [["player", "players"], ["игрок", "игрока", "игроков"]],
};
const PLURAL_RULES = { en: new Intl.PluralRules("en-US"), ru: new Intl.PluralRules("ru-RU") };
// "1 die", "2 dice", "5 костей"; lng: "en" or "ru" (default: the page's language)
function noun(n, key, lng) {
  const l = lng || lang;
  const [en, ru] = NOUNS[key];
  const cat = PLURAL_RULES[l === "ru" ? "ru" : "en"].select(Math.abs(n));
  if (l === "ru") return cat === "one" ? ru[0] : cat === "few" ? ru[1] : ru[2];
  return cat === "one" ? en[0] : en[1];
}
function count(n, key, lng) { return `${n} ${noun(n, key, lng)}`; }

const TV = location.pathname.replace(/\/$/, "") === "/tv" || new URLSearchParams(location.search).get("view") === "tv";
let lang = localStorage.getItem("kosti.lang") || ((navigator.language || "").startsWith("ru") ? "ru" : "en");
let snap = null;          // latest snapshot
let presets = [];
let keepSel = new Set();  // indices of dice selected for Keep
let entry = [];           // faces typed in the manual entry keypad
let zonePts = null;       // tray corners being clicked (normalised), or null
let settings = null;
let zoneWhich = "roll_area"; // which zone the clicks mark
let ws = null;
let lastBanner = null;    // id of the banner already shown
let bannerTimer = null;
let wakeLock = null;
let gamesCache = [];

const $ = (id) => document.getElementById(id);
window.kostiLang = () => lang;  // advisor.js speaks the page's language
window.kostiCount = count;
const t = (k) => { const v = (T[lang] && T[lang][k]) ?? T.en[k]; return v === undefined ? k : v; };
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
const pick = (r) => (r ? (lang === "ru" ? r.ru || r.en : r.en) : "");
const evText = (e) => (lang === "ru" ? e.text_ru || e.text_en : e.text_en);

// "English / Русский" (the vision layer's reasons) → the player's language.
function bilingual(s) {
  const text = String(s);
  const i = text.search(/ \/ (?=[^/]*[а-яёА-ЯЁ])/);
  if (i < 0) return text;
  return lang === "ru" ? text.slice(i + 3) : text.slice(0, i);
}

// Reasons per die ("die 2 is unreadable …", "die 4 is unreadable …") said once: "unreadable … — dice 2, 4".
function groupReasons(reasons) {
  const groups = new Map();
  const order = [];
  (reasons || []).map(bilingual).forEach((r) => {
    const m = r.match(/^(die|кость) (\d+) (.*)$/);
    const key = m ? m[3].replace(/^is /, "").replace(/\s*\(\d+(\.\d+)?\)/, "") : r;
    if (!groups.has(key)) { groups.set(key, []); order.push(key); }
    if (m) groups.get(key).push(m[2]);
  });
  return order.map((k) => {
    const dice = [...new Set(groups.get(k))];
    if (!dice.length) return k;
    const word = lang === "ru" ? (dice.length > 1 ? "кости" : "кость") : (dice.length > 1 ? "dice" : "die");
    return `${k} — ${word} ${dice.join(", ")}`;
  });
}

function applyLang() {
  document.documentElement.lang = lang;
  $("lang-toggle").textContent = lang === "ru" ? "EN" : "RU";
  document.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
  document.querySelectorAll("[data-i18n-ph]").forEach((el) => { el.placeholder = t(el.dataset.i18nPh); });
  document.querySelectorAll("[data-i18n-title]").forEach((el) => { el.title = t(el.dataset.i18nTitle); });
  if (presets.length) renderPresetMenu();
  renderPresetDesc();
  if (snap) render(snap);
  renderGames();
  renderJoin();
  if (settings) drawZones(settings.zones && settings.zones.roll_area, settings.zones && settings.zones.set_aside);
  if (!$("banner").hidden && fillBanner.shown) fillBanner(fillBanner.shown);
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
  return lang === "ru" ? `ошибка сервера (${status})` : `server error (${status})`;
}

class ApiError extends Error {
  constructor(body, status) { super(errorText(body, status)); this.body = body || {}; this.status = status; }
}

async function api(method, path, body, quiet) {
  // the spectator view only shows the game: it sends no control (the server refuses one from /tv too)
  if (TV && method !== "GET") throw new ApiError({ error: "the spectator view (/tv) only shows the game", error_ru: "экран для зрителей (/tv) только показывает игру", status: 403 }, 403);
  const headers = { "Content-Type": "application/json" };
  const pin = $("pin").value.trim();
  if (pin) headers["X-Kosti-Pin"] = pin;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) {
    if (res.status === 403) { $("pin").hidden = false; $("pin").focus(); }
    const err = new ApiError(data, res.status);
    if (!quiet) showMessage(err.message);
    throw err;
  }
  return data;
}

function gid() { return snap && snap.game ? snap.game.id : null; }
async function control(action, body) {
  if (!gid()) return null;
  try {
    const r = await api("POST", `/api/games/${gid()}/${action}`, body);
    if (r && r.type === "state") render(r);
    return r;
  } catch (e) { return null; /* shown */ }
}

// Ask before a running game is put aside (issue 18 #1): the server refuses with code replace_needed.
async function withReplace(method, path, body, okLabel) {
  try {
    return await api(method, path, body, true);
  } catch (e) {
    if (!(e instanceof ApiError) || e.body.code !== "replace_needed") { showMessage(e.message); return null; }
    $("confirm-text").textContent = e.message;
    $("confirm-ok").textContent = okLabel || t("replace_ok");  // "Put it aside and resume game 3" for a resume
    const dlg = $("confirm-dialog");
    dlg.returnValue = "";
    dlg.showModal();
    const answer = await new Promise((resolve) => dlg.addEventListener("close", () => resolve(dlg.returnValue), { once: true }));
    if (answer !== "ok") return null;
    try { return await api(method, path, { ...(body || {}), replace: true }); } catch (e2) { return null; }
  }
}

// ------------------------------------------------------------------ rendering
function dieEl(value, cls) {
  const d = document.createElement("span");
  d.className = "die" + (cls ? " " + cls : "");
  d.dataset.value = value;
  d.textContent = value >= 1 && value <= 6 ? String(value) : "?";
  return d;
}

function statusTags(p, st) {
  // games other than 1000 send their own marks, already in both languages
  if (p.tags) return p.tags.map((x) => `<span class="tag">${esc(pick(x))}</span>`).join(" ");
  // a finished game has no pit, barrel, opening or skipped turn to wait for: the final standings speak
  if (st.over) return "";
  const tags = [];
  const r = (st.rules_params || {});
  if (!p.opened) tags.push(`<span class="tag">${t("not_opened")}</span>`);
  if (p.in_pit) tags.push(`<span class="tag pit">${t("pit")}${p.pit ? ` ${p.pit.lo}–${p.pit.hi}` : ""}</span>`);
  if (p.on_barrel && p.barrel) tags.push(`<span class="tag barrel">${esc(pick(p.barrel))}</span>`);  // the sitter's need
  else if (p.on_barrel) {
    const of = r.barrel_attempts ? ` ${p.barrel_attempts} ${t("of")} ${r.barrel_attempts}` : "";
    tags.push(`<span class="tag barrel">${t("barrel")}${of}</span>`);
  }
  if (p.bolts) tags.push(`<span class="tag bolt">${t("bolts")} ${p.bolts}${r.bolt_limit ? ` ${t("of")} ${r.bolt_limit}` : ""}</span>`);
  if (p.dots) tags.push(`<span class="tag">${t("dots")} ${p.dots}</span>`);
  if (p.falls) tags.push(`<span class="tag">${t("falls")} ${p.falls}${r.fall_limit ? ` ${t("of")} ${r.fall_limit}` : ""}</span>`);
  if (p.skip_next) tags.push(`<span class="tag">${t("skips")}</span>`);
  return tags.join("");
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
      // an example of the value, in no language: the button beside it says what it is
      inp.placeholder = { keep: "5 5 5", claim: "3 3 3 2 2", bet: `${(st.players[1] || st.players[0]).name} 3 2`, stake: "2" }[c.key] || "";
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
  if (!src) return;
  const motion = src.motion ? ` · ${(t("motion") || {})[src.motion] || src.motion}` : "";
  $("source-info").textContent = `${t("source")}: ${src.spec || src.kind}${src.fps ? ` · ${src.fps} fps` : ""}${motion}${src.message ? ` · ${src.message}` : ""}`;
  const cam = $("cam");
  cam.hidden = false;
  const st = typeof src.status === "object" && src.status ? (src.status.state || src.status.status || "ok") : src.status;
  const down = st === "error" || st === "down" || st === "reconnecting" || st === "failed" || !!src.message;
  let key = "cam_ok";
  if (src.kind === "none") key = "cam_none";
  else if (down) key = "cam_down";
  else if (src.virtual) key = "cam_virtual";
  cam.textContent = t(key);
  // why there is no picture, in words, and when kosti tries again (the server's sentence, EN + RU)
  const why = key === "cam_down" && src.why ? (lang === "ru" ? src.why_ru || src.why : src.why) : "";
  cam.title = why;
  $("cam-why").textContent = why;
  $("cam-why").hidden = !why;
  cam.className = "conn " + (key === "cam_down" ? "off" : key === "cam_none" ? "mut" : "on");
  cam.dataset.state = key;
  const turn = !TV && src.turn_hint !== null && src.turn_hint !== undefined
    && sessionStorage.getItem("kosti.turnLater") !== String(src.turn_hint);  // "Not now" hides this turn
  $("turn-banner").hidden = !turn;
  if (turn) {
    $("turn-text").textContent = t("turn_hint");
    $("btn-turn").textContent = t("turn_do")(src.turn_hint);
    $("btn-turn").dataset.turn = String(src.turn_hint);
    $("btn-turn-later").textContent = t("turn_later");
  }
  // the camera cannot score this throw: open the hand entry
  if ((key === "cam_down" || key === "cam_none") && snap && snap.state && !snap.state.over && !TV) $("entry-panel").open = true;
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
  const live = st && !st.over;
  $("loading").hidden = true;  // the first state is in: no neutral "loading" any more (issue 42 #12)
  $("no-game").hidden = !!st;
  $("turn-body").hidden = !live;
  renderSource(s.source);
  $("reader-info").textContent = s.reader ? `${t("reader")}: ${s.reader}` : "";
  $("review-link").hidden = !s.review_url;
  $("teach-link").hidden = !s.review_url;  // /teach is served with /review (the same capture folder)
  if (s.pin_required) $("pin").hidden = false;
  const sub = document.querySelector("h1 .sub");
  if (sub) sub.textContent = st && st.title ? pick(st.title) : t("subtitle");
  if (!TV) document.title = st && st.title ? `kosti — ${pick(st.title)}` : "kosti — 1000 / Тысяча";
  renderScores(s);
  renderStandings(s);
  if (st) {
    $("turn-player").textContent = st.to_move || "—";
    $("turn-points").textContent = st.turn.turn_points;
    $("turn-points").parentElement.hidden = st.has_turn_points === false;  // Chicago, Craps … have no turn points
    // the score column says what it counts: points, dice held (Aces), rounds won (Craps) …
    const unit = st.score_unit ? pick(st.score_unit) : "";
    document.querySelector('#scoreboard th[data-i18n="score"]').textContent = unit ? unit.charAt(0).toUpperCase() + unit.slice(1) : t("score");
    const opts = st.allowed.dice_options || [];
    $("dice-left").textContent = st.turn.dice_to_throw;
    $("dice-options").textContent = opts.length > 1 ? ` (${opts.join(" / ")})` : "";
    $("game-status").textContent = st.status ? pick(st.status) : "";
    renderChoices(st);
    renderBoard(st);
    const rp = $("rules-page");
    rp.hidden = !st.rules_page;
    $("rules-page-text").innerHTML = st.rules_page
      ? pick(st.rules_page).split("\n\n").map((para) => `<p>${esc(para)}</p>`).join("") : "";
    if (s.pending) {
      $("hint").textContent = t("pending_hint");
      $("why-not-bank").textContent = "";
    } else {
      $("hint").textContent = pick(st.allowed.hint);
      const whyNot = pick(st.allowed.why_not_bank) || "";
      // before the first throw "nothing to record yet" is obvious: the reason shows once there is something to lose
      $("why-not-bank").textContent = st.allowed.bank || st.over || !st.turn.throws || pick(st.allowed.hint).includes(whyNot) ? "" : whyNot;
    }
    renderPreview(s);
  }
  renderLastThrow(s);
  // controls
  const virtual = s.source && s.source.virtual;
  $("btn-throw").hidden = !virtual;
  $("throw-faces").hidden = !virtual;
  $("throw-faces-label").hidden = !virtual;
  $("btn-throw").disabled = !live || !!s.pending;
  $("btn-bank").disabled = !live || !st.allowed.bank || !!s.pending;
  $("btn-bank").hidden = !live || st.has_stop === false;  // Chicago, Craps, Aces …: no stop in the game
  const bankLabel = st && st.game !== "1000" && st.allowed.bank_label ? pick(st.allowed.bank_label) : "";
  $("btn-bank").textContent = bankLabel ? bankLabel.charAt(0).toUpperCase() + bankLabel.slice(1) : t("bank");
  $("btn-undo").disabled = !s.game;
  $("entry-panel").hidden = !live;
  $("btn-enter").disabled = !live;
  renderKeep(s);
  renderPending(s);
  // events: newest first, no numbers (the newest is on top)
  const ev = $("events");
  ev.innerHTML = "";
  (s.events || []).filter((e) => e.kind !== "turn" || true).slice().reverse().forEach((e) => {
    const li = document.createElement("li");
    li.textContent = evText(e);
    li.className = "ev-" + e.kind;
    ev.appendChild(li);
  });
  renderBanner(s);
  const errKey = s.error ? JSON.stringify(s.error) : "";
  if (errKey && errKey !== render.lastError) showMessage(errorText(s.error, 409));
  render.lastError = errKey;
  keepAwake(live);
  if (TV) document.title = st ? `${st.players.map((p) => `${p.name} ${p.score}`).join(" · ")} — kosti` : "kosti";
}

// The game's rule changes in words ("to 200" / "до 200"), never as JSON: the common keys by name, any other
// as "key: value". Nested ({"opening": {"threshold": 75}}) and dotted ("opening.threshold") keys both work.
const OVERRIDE_WORDS = {
  en: { target: (v) => `to ${v}`, dice_count: (v) => count(v, "die", "en"),
        "opening.threshold": (v) => `opening ${v}`, "overtaking.enabled": (v) => `overtaking ${v ? "on" : "off"}`,
        "overtaking.penalty": (v) => `overtaking −${v}`, "dump_truck.enabled": (v) => `dump truck ${v ? "on" : "off"}`,
        "dump_truck.value": (v) => `dump truck ${v}`, "bolts.enabled": (v) => `bolts ${v ? "on" : "off"}`,
        "bolts.limit": (v) => `bolts limit ${v}`, "bolts.penalty": (v) => `bolts −${v}`,
        "barrel.entry": (v) => `barrel at ${v}`, "barrel.kind": (v) => `barrel: ${v}`, pits: (v) => `pits ${v}`,
        toxic_twos: (v) => `toxic twos ${v ? "on" : "off"}`, yes: "yes", no: "no" },
  ru: { target: (v) => `до ${v}`, dice_count: (v) => count(v, "die", "ru"),
        "opening.threshold": (v) => `вход ${v}`, "overtaking.enabled": (v) => `обгон ${v ? "есть" : "нет"}`,
        "overtaking.penalty": (v) => `обгон −${v}`, "dump_truck.enabled": (v) => `самосвал ${v ? "есть" : "нет"}`,
        "dump_truck.value": (v) => `самосвал ${v}`, "bolts.enabled": (v) => `болты ${v ? "есть" : "нет"}`,
        "bolts.limit": (v) => `болтов до ${v}`, "bolts.penalty": (v) => `болты −${v}`,
        "barrel.entry": (v) => `бочка с ${v}`, "barrel.kind": (v) => `бочка: ${v}`, pits: (v) => `ямы ${v}`,
        toxic_twos: (v) => `ядовитые двойки ${v ? "есть" : "нет"}`, yes: "да", no: "нет" },
};

function overrideValue(v, words) {
  if (typeof v === "boolean") return v ? words.yes : words.no;
  if (Array.isArray(v)) return v.map((x) => overrideValue(x, words)).join(", ");
  if (v && typeof v === "object") {
    if ("lo" in v && "hi" in v) return `${v.lo}–${v.hi}`;  // a pit
    return Object.entries(v).map(([k, x]) => `${k.replace(/_/g, " ")} ${overrideValue(x, words)}`).join(", ");
  }
  return String(v);
}

function overridesText(ov) {
  if (!ov || typeof ov !== "object" || !Object.keys(ov).length) return "";
  const words = OVERRIDE_WORDS[lang] || OVERRIDE_WORDS.en;
  const flat = [];
  const walk = (obj, prefix) => Object.entries(obj).forEach(([k, v]) => {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === "object" && !Array.isArray(v) && !words[key]) walk(v, key);
    else flat.push([key, v]);
  });
  walk(ov, "");
  return flat.map(([k, v]) => {
    const f = words[k];
    if (typeof f === "function") return f(k === "pits" ? overrideValue(v, words) : v);
    return `${k.replace(/[._]/g, " ")}: ${overrideValue(v, words)}`;
  }).join(", ");
}

function renderScores(s) {
  const st = s.state;
  const rows = $("score-rows");
  rows.innerHTML = "";
  if (!st) { $("rules-name").textContent = ""; return; }
  const changes = overridesText(s.game && s.game.rules && s.game.rules.overrides);
  $("rules-name").textContent = `${presetTitle(st.rules)}: ${(st.rules_summary || []).map(pick).join(" · ")}`
    + (changes ? ` · ${t("house_changes")}: ${changes}` : "");
  st.players.forEach((p, i) => {
    const tr = document.createElement("tr");
    tr.id = `player-${i}`;
    tr.dataset.name = p.name;
    if (p.to_move) tr.className = "to-move";
    tr.innerHTML = `<td class="name"><div class="pname">${p.to_move ? "▶ " : ""}${esc(p.name)}</div><div class="status">${statusTags(p, st)}</div></td><td class="score num">${p.score}</td>`;
    rows.appendChild(tr);
  });
}

function renderStandings(s) {
  const st = s.state;
  const box = $("standings");
  if (!st || !st.over) { box.hidden = true; return; }
  box.hidden = false;
  const names = Array.isArray(st.winner) ? st.winner.join(", ") : st.winner;
  $("winner").textContent = names ? `${names} — ${t("wins")}` : t("game_over");
  const order = st.players.slice().sort((a, b) => b.score - a.score);
  $("standings-list").innerHTML = order.map((p) => `<li><span class="pname">${esc(p.name)}</span> <b class="num">${p.score}</b></li>`).join("");
}

function renderPreview(s) {
  const pv = s.bank_preview;
  const el = $("stop-preview");
  if (!pv || s.pending) { el.hidden = true; return; }
  const parts = (pv.changes || []).map((c) => `${esc(c.player)}: ${c.before} → ${c.after}`);
  const notes = (pv.events || []).filter((e) => !["bank", "opened", "throw"].includes(e.kind)).map((e) => esc(evText(e)));
  // "nothing is recorded" only when nothing happens at all: beside a dump truck at 555 (score 0 → 0) it
  // read as a contradiction (fresh look, issue 18)
  const head = parts.length ? parts.join("; ") + (notes.length ? "<br>" : "") : (notes.length ? "" : t("nothing_recorded"));
  el.innerHTML = `<b>${t("stop_now")}:</b> ${head}${notes.length ? "⚠ " + notes.join("; ") : ""}`;
  el.className = "preview" + (pv.warn ? " warn" : "");
  el.hidden = false;
}

function renderLastThrow(s) {
  const st = s.state;
  const dice = $("dice");
  dice.innerHTML = "";
  const lt = s.last_throw;
  const kept = st ? st.turn.last_keep.slice() : [];
  const keepActive = st && !st.over && st.allowed.keep && st.turn.pending_keep && !s.pending;
  $("last-throw").hidden = !lt || !!s.pending || keepActive;
  if (!lt) { $("throw-notes").textContent = ""; $("throw-status").textContent = ""; $("throw-who").textContent = ""; return; }
  lt.faces.forEach((f) => {
    let cls = f < 1 || f > 6 ? "unsure" : "";
    const k = kept.indexOf(f);
    if (lt.outcome === "bust") cls += " bust";
    else if (k >= 0 && lt.resolution !== "pending") { kept.splice(k, 1); cls += " kept"; }
    dice.appendChild(dieEl(f, cls.trim()));
  });
  const b = $("throw-status");
  let label, cls;
  if (lt.outcome === "bust") { label = t(bustWord("bust")); cls = "bust"; }
  else if (lt.outcome === "scored") { label = `${t("scored")} ${lt.points < 0 ? "−" + -lt.points : "+" + lt.points}`; cls = lt.points > 0 ? "ok" : "miss"; }
  else if (lt.outcome === "miss") { label = t("miss"); cls = "miss"; }
  else if (lt.outcome === "setup") { label = t("setup_throw"); cls = "miss"; }
  else { label = t(lt.resolution) || lt.resolution; cls = lt.status; }
  if (lt.source === "manual") label += ` · ${t("entered")}`;
  b.textContent = label;
  b.className = "badge " + cls;
  $("throw-who").textContent = lt.player ? `(${lt.player})` : "";
  const idx = $("fix-index").value;
  $("fix-index").innerHTML = lt.faces.map((f, i) => `<option value="${i}">${i + 1} (${f || "?"})</option>`).join("");
  if (idx !== "" && Number(idx) < lt.faces.length) $("fix-index").value = idx;
  // Fix changes an applied throw only while it is the game's latest action (lt.fixable): not after a Stop
  $("fix-panel").hidden = TV || !(st && !st.over) || !["applied", "corrected"].includes(lt.resolution) || lt.fixable === false;
  // warnings of a throw scored in this turn (e.g. a die found only on a second look); older ones are gone
  const current = st && lt.turn_no === s.turn_no && lt.resolution !== "pending";
  $("throw-notes").textContent = current ? groupReasons(lt.reasons).join("; ") : "";
}

function renderKeep(s) {
  const st = s.state;
  const kp = $("keep-panel");
  const pk = st && st.turn.pending_keep;
  if (!(st && !st.over && st.allowed.keep && pk && !s.pending)) { kp.hidden = true; keepSel.clear(); return; }
  kp.hidden = false;
  const keeps = st.allowed.keeps || [];
  const scoring = new Set(keeps.flatMap((k) => k.faces));
  const kd = $("keep-dice");
  kd.innerHTML = "";
  pk.forEach((f, i) => {
    const can = scoring.has(f);
    const d = dieEl(f, (keepSel.has(i) ? "selected" : "") + (can ? "" : " dead"));
    d.dataset.index = i;
    if (can) d.addEventListener("click", () => { keepSel.has(i) ? keepSel.delete(i) : keepSel.add(i); render(snap); });
    kd.appendChild(d);
  });
  const chosen = [...keepSel].map((i) => pk[i]).sort((a, b) => a - b);
  const match = keeps.find((k) => k.faces.length === chosen.length && k.faces.slice().sort((a, b) => a - b).every((v, j) => v === chosen[j]));
  $("keep-total").textContent = !chosen.length ? "" : match ? t("keep_total")(st.turn.turn_points + match.points) : t("keep_invalid");
  $("btn-keep").disabled = !match;
}

function renderPending(s) {
  const pd = $("pending");
  if (!s.pending) { pd.hidden = true; return; }
  pd.hidden = false;
  const p = s.pending;
  const want = s.state ? (s.state.allowed.dice_options || [s.state.turn.dice_to_throw]) : [];
  const wrongCount = want.length && !want.includes(p.faces.length);
  $("pending-count").textContent = wrongCount ? t("count_wrong")(p.faces.length, want.join(" / ")) : "";
  // the count is said once, in the line above, with what to do about it
  const reasons = groupReasons(p.reasons).filter((r) => !/(expected|ожидалось|saw \d+ dice|видно костей)/.test(r));
  $("pending-reasons").textContent = reasons.join("; ");
  const img = $("pending-img");
  if (p.image_url) { img.src = p.image_url + "?thumb=1"; img.dataset.full = p.image_url; img.hidden = false; } else img.hidden = true;
  const pdd = $("pending-dice");
  pdd.innerHTML = "";
  p.faces.forEach((f, i) => {
    const wrap = document.createElement("span");
    wrap.className = "pdie";
    const d = dieEl(f, f >= 1 && f <= 6 ? "" : "unsure");
    const sel = document.createElement("select");
    sel.className = "fix";
    sel.id = `pending-die-${i}`;
    sel.innerHTML = (f >= 1 && f <= 6 ? "" : `<option value="" selected disabled>?</option>`)
      + [1, 2, 3, 4, 5, 6].map((v) => `<option value="${v}"${v === f ? " selected" : ""}>${v}</option>`).join("");
    sel.addEventListener("change", () => control("fix", { die_index: i, value: Number(sel.value) }));
    d.textContent = "";
    d.appendChild(sel);
    const x = document.createElement("button");
    x.type = "button";
    x.className = "remove";
    x.id = `pending-remove-${i}`;
    x.textContent = "✕";
    x.title = t("remove_die");
    x.setAttribute("aria-label", t("remove_die"));
    x.addEventListener("click", () => control("remove", { die_index: i }));
    wrap.appendChild(d);
    wrap.appendChild(x);
    pdd.appendChild(wrap);
  });
}

function renderBanner(s) {
  const b = s.banner;
  if (!b || b.id === lastBanner) return;
  const fresh = lastBanner !== null || (s.server_time - (b.created_at || 0)) < 20;
  lastBanner = b.id;
  if (!fresh) return;
  fillBanner(b);
  const el = $("banner");
  el.hidden = false;
  clearTimeout(bannerTimer);
  bannerTimer = setTimeout(() => { el.hidden = true; }, TV ? 12000 : 9000);
}

// The banner's words in the current language (called again when the language changes while it is shown).
function fillBanner(b) {
  fillBanner.shown = b;
  const title = (t("banner") || {})[bustWord(b.kind)] || b.kind;
  const lines = (b.events || []).filter((e) => e.kind !== "throw" || b.kind === "bust").map((e) => esc(evText(e)));
  (b.changes || []).forEach((c) => lines.push(`<b>${esc(c.player)}: ${c.before} → ${c.after}</b>`));
  // a bust's lost turn points are already in the engine's sentence ("the turn's 10 are lost")
  if (b.lost && !lines.some((l) => l.includes(String(b.lost)))) lines.push(`<b>${esc(b.player || "")}: ${t("turn_lost")(b.lost)}</b>`);
  $("banner-title").textContent = title;
  $("banner-body").innerHTML = lines.join("<br>");
  const el = $("banner");
  el.className = `banner k-${b.kind}`;
  el.dataset.kind = b.kind;
}

// ------------------------------------------------------------------ history and the score sheet
function zoom(src, caption) {
  $("zoom-img").src = src;
  $("zoom-caption").textContent = caption || "";
  $("zoom-dialog").showModal();
}

async function loadHistory() {
  if (!gid()) { $("history-list").innerHTML = ""; $("sheet").innerHTML = ""; return; }
  let h;
  try { h = await api("GET", `/api/games/${gid()}/history`, undefined, true); } catch (e) { return; }
  renderSheet(h.sheet);
  const byTurn = new Map();
  h.turns.forEach((tu) => byTurn.set(tu.turn_no, { turn: tu, throws: [], notes: [] }));
  h.throws.forEach((th) => { const k = th.turn_no; if (!byTurn.has(k)) byTurn.set(k, { turn: { turn_no: k, player: th.player }, throws: [], notes: [] }); byTurn.get(k).throws.push(th); });
  // what a turn did beyond its points — to other players (overtaking fines, pushes off the barrel) and to the
  // thrower (a bolt, a fall from the barrel, the pit, the dump truck) — said in the turn
  const RULE_EVENTS = ["fall", "knocked_off", "overtaken", "bolt", "bolt_penalty", "pit", "barrel", "dump_truck", "capped", "dot", "skip_turn", "three_farkles"];
  h.actions.filter((a) => !a.undone).forEach((a) => {
    (a.events || []).filter((e) => e.player && e.kind !== "turn" && (e.player !== a.player || RULE_EVENTS.includes(e.kind))).forEach((e) => {
      if (byTurn.has(a.turn_no)) byTurn.get(a.turn_no).notes.push(e);
    });
  });
  const out = [];
  const setupTurns = new Set(h.turns.filter((tu) => tu.outcome === "setup").map((tu) => tu.turn_no));
  const shownNo = (no) => no - [...setupTurns].filter((x) => x < no).length;  // the first real turn is Turn 1
  [...byTurn.values()].sort((a, b) => b.turn.turn_no - a.turn.turn_no).forEach(({ turn, throws, notes }) => {
    const setup = setupTurns.has(turn.turn_no);
    const res = turn.outcome && !setup ? ` — ${esc(OUTCOMES[lang][bustWord(turn.outcome)] || turn.outcome)}: ${turn.score_before ?? "?"} → ${turn.score_after ?? "?"}` : "";
    const ths = throws.map((th) => {
      const img = th.image_url ? `<img src="${th.image_url}?thumb=1" data-full="${th.image_url}" class="zoomable" alt="" loading="lazy">` : "";
      const gone = ["undone", "superseded", "discarded", "rejected"].includes(th.resolution);
      let badge;
      if (th.outcome === "bust") badge = `<span class="badge bust">${t(bustWord("bust"))}</span>`;
      else if (th.outcome === "scored") badge = `<span class="badge ${th.points > 0 ? "ok" : "miss"}">${th.points < 0 ? "−" + -th.points : "+" + th.points}</span>`;
      else if (th.outcome === "miss") badge = `<span class="badge miss">${t("miss")}</span>`;
      else if (th.outcome === "setup") badge = `<span class="badge miss">${t("setup_throw")}</span>`;
      else badge = `<span class="badge ${th.status}">${t(th.resolution) || th.resolution}</span>`;
      const manual = th.source === "manual" ? ` <span class="small">${t("entered")}</span>` : "";
      return `<div class="throw-h${gone ? " undone" : ""}">${img}<span class="faces">${th.faces.map((f) => f || "?").join(" ")}</span> ${badge}${manual}</div>`;
    }).join("");
    const nt = notes.map((e) => `<div class="note">⚠ ${esc(evText(e))}</div>`).join("");
    const head = setup ? `<b>${t("setup_turn")}</b>` : `<b>${t("turn_n")} ${shownNo(turn.turn_no)}</b> ${esc(turn.player || "")}`;
    out.push(`<div class="turn-h${setup ? " setup" : ""}">${head}${res}${ths}${nt}</div>`);
  });
  $("history-list").innerHTML = out.join("");
  $("history-list").querySelectorAll("img.zoomable").forEach((img) => img.addEventListener("click", () => zoom(img.dataset.full, img.nextSibling ? img.nextSibling.textContent : "")));
}

function renderSheet(sheet) {
  const el = $("sheet");
  if (!sheet || !sheet.rows.length) { el.innerHTML = ""; return; }
  const head = `<thead><tr><th>${t("round")}</th>${sheet.players.map((p) => `<th class="num">${esc(p)}</th>`).join("")}</tr></thead>`;
  const body = sheet.rows.map((r) => `<tr><td>${r.round}</td>${sheet.players.map((p) => {
    const c = r.cells[p];
    if (!c) return "<td></td>";
    const score = c.score !== null && c.score !== undefined ? c.score : (c.after_note ?? "");
    const cls = c.outcome === "bust" ? "bust" : c.delta < 0 ? "neg" : "";
    const delta = c.delta ? `<span class="delta">${c.delta > 0 ? "+" : ""}${c.delta}</span>` : (c.outcome && c.outcome !== "bank" ? `<span class="delta">${esc(OUTCOMES[lang][bustWord(c.outcome)] || c.outcome)}</span>` : "");
    const notes = (c.notes || []).map((n) => `<div class="note" title="${esc(lang === "ru" ? n.text_ru : n.text_en)}">${n.delta} ${esc(((T[lang].banner || {})[n.kind] || n.kind).split(" / ")[0])} → ${n.after}</div>`).join("");
    return `<td class="num ${cls}"><b>${score}</b>${delta}${notes}</td>`;
  }).join("")}</tr>`).join("");
  el.innerHTML = head + `<tbody>${body}</tbody>`;
}

// ------------------------------------------------------------------ games: list, resume, rematch
async function loadGames() {
  try { gamesCache = (await api("GET", "/api/games?limit=20", undefined, true)).games; } catch (e) { return; }
  renderGames();
}

function renderGames() {
  const el = $("games-list");
  if (!el) return;
  if (!gamesCache.length) { el.innerHTML = `<p class="small">${t("no_games")}</p>`; return; }
  el.innerHTML = gamesCache.map((g) => {
    const scores = g.players.map((p) => `${esc(p)} <b>${g.scores[p] ?? 0}</b>`).join(" · ");
    const when = new Date(g.updated_at * 1000).toLocaleString(lang === "ru" ? "ru-RU" : "en-GB", { dateStyle: "short", timeStyle: "short" });
    const status = g.current ? t("playing") : t("status_" + g.status);
    const btn = g.status === "finished"
      ? `<button type="button" data-act="rematch" data-id="${g.id}">${t("rematch")}</button>`
      : g.current ? "" : `<button type="button" class="primary" data-act="resume" data-id="${g.id}">${t("resume")}</button>`;
    const win = g.winner ? ` · 🏆 ${esc(g.winner)}` : "";
    const dl = ["csv", "json", "zip"].map((f) => `<a href="/api/games/${g.id}/export?format=${f}" download>${t("dl_" + f)}</a>`).join(" · ");
    return `<div class="game-row" id="game-${g.id}"><div><b>#${g.id}</b> ${scores}<div class="small">${esc(presetTitle(g.rules.preset || ""))} · ${status}${win} · ${count(g.turns, "turn")} · ${when}</div><div class="small game-export">${t("download")}: ${dl}</div></div>${btn}</div>`;
  }).join("");
  el.querySelectorAll("button[data-act]").forEach((b) => b.addEventListener("click", async () => {
    const r = await withReplace("POST", `/api/games/${b.dataset.id}/${b.dataset.act}`, {},
      b.dataset.act === "resume" ? t("replace_resume")(b.dataset.id) : undefined);
    if (r && r.type === "state") { render(r); loadHistory(); loadGames(); window.scrollTo(0, 0); }
  }));
}

// ------------------------------------------------------------------ join from a phone (QR codes)
let joinInfo = null;
async function loadJoin() {
  try { joinInfo = await api("GET", "/api/join", undefined, true); } catch (e) { return; }
  // the spectators' address: anyone may watch. No code at all where phones cannot reach the table (127.0.0.1).
  if (joinInfo.lan) $("join-qr").src = "/api/join/qr.svg";
  renderJoin();
}

function renderJoin() {
  if (!joinInfo) return;
  const where = [joinInfo.watch, joinInfo.name_url].filter(Boolean).map(esc).join(" · ");
  $("join-qr").hidden = !joinInfo.lan;
  $("join-url").innerHTML = joinInfo.lan ? `${t("join_scan")}<br><b>${where}</b>` : esc(t("join_local"));
  $("btn-join-control").hidden = !joinInfo.lan || !joinInfo.pin_required;
}

async function showControlCode() {
  const headers = {};
  const pin = $("pin").value.trim();
  if (pin) headers["X-Kosti-Pin"] = pin;
  const res = await fetch("/api/join/qr.svg?for=control", { headers });
  if (!res.ok) { $("pin").hidden = false; $("pin").focus(); showMessage(t("pin_needed")); return; }
  $("join-qr").src = URL.createObjectURL(await res.blob());
  $("join-url").textContent = t("join_control_hint");
}

// ------------------------------------------------------------------ settings and zones
async function loadSettings() {
  try { settings = await api("GET", "/api/settings", undefined, true); } catch (e) { return; }
  showSettings();
}

function showSettings() {
  $("set-source").value = settings.source || "";
  const th = settings.thresholds || {};
  $("set-conf").value = th.conf ?? "";
  $("set-value-conf").value = th.value_conf ?? "";
  $("set-still").value = th.still_s ?? "";
  $("set-record").checked = !!settings.record;
  $("set-record-mb").value = settings.record_mb ?? 500;
  if (settings.record_dir) $("record-hint").textContent = `${t("record_hint")} (${settings.record_dir})`;
  const fixed = settings.rotate === null || settings.rotate === undefined;  // the virtual table: never turned
  $("set-rotate").value = String(settings.rotate ?? 0);
  $("set-rotate").disabled = fixed;
  $("rotate-hint").dataset.i18n = fixed ? "rotate_fixed" : "rotate_hint";  // applyLang translates it on a switch
  $("rotate-hint").textContent = t($("rotate-hint").dataset.i18n);
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
  // Only the thresholds the user changed: a value sent back unchanged would be stored as a choice and keep
  // an old default after the next model's operating point (dashboard/migrations.py OLD_DEFAULT_THRESHOLDS).
  const body = { thresholds: {} };
  const was = (settings && settings.thresholds) || {};
  const num = (id) => { const v = $(id).value; return v === "" ? null : Number(v); };
  for (const [id, key] of [["set-conf", "conf"], ["set-value-conf", "value_conf"], ["set-still", "still_s"]]) {
    if (num(id) !== null && num(id) !== was[key]) body.thresholds[key] = num(id);
  }
  if (!Object.keys(body.thresholds).length) delete body.thresholds;
  const src = $("set-source").value.trim();
  if (src && (!settings || src !== settings.source)) body.source = src;
  const turn = Number($("set-rotate").value);
  if (!$("set-rotate").disabled && settings && settings.rotate !== null && turn !== settings.rotate) body.rotate = turn;
  if (settings && $("set-record").checked !== !!settings.record) body.record = $("set-record").checked;
  const mb = num("set-record-mb");
  if (settings && mb !== null && mb !== settings.record_mb) body.record_mb = mb;
  Object.assign(body, extra || {});
  try { settings = await api("PUT", "/api/settings", body); showMessage(t("saved"), true); showSettings(); } catch (e) { /* shown */ }
}

// ------------------------------------------------------------------ the live view is folded away on phones
function setLive(open) {
  const img = $("live");
  if (open && !img.getAttribute("src")) img.src = "/video.mjpg";
  if (!open && img.getAttribute("src")) { img.removeAttribute("src"); }
}

// ------------------------------------------------------------------ the screen stays awake while a game runs (PWA)
async function keepAwake(on) {
  if (!("wakeLock" in navigator)) return;
  try {
    if (on && !wakeLock && document.visibilityState === "visible") {
      wakeLock = await navigator.wakeLock.request("screen");
      wakeLock.addEventListener("release", () => { wakeLock = null; });
    } else if (!on && wakeLock) { await wakeLock.release(); wakeLock = null; }
  } catch (e) { wakeLock = null; /* not allowed now (e.g. battery saver): the game goes on */ }
}

// ------------------------------------------------------------------ manual entry
function parseFaces(raw) {
  // "11535", "1 1 5 3 5", "1,1,5": every digit is one die; anything but 1–6, spaces and commas → null
  const s = String(raw);
  if (/[^1-6\s,;]/.test(s)) return null;
  return s.replace(/[^1-6]/g, "").split("").map(Number);
}

function renderEntry() {
  const el = $("entry-dice");
  el.innerHTML = "";
  entry.forEach((f, i) => {
    const d = dieEl(f, "");
    d.title = t("backspace");
    d.addEventListener("click", () => { entry.splice(i, 1); renderEntry(); });
    el.appendChild(d);
  });
}

async function submitEntry() {
  const typed = $("entry-text").value.trim();
  const faces = typed ? parseFaces(typed) : entry.slice();
  if (faces === null) { showMessage(t("bad_faces")); return; }
  if (!faces.length) return;
  const r = await control("enter", { faces });
  if (r) { entry = []; $("entry-text").value = ""; renderEntry(); }
}

// ------------------------------------------------------------------ wiring
function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  ws = new WebSocket(`${proto}://${location.host}/ws${TV ? "?view=tv" : ""}`);  // the spectator's socket is read-only
  ws.onopen = () => { $("conn").className = "conn on"; $("conn").dataset.i18n = "online"; $("conn").textContent = t("online"); };
  ws.onclose = () => { $("conn").className = "conn off"; $("conn").dataset.i18n = "offline"; $("conn").textContent = t("offline"); setTimeout(connect, 1500); };
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.type === "state") {
      const prev = snap ? `${snap.game && snap.game.id}/${snap.turn_no}/${snap.version}` : "";
      const prevTurn = snap ? snap.turn_no : null;
      const gameChanged = !snap || !snap.game || !msg.game || snap.game.id !== msg.game.id;
      render(msg);
      if (prev !== `${msg.game && msg.game.id}/${msg.turn_no}/${msg.version}`) loadHistory();
      if (gameChanged || !snap || prevTurn !== msg.turn_no || (msg.state && msg.state.over)) loadGames();
    } else if (msg.type === "source") renderSource(msg.source);
    else if (msg.type === "error") showMessage(errorText(msg, msg.status));
  };
}

// A preset's human name in the page's language ("Pig" / «Свинья»), its identifier when unknown.
function presetTitle(name) {
  const p = presets.find((x) => x.name === name);
  return p && p.title ? (lang === "ru" ? p.title_ru || p.title : p.title) : name;
}

function renderPresetMenu() {
  const sel = $("ng-preset");
  const was = sel.value;
  const opt = (p) => `<option value="${esc(p.name)}">${esc(presetTitle(p.name))} (${p.dice} × d6${p.target ? " → " + p.target : ""})</option>`;
  const fam = presets.filter((p) => !p.game || p.game === "1000");
  const other = presets.filter((p) => p.game && p.game !== "1000");
  sel.innerHTML = `<optgroup label="${esc(t("family_1000"))}">${fam.map(opt).join("")}</optgroup>`
    + (other.length ? `<optgroup label="${esc(t("other_games"))}">${other.map(opt).join("")}</optgroup>` : "");
  if (was && presets.some((p) => p.name === was)) sel.value = was;
}

function renderPresetDesc() {
  const p = presets.find((x) => x.name === $("ng-preset").value);
  if (!p) { $("ng-preset-desc").textContent = ""; return; }
  const desc = lang === "ru" ? p.description_ru || p.description : p.description;
  const lines = (p.summary || []).map(pick).join(" · ");  // the 1000 family: the rules line first
  $("ng-preset-desc").textContent = lines ? `${lines}. ${desc}` : desc;
}

async function loadPresets() {
  try { presets = (await api("GET", "/api/presets", undefined, true)).presets; } catch (e) { return; }
  renderPresetMenu();
  $("ng-preset").addEventListener("change", renderPresetDesc);
  renderPresetDesc();
  renderGames();  // the list of games and the rules line name the presets by their titles, known from now on
  if (snap) renderScores(snap);
}

function init() {
  if (TV) document.body.classList.add("tv");
  $("lang-toggle").addEventListener("click", () => { lang = lang === "ru" ? "en" : "ru"; localStorage.setItem("kosti.lang", lang); applyLang(); loadHistory(); });
  // a control QR code carries the PIN in the address's fragment (never sent to the server): keep it, then drop it
  const fromCode = /(?:^#|&)pin=(\d{4,6})(?:&|$)/.exec(location.hash);
  if (fromCode) { localStorage.setItem("kosti.pin", fromCode[1]); history.replaceState(null, "", location.pathname + location.search); }
  $("pin").value = localStorage.getItem("kosti.pin") || "";
  $("pin").addEventListener("change", () => localStorage.setItem("kosti.pin", $("pin").value.trim()));
  $("btn-join-control").addEventListener("click", showControlCode);
  loadJoin();
  $("btn-throw").addEventListener("click", () => {
    const raw = $("throw-faces").value.trim();
    const faces = raw ? parseFaces(raw) : null;
    if (raw && faces === null) { showMessage(t("bad_faces")); return; }
    control("throw", faces ? { faces } : undefined);
  });
  $("btn-bank").addEventListener("click", () => control("bank"));
  $("btn-undo").addEventListener("click", () => control("undo"));
  $("btn-keep").addEventListener("click", () => {
    const pk = snap.state.turn.pending_keep || [];
    control("keep", { faces: [...keepSel].sort().map((i) => pk[i]) });
    keepSel.clear();
  });
  $("btn-confirm").addEventListener("click", () => control("confirm", {}));
  $("btn-discard").addEventListener("click", () => control("discard"));
  $("btn-add-die").addEventListener("click", () => { if (snap && snap.pending) control("fix", { die_index: snap.pending.faces.length, value: 1 }); });
  $("btn-rematch").addEventListener("click", async () => {
    const r = await withReplace("POST", `/api/games/${gid()}/rematch`, {});
    if (r && r.type === "state") { render(r); loadHistory(); loadGames(); }
  });
  document.querySelectorAll(".keypad .key[data-face]").forEach((k) => k.addEventListener("click", () => {
    if (entry.length < 12) entry.push(Number(k.dataset.face));
    renderEntry();
  }));
  $("entry-back").addEventListener("click", () => { entry.pop(); renderEntry(); });
  $("btn-enter").addEventListener("click", submitEntry);
  $("entry-text").addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); submitEntry(); } });
  $("pending-img").addEventListener("click", () => zoom($("pending-img").dataset.full || $("pending-img").src, ""));
  $("banner").addEventListener("click", () => { $("banner").hidden = true; });
  $("btn-history").addEventListener("click", loadHistory);
  $("btn-fix").addEventListener("click", () => control("fix", { die_index: Number($("fix-index").value), value: Number($("fix-value").value) }));
  $("new-game-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const players = $("ng-players").value.split(",").map((x) => x.trim()).filter(Boolean);
    let overrides = null;
    const raw = $("ng-overrides").value.trim();
    if (raw) { try { overrides = JSON.parse(raw); } catch (err) { showMessage(t("bad_json")); return; } }
    const r = await withReplace("POST", "/api/games", { players, preset: $("ng-preset").value, overrides });
    if (r && r.type === "state") { render(r); loadHistory(); loadGames(); window.scrollTo(0, 0); }
  });
  $("btn-save-settings").addEventListener("click", () => saveSettings());
  $("btn-turn").addEventListener("click", async () => {
    try {
      settings = await api("PUT", "/api/settings", { rotate: Number($("btn-turn").dataset.turn) });
      $("turn-banner").hidden = true;
      $("set-rotate").value = String(settings.rotate ?? 0);  // the rest of the form keeps what is typed in it
      drawZones(settings.zones && settings.zones.roll_area, settings.zones && settings.zones.set_aside);
    } catch (e) { /* shown */ }
  });
  $("btn-turn-later").addEventListener("click", () => {
    sessionStorage.setItem("kosti.turnLater", $("btn-turn").dataset.turn || "");
    $("turn-banner").hidden = true;
  });
  const startZone = (which) => {
    zoneWhich = which;
    zonePts = [];
    $("live-details").open = true;
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
  // the live view: open on a wide screen, folded on a phone (the scoreboard comes first)
  const ld = $("live-details");
  ld.open = !TV && window.matchMedia("(min-width: 900px)").matches;
  setLive(ld.open);
  ld.addEventListener("toggle", () => setLive(ld.open));
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") keepAwake(snap && snap.state && !snap.state.over); });
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});
  applyLang();
  loadPresets();
  loadSettings();
  loadGames();
  fetch("/api/state").then((r) => r.json()).then((s) => { render(s); loadHistory(); }).catch(() => {});
  connect();
}

document.addEventListener("DOMContentLoaded", init);
