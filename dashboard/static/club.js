// kosti club: every table of the club live (players, scores, turn, on or off) and the evening's standings.
// The club server pushes its snapshot on /ws (kosti.dashboard.club); this page only draws it. English and Russian.
"use strict";

const TEXT = {
  en: {
    title: "club", live: "live", off_since: "off since {t}", off: "off", unknown: "no word",
    summary: "Tables live: {live} · off: {off}", no_tables: "Waiting for the tables: none has published on the broker yet.",
    throws: "{p} throws", turn_points: "{n} in this turn", no_game: "No game",
    over: "Game over. Winner: {w}", over_nowinner: "Game over", last_throw: "Last throw: {f} ({p}, {n})",
    last_known: "Last known scores: the table is not playing now.",
    camera: "Camera: {s}", broker_lost: "No connection to the broker {a}: the tables below are not live.",
    server_lost: "No connection to the club server: reconnecting…", connected: "connected", disconnected: "offline",
    standings: "Standings of the evening", since: "Finished since {t}: {g}", player: "Player", wins: "Wins",
    games: "Games", points: "Points", tables: "Tables", no_results: "No game has finished yet this evening.",
  },
  ru: {
    title: "клуб", live: "в игре", off_since: "выключен с {t}", off: "выключен", unknown: "нет связи",
    summary: "Столов в игре: {live} · выключено: {off}", no_tables: "Ждём столы: ни один ещё ничего не опубликовал на брокере.",
    throws: "Бросает {p}", turn_points: "{n} за ход", no_game: "Игры нет",
    over: "Игра окончена. Победитель: {w}", over_nowinner: "Игра окончена", last_throw: "Последний бросок: {f} ({p}, {n})",
    last_known: "Последний известный счёт: за столом сейчас не играют.",
    camera: "Камера: {s}", broker_lost: "Нет связи с брокером {a}: столы ниже показаны не вживую.",
    server_lost: "Нет связи с сервером клуба: подключаемся…", connected: "на связи", disconnected: "нет связи",
    standings: "Итоги вечера", since: "С {t} окончено: {g}", player: "Игрок", wins: "Победы",
    games: "Игры", points: "Очки", tables: "Столы", no_results: "Этим вечером ещё ни одна игра не закончилась.",
  },
};
// The camera's states (kosti.dashboard.mqtt.CAMERA_STATES) in words; "ok" and "none" are not shown.
const CAMERA = {
  en: { connecting: "connecting", stalled: "no frames", reconnecting: "reconnecting", failed: "not working", error: "error" },
  ru: { connecting: "подключается", stalled: "нет кадров", reconnecting: "переподключается", failed: "не работает", error: "ошибка" },
};
// Counting words, with the CLDR plural rules of each language (as the dashboard's app.js).
const NOUNS = { game: [["game", "games"], ["игра", "игры", "игр"]], point: [["point", "points"], ["очко", "очка", "очков"]] };
const PLURAL_RULES = { en: new Intl.PluralRules("en-US"), ru: new Intl.PluralRules("ru-RU") };
function count(n, key) {
  const [en, ru] = NOUNS[key];
  const cat = PLURAL_RULES[lang].select(Math.abs(n));
  const word = lang === "ru" ? (cat === "one" ? ru[0] : cat === "few" ? ru[1] : ru[2]) : (cat === "one" ? en[0] : en[1]);
  return `${n} ${word}`;
}

let lang = localStorage.getItem("kosti.lang") || ((navigator.language || "").startsWith("ru") ? "ru" : "en");
let snap = null;       // the latest snapshot
let lastHeard = 0;     // when the club server last spoke (ms); it beats every 10 s
let socketOpen = false;
const STALE_MS = 25000;

const $ = (id) => document.getElementById(id);
function t(key, params) {
  let s = TEXT[lang][key];
  for (const [k, v] of Object.entries(params || {})) s = s.replace(`{${k}}`, v);
  return s;
}
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function clock(sec) {
  return new Date(sec * 1000).toLocaleTimeString(lang === "ru" ? "ru-RU" : "en-GB", { hour: "2-digit", minute: "2-digit" });
}
function serverAlive() { return socketOpen && Date.now() - lastHeard < STALE_MS; }

function tableCard(tb, alive) {
  const status = alive ? tb.status : "unknown";
  const card = el("article", "table-card");
  card.dataset.table = tb.id;
  card.dataset.status = status;
  const head = el("div", "table-head");
  head.append(el("h3", "table-name", tb.name));
  const badge = status === "live" ? t("live") : status === "off" ? (tb.since ? t("off_since", { t: clock(tb.since) }) : t("off")) : t("unknown");
  head.append(el("span", "table-status", badge));
  card.append(head);
  const st = tb.state;
  if (status !== "live" && st) card.append(el("p", "table-stale", t("last_known")));
  if (!st || !st.game || !st.players.length) {
    card.append(el("p", "table-turn", t("no_game")));
    return card;
  }
  // whose turn only while the table is live: an off table's turn is history, not what is happening
  let line = "";
  if (st.over) line = st.winner ? t("over", { w: st.winner }) : t("over_nowinner");
  else if (st.current_player && status === "live") line = `${t("throws", { p: st.current_player })} · ${t("turn_points", { n: st.turn_points })}`;
  if (line) card.append(el("p", "table-turn", line));
  const ol = el("ol", "players");
  for (const p of st.players) {
    const li = el("li", "player" + (p.to_move && !st.over ? " to-move" : ""));
    li.dataset.name = p.name;
    li.append(el("span", "player-name", p.name), el("span", "player-score", p.score === null ? "–" : String(p.score)));
    ol.append(li);
  }
  card.append(ol);
  if (st.last_throw) {
    card.append(el("p", "table-note last-throw", t("last_throw", { f: st.last_throw.text, p: st.last_throw.player || "?",
      n: st.last_throw.points === null ? "–" : count(st.last_throw.points, "point") })));
  }
  const ev = tb.last_event;
  const said = ev && (lang === "ru" ? ev.text_ru : ev.text_en);
  if (said) card.append(el("p", "table-note last-event", said));
  if (st.camera && CAMERA[lang][st.camera]) card.append(el("p", "table-note camera", t("camera", { s: CAMERA[lang][st.camera] })));
  return card;
}

function render() {
  document.documentElement.lang = lang;
  $("lang-toggle").textContent = lang === "ru" ? "EN" : "RU";
  $("club-title").textContent = t("title");
  for (const k of ["player", "wins", "games", "points", "tables"]) $(`th-${k}`).textContent = t(k);
  $("standings-title").textContent = t("standings");
  const alive = serverAlive();
  $("conn").className = "conn " + (alive ? "on" : "off");
  $("conn").textContent = alive ? t("connected") : t("disconnected");
  const banner = $("broker-banner");
  if (!alive) { banner.hidden = false; banner.textContent = t("server_lost"); }
  else if (snap && !snap.broker.connected) { banner.hidden = false; banner.textContent = t("broker_lost", { a: snap.broker.address }); }
  else banner.hidden = true;
  const tables = $("tables");
  tables.replaceChildren();
  if (!snap) return;
  const list = snap.tables;
  for (const tb of list) tables.append(tableCard(tb, alive));
  $("no-tables").hidden = list.length > 0;
  $("no-tables").textContent = t("no_tables");
  const live = alive ? list.filter((x) => x.status === "live").length : 0;
  $("club-summary").textContent = t("summary", { live, off: list.length - live });
  $("standings-since").textContent = t("since", { t: clock(snap.since), g: count(snap.games, "game") });
  const body = document.querySelector("#standings tbody");
  body.replaceChildren();
  snap.standings.forEach((r, i) => {
    const tr = el("tr");
    tr.dataset.name = r.name;
    const names = r.tables.map((id) => (list.find((x) => x.id === id) || { name: id }).name);
    tr.append(el("td", "num", String(i + 1)), el("td", "st-name", r.name), el("td", "num st-wins", String(r.wins)),
      el("td", "num st-games", String(r.games)), el("td", "num st-points", String(r.points)), el("td", "st-tables", names.join(", ")));
    body.append(tr);
  });
  $("standings").hidden = snap.standings.length === 0;
  $("standings-empty").hidden = snap.standings.length > 0;
  $("standings-empty").textContent = t("no_results");
}

function connect() {
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  ws.onopen = () => { socketOpen = true; };
  ws.onmessage = (m) => { lastHeard = Date.now(); snap = JSON.parse(m.data); render(); };
  ws.onclose = () => { socketOpen = false; render(); setTimeout(connect, 2000); };
  ws.onerror = () => ws.close();
}

$("lang-toggle").addEventListener("click", () => {
  lang = lang === "ru" ? "en" : "ru";
  localStorage.setItem("kosti.lang", lang);
  render();
});
setInterval(() => { if (snap && !serverAlive()) render(); }, 5000);  // a silent server: shown as such, never as live
render();
connect();
