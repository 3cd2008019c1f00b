// The "teach my dice" page (kosti.dashboard.teach): capture, review link, train, progress, before/after.
"use strict";
const T = {
  en: {
    title: "teach my dice", back: "Back to the table", s1: "1. Throw your dice about 10 times",
    s1help: "Throw your own dice on the table, wait until they lie still, then save the throw. Vary the faces and places.",
    save: "Save this throw", s2: "2. Confirm or fix each reading",
    s2help: "Open the review page: check every die of every photo, fix a wrong face, draw a missing die, and press Enter to save.",
    open: "Open the review page", s3: "3. Train",
    s3help: "kosti retrains the face reader on your confirmed photos (the detector too only if it misses your dice), keeps some photos back to check itself, and replaces the current reader only if it reads ordinary dice no worse.",
    train: "Train", s4: "4. Before and after",
    captured: (n, s) => `${photos(n)} saved (about ${s} are enough)`,
    reviewed: (r, n) => `${r} of ${photos(n)} confirmed`,
    running: (stage, e, n) => `Training: ${stage}` + (n ? `, epoch ${e} of ${n}` : ""),
    left: (m) => `about ${m} min left`, estimating: "estimating the time left…", elapsed: (m) => `${m} min so far`,
    failed: "Training failed: ", metric: "on your held-back photos", before: "before", after: "after",
    reference: "on ordinary dice (reference photos)", precision: "precision", recall: "dice found (recall)",
    die_accuracy: "faces read right", image_exact: "throws read exactly",
    activated: (v, m) => `New reader ${v} is active (trained in ${m} min).`,
    refused: (why) => `The new reader was not activated: ${why}. The current reader stays.`,
    nothing: "Nothing to retrain: the current reader already reads your dice right on every confirmed photo, so it stays as it is.",
    stages: { preparing: "preparing the photos", detector: "the dice detector", classifier: "the face reader" },
  },
  ru: {
    title: "научить мои кости", back: "Назад к столу", s1: "1. Бросьте свои кости около 10 раз",
    s1help: "Бросайте свои кости на стол, дождитесь, пока они остановятся, и сохраните бросок. Меняйте грани и места.",
    save: "Сохранить этот бросок", s2: "2. Подтвердите или исправьте каждое чтение",
    s2help: "Откройте страницу проверки: проверьте каждую кость на каждом снимке, исправьте неверную грань, обведите пропущенную кость и нажмите Enter, чтобы сохранить.",
    open: "Открыть страницу проверки", s3: "3. Обучение",
    s3help: "kosti дообучает распознавание граней на подтверждённых снимках (детектор — только если он пропускает ваши кости), оставляет часть снимков для проверки и заменяет текущую модель, только если обычные кости она читает не хуже.",
    train: "Обучить", s4: "4. До и после",
    captured: (n, s) => `сохранено снимков: ${n} (достаточно около ${s})`,
    reviewed: (r, n) => `подтверждено снимков: ${r} из ${n}`,
    running: (stage, e, n) => `Обучение: ${stage}` + (n ? `, эпоха ${e} из ${n}` : ""),
    left: (m) => `осталось около ${m} мин`, estimating: "оцениваем оставшееся время…", elapsed: (m) => `прошло ${m} мин`,
    failed: "Обучение не удалось: ", metric: "на отложенных снимках", before: "до", after: "после",
    reference: "на обычных костях (контрольные снимки)", precision: "точность", recall: "найдено костей",
    die_accuracy: "грани прочитаны верно", image_exact: "броски прочитаны без ошибок",
    activated: (v, m) => `Новая модель ${v} включена (обучение заняло ${m} мин).`,
    refused: (why) => `Новая модель не включена: ${why}. Остаётся текущая.`,
    nothing: "Переобучать нечего: текущая модель уже верно читает ваши кости на всех подтверждённых снимках, поэтому она остаётся.",
    stages: { preparing: "подготовка снимков", detector: "детектор костей", classifier: "распознавание граней" },
  },
};
// the table page's language (one key for every page: "kosti.lang"), else the browser's
let lang = localStorage.getItem("kosti.lang") || ((navigator.language || "").startsWith("ru") ? "ru" : "en");
// "1 photo", "2 photos": CLDR's rule (Intl.PluralRules), as kosti.engine.plurals and the table page count
const photos = (n) => `${n} ${new Intl.PluralRules("en-US").select(n) === "one" ? "photo" : "photos"}`;
const $ = (id) => document.getElementById(id);
const t = (k) => T[lang][k];

function headers() {
  const h = { "Content-Type": "application/json" };
  const pin = $("pin").value.trim();
  if (pin) h["X-Kosti-Pin"] = pin;
  return h;
}

function say(text, isError) {
  const m = $("message");
  m.textContent = text; m.hidden = !text; m.classList.toggle("error", !!isError);
}

function applyLang() {
  document.documentElement.lang = lang;
  document.querySelectorAll("[data-i18n]").forEach((el) => { const v = t(el.dataset.i18n); if (typeof v === "string") el.textContent = v; });
  document.querySelectorAll("[data-i18n-title]").forEach((el) => { el.title = t(el.dataset.i18nTitle); });
  $("lang-toggle").textContent = lang === "en" ? "RU" : "EN";
}

async function post(url) {
  const r = await fetch(url, { method: "POST", headers: headers() });
  const body = await r.json().catch(() => ({}));
  if (r.status === 403) { $("pin").hidden = false; $("pin").focus(); }  // a PIN is needed after all
  if (!r.ok) throw new Error(lang === "ru" ? (body.error_ru || body.error) : (body.error || r.statusText));
  return body;
}

function cmpTable(title, b, a) {
  const rows = ["recall", "die_accuracy", "precision", "image_exact"].map((k) =>
    `<tr><td>${t(k)}</td><td>${(b[k] ?? 0).toFixed(3)}</td><td>${(a[k] ?? 0).toFixed(3)}</td></tr>`).join("");
  return `<p>${title}</p><table class="cmp"><tr><th></th><th>${t("before")}</th><th>${t("after")}</th></tr>${rows}</table>`;
}

function stageName(s) {
  const key = Object.keys(T.en.stages).find((k) => s.startsWith(k));
  return key ? T[lang].stages[key] + s.slice(key.length) : s;
}

function show(st) {
  $("captured").textContent = T[lang].captured(st.images, st.suggested);
  $("reviewed").textContent = T[lang].reviewed(st.reviewed, st.images);
  $("step-throw").classList.toggle("done", st.images >= st.suggested);
  $("step-review").classList.toggle("done", st.images > 0 && st.reviewed === st.images);
  const job = st.job;
  $("btn-train").disabled = job.state === "running" || st.reviewed < st.min_reviewed;
  $("progress-box").hidden = job.state !== "running";
  if (job.state === "running") {
    const p = job.progress || {};
    const frac = p.epochs ? p.epoch / p.epochs : 0;
    $("progress").value = frac;
    const left = p.eta_s == null ? t("estimating") : T[lang].left(Math.max(1, Math.round(p.eta_s / 60)));
    $("progress-text").textContent = `${T[lang].running(stageName(p.stage || "preparing"), p.epoch, p.epochs)} · ` +
      `${T[lang].elapsed(Math.round(job.elapsed_s / 60))} · ${left}`;
  }
  $("step-result").hidden = !(job.state === "done" || job.state === "failed");
  if (job.state === "failed") $("result").textContent = t("failed") + (job.error || "");
  if (job.state === "done" && job.result) {
    const r = job.result;
    let html = "";
    if (r.before && r.after) html += cmpTable(`${t("metric")} (${r.held_back_images})`, r.before, r.after);
    if (r.reference && r.reference.before && r.reference.after) html += cmpTable(t("reference"), r.reference.before, r.reference.after);
    const ok = !!r.activated || !!r.nothing_to_learn;
    const why = (lang === "ru" && r.refused_ru) || r.refused || "";
    const verdict = r.nothing_to_learn ? t("nothing") : r.activated ? T[lang].activated(r.version, r.minutes) : T[lang].refused(why);
    html += `<p class="verdict ${ok ? "ok" : "refused"}">${verdict}</p>`;
    $("result").innerHTML = html;
    $("step-train").classList.add("done");
  }
}

async function refresh() {
  try {
    const r = await fetch("/api/teach/status");
    if (r.ok) show(await r.json());
  } catch (e) { /* the next poll tries again */ }
  $("live").src = "/snapshot.jpg?t=" + Date.now();
}

$("btn-capture").onclick = async () => {
  try { show(await post("/api/teach/capture")); say(""); } catch (e) { say(e.message, true); }
};
$("btn-train").onclick = async () => {
  try { show(await post("/api/teach/train")); say(""); } catch (e) { say(e.message, true); }
};
// The PIN box shows only where the table asks for a PIN (bound beyond localhost) or one was typed before; the PIN
// is the main page's (localStorage "kosti.pin"), so it is typed once (issue 42 #12).
$("pin").value = localStorage.getItem("kosti.pin") || "";
$("pin").hidden = !$("pin").value;
$("pin").onchange = () => localStorage.setItem("kosti.pin", $("pin").value.trim());
fetch("/api/state").then((r) => r.json()).then((s) => { if (s.pin_required) $("pin").hidden = false; }).catch(() => {});
$("lang-toggle").onclick = () => { lang = lang === "en" ? "ru" : "en"; localStorage.setItem("kosti.lang", lang); applyLang(); refresh(); };
applyLang();
refresh();
setInterval(refresh, 2000);
