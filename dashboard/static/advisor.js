// kosti dashboard — the turn advisor and the dice statistics (issue 19). Self-contained: it builds its
// own two cards, listens to /ws on its own connection, and reads /api/advice and /api/stats.
// Off in the spectator view (/tv, /?view=tv or /?view=spectator); the players can hide the advice (some tables call it
// cheating) — the choice is kept in this browser (localStorage "kosti.advisor").
"use strict";

(function () {
  const params = new URLSearchParams(location.search);
  const spectator = location.pathname.replace(/\/$/, "") === "/tv" ||
    ["tv", "spectator"].includes(params.get("view")) || params.has("spectator");
  if (spectator) return;  // the spectator view (/tv) never shows advice or statistics

  const TXT = {
    en: {
      title: "Advice", stats: "Dice statistics", hide: "Hide advice", show: "Show advice",
      hidden: "Advice is hidden.", throw: "THROW", stop: "STOP", risk: "No score on the next throw",
      gain: "Points it adds on average", stop_v: "Expected if you stop", throw_v: "Expected if you throw",
      record: { open: "Chance to open this turn", pit: "Chance to leave the pit this turn",
                barrel: "Chance to win from the barrel this turn", none: "Chance to record this turn" },
      keep: "Set aside", refresh: "Refresh", faces: "Faces", luck: "Luck", player: "Player",
      turns: "Turns", per_turn: "Points a turn", none: "—",
      objective: "Turn-level advice: the most points this turn records, not a whole-game plan.",
      win_throw: "Chance to win the game if you throw", win_stop: "Chance to win the game if you stop",
      win_risk: "A 1 loses the series",
      objective_win: "Whole-game advice: the chance to win the game when both players play their best " +
        "(Neller & Presser's optimal Pig; a shared victory counts half).",
    },
    ru: {
      title: "Подсказка", stats: "Статистика костей", hide: "Скрыть подсказку", show: "Показать подсказку",
      hidden: "Подсказка скрыта.", throw: "БРОСАТЬ", stop: "ХВАТИТ", risk: "Риск пустого броска",
      gain: "В среднем даст очков", stop_v: "Ожидание, если остановиться", throw_v: "Ожидание, если бросать",
      record: { open: "Шанс открыть игру за этот ход", pit: "Шанс выбраться из ямы за этот ход",
                barrel: "Шанс выиграть с бочки за этот ход", none: "Шанс записать очки за этот ход" },
      keep: "Отложить", refresh: "Обновить", faces: "Грани", luck: "Везение", player: "Игрок",
      turns: "Ходов", per_turn: "Очков за ход", none: "—",
      objective: "Подсказка на один ход: больше всего очков за этот ход, а не план на всю игру.",
      win_throw: "Шанс выиграть партию, если бросать", win_stop: "Шанс выиграть партию, если остановиться",
      win_risk: "Единица сжигает серию",
      objective_win: "Подсказка на всю партию: шанс выиграть, если оба играют наилучшим образом " +
        "(оптимальная «Свинья» Неллера и Прессера; общая победа считается за половину).",
    },
  };

  let data = null;       // latest /api/advice answer
  let stats = null;      // latest /api/stats answer
  let lastVersion = -1;
  let lastThrow = null;  // id of the last throw the statistics card has counted
  let hidden = localStorage.getItem("kosti.advisor") === "hidden";

  // the page's language (app.js: the saved choice, else the browser's), so the card never speaks another one
  const lang = () => (typeof window.kostiLang === "function" ? window.kostiLang()
    : localStorage.getItem("kosti.lang") || ((navigator.language || "").startsWith("ru") ? "ru" : "en")) === "ru" ? "ru" : "en";
  const tx = () => TXT[lang()];
  const pct = (p) => {
    const x = 100 * p;
    const s = x > 0 && x < 0.1 ? "< 0.1" : x < 10 ? x.toFixed(1) : x.toFixed(0);
    return (lang() === "ru" ? s.replace(".", ",") : s) + " %";
  };
  const pct1 = (p) => {  // win probabilities: one decimal, as the advice sentence says them
    const s = (100 * p).toFixed(1);
    return (lang() === "ru" ? s.replace(".", ",") : s) + " %";
  };
  const num = (v) => (v === null || v === undefined ? tx().none : Math.round(v).toString());
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, v));
    if (text !== undefined) e.textContent = text;
    return e;
  };

  // -- the two cards -----------------------------------------------------------------------------
  const card = el("section", { id: "advisor", class: "card advisor", hidden: "" });
  card.innerHTML = '<h2 id="adv-title"></h2><div id="adv-body"></div>' +
    '<div class="controls"><button id="adv-toggle" type="button"></button></div>';
  const statsCard = el("section", { id: "dice-stats", class: "card dice-stats" });
  statsCard.innerHTML = '<h2 id="st-title"></h2><img id="st-plot" alt="" class="st-plot">' +
    '<div id="st-verdict" class="small"></div><table id="st-players"></table>' +
    '<div class="controls"><button id="st-refresh" type="button"></button></div>';
  // After the scoreboard, so a phone shows turn → scores → advice and the scores stay on the first screen
  // (issue 18); the wide grid places the card in the right column on its own.
  const anchor = document.getElementById("scoreboard") || document.getElementById("turn");
  if (anchor && anchor.parentNode) {
    anchor.parentNode.insertBefore(card, anchor.nextSibling);
  } else {
    (document.querySelector("main") || document.body).appendChild(card);
  }
  const hist = document.getElementById("history");
  (hist && hist.parentNode ? hist.parentNode : document.querySelector("main") || document.body)
    .insertBefore(statsCard, hist || null);

  function row(label, value, cls) {
    const d = el("div", { class: "adv-row" + (cls ? " " + cls : "") });
    d.appendChild(el("span", {}, label + ": "));
    d.appendChild(el("b", {}, value));
    return d;
  }

  function render() {
    const t = tx();
    document.getElementById("adv-title").textContent = t.title;
    document.getElementById("adv-toggle").textContent = hidden ? t.show : t.hide;
    const body = document.getElementById("adv-body");
    body.textContent = "";
    card.hidden = !data || !data.available;
    if (!data || !data.available) return;
    if (hidden) {
      body.appendChild(el("div", { class: "small" }, t.hidden));
      return;
    }
    const a = data.advice;
    const verdict = el("div", { class: "adv-verdict " + a.advice, id: "adv-verdict" },
      (a.advice === "throw" ? t.throw : t.stop) + " — " + a.player);
    body.appendChild(verdict);
    body.appendChild(el("div", { class: "adv-why", id: "adv-why" }, lang() === "ru" ? a.why_ru : a.why));
    if (data.objective_kind === "win") {  // two-player Pig: the win probability of each choice
      body.appendChild(row(t.win_throw, pct1(a.win_if_throw), "adv-win-throw"));
      if (a.may_stop) body.appendChild(row(t.win_stop, pct1(a.win_if_stop), "adv-win-stop"));
      body.appendChild(row(t.win_risk, pct(a.bust_probability), "adv-risk"));
      body.appendChild(el("div", { class: "small", id: "adv-objective" }, t.objective_win));
      return;
    }
    if (a.keep) body.appendChild(row(t.keep, a.keep.join(" ")));
    body.appendChild(row(t.risk, pct(a.bust_probability), "adv-risk"));
    const gain = (Math.round(a.expected_points * 10) / 10).toString();  // a decimal comma in Russian, as pct()
    body.appendChild(row(t.gain, lang() === "ru" ? gain.replace(".", ",") : gain));
    body.appendChild(row(t.throw_v, num(a.throw_value)));
    if (a.may_stop) body.appendChild(row(t.stop_v, num(a.stop_value)));
    body.appendChild(row(t.record[a.requirement || "none"], pct(a.record_probability)));
    body.appendChild(el("div", { class: "small" }, t.objective));
  }

  function renderStats() {
    const t = tx();
    document.getElementById("st-title").textContent = t.stats;
    document.getElementById("st-refresh").textContent = t.refresh;
    if (!stats) return;
    const cs = stats.chi_square;
    document.getElementById("st-verdict").textContent =
      (lang() === "ru" ? cs.verdict_ru : cs.verdict) +
      (stats.per_die.available ? "" : " · " + (lang() === "ru" ? stats.per_die.note_ru : stats.per_die.note));
    const tab = document.getElementById("st-players");
    tab.textContent = "";
    const head = el("tr");
    [t.player, t.turns, t.per_turn, t.luck].forEach((h) => head.appendChild(el("th", {}, h)));
    tab.appendChild(head);
    stats.players.forEach((p) => {
      const tr = el("tr");
      tr.appendChild(el("td", {}, p.player));
      tr.appendChild(el("td", {}, String(p.turns)));
      tr.appendChild(el("td", {}, num(p.points_per_turn)));
      tr.appendChild(el("td", {}, lang() === "ru" ? p.luck.verdict_ru : p.luck.verdict));
      tab.appendChild(tr);
    });
  }

  async function loadAdvice() {
    try {
      const r = await fetch("/api/advice", { cache: "no-store" });
      if (r.ok) data = await r.json();
    } catch (e) { /* offline: keep the last advice */ }
    render();
  }

  async function loadStats() {
    try {
      const r = await fetch("/api/stats", { cache: "no-store" });
      if (r.ok) stats = await r.json();
      document.getElementById("st-plot").src = "/api/stats/faces.png?t=" + Date.now();
    } catch (e) { /* offline */ }
    renderStats();
  }

  document.getElementById("adv-toggle").addEventListener("click", () => {
    hidden = !hidden;
    localStorage.setItem("kosti.advisor", hidden ? "hidden" : "shown");
    render();
  });
  document.getElementById("st-refresh").addEventListener("click", loadStats);
  const langBtn = document.getElementById("lang-toggle");
  if (langBtn) langBtn.addEventListener("click", () => setTimeout(() => { render(); renderStats(); }, 0));

  // -- updates: every state push on /ws (own connection), polling as the fallback ------------------
  let backoff = 500;
  function connect() {
    let ws;
    try {
      ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
    } catch (e) { setTimeout(connect, backoff); return; }
    ws.onopen = () => { backoff = 500; };
    ws.onmessage = (m) => {
      let msg;
      try { msg = JSON.parse(m.data); } catch (e) { return; }
      if (msg && msg.type === "state" && msg.version !== lastVersion) {
        lastVersion = msg.version;
        loadAdvice();
        const throwId = msg.last_throw ? msg.last_throw.id : null;
        if (throwId !== lastThrow) { lastThrow = throwId; loadStats(); }  // a new throw: new counts
      }
    };
    ws.onclose = () => { setTimeout(connect, backoff); backoff = Math.min(backoff * 2, 8000); };
  }
  connect();
  setInterval(() => { if (document.visibilityState === "visible") loadAdvice(); }, 15000);
  loadAdvice();
  loadStats();
})();
