// threadlab's offline timeline: a canvas, one lane per thread (spans by depth, a state strip,
// a lock-hold strip), arrows between threads when zoomed in, a hover card, the doctor's
// findings. Rows come merged per level of detail (see view/lod.rs): the page draws the level
// whose width is just under what one pixel covers, so a frame costs about two blocks per pixel.
"use strict";
const T0 = performance.now();
const errors = [];
window.addEventListener("error", (e) => errors.push(String(e.message)));
const D = JSON.parse(document.getElementById("data").textContent);
document.getElementById("data").remove(); // the parsed copy is enough
const STATE_COLORS = ["#3cb371", "#5b8def", "#e8a33d", "#4a5163", "#e5534b", "#2a2e36"];
const STATE_LABELS = ["running", "searching (stealing)", "spinning", "parked", "waiting on a lock", "other (not instrumented)"];
const HOLD = "#e8d44d", PREEMPT = "#b36ae2";
const ARROW_COLORS = ["#c77dff", "#4cc9f0", "#ff8c42"];
const ARROW_NAMES = ["steal", "wake-up", "lock hand-off"];
// Many threads (a thread per task) get compact lanes: one line of label, less space between.
const COMPACT = D.threads.length > 48;
const ROW_H = COMPACT ? 10 : 13, STATE_H = COMPACT ? 5 : 8, HOLD_H = 3, GAP = COMPACT ? 3 : 7;
const LABEL_W = 170, TOP = 18;

// Decode the columns: absolute starts and ends as Float64Arrays.
function decode(lv) {
  const [ds, du, lab, cnt] = lv, n = ds.length;
  const s = new Float64Array(n), e = new Float64Array(n);
  let t = 0;
  for (let i = 0; i < n; i++) { t += ds[i]; s[i] = t; e[i] = t + du[i]; }
  return { s, e, l: lab, c: cnt, n };
}
// A row's levels, each decoded the first time a frame needs it.
function lazy(levels) {
  const cache = new Array(levels.length);
  return { length: levels.length, at: (k) => cache[k] || (cache[k] = decode(levels[k])) };
}
// Tracy's vocabulary: each frame set and each plot is a track above the threads' lanes;
// messages are ticks on their thread's lane.
const FRAME_H = 16, PLOT_H = 36;
const marks = [];
let y = TOP;
for (const f of D.frames || []) { marks.push({ kind: "frames", name: f.name, f, y, h: FRAME_H + 12, late: new Set(f.late) }); y += FRAME_H + 12; }
for (const p of D.plots || []) {
  let lo = Infinity, hi = -Infinity;
  for (const v of p.v) { if (v < lo) lo = v; if (v > hi) hi = v; }
  marks.push({ kind: "plot", name: p.name, p, y, h: PLOT_H + 6, lo, hi });
  y += PLOT_H + 6;
}
const msgsByLane = new Map();
for (const m of D.messages || []) { if (!msgsByLane.has(m[0])) msgsByLane.set(m[0], []); msgsByLane.get(m[0]).push(m); }
const lanes = [];
for (const [i, th] of D.threads.entries()) {
  const spans = th.spans.map(lazy);
  const h = Math.max(1, spans.length) * ROW_H + STATE_H + HOLD_H + GAP;
  lanes.push({ i, th, y, h, spans, states: lazy(th.states), holds: lazy(th.holds),
    pre: lazy([th.preempted]), waits: lazy([th.waits]), msgs: msgsByLane.get(i) || [] });
  y += h;
}
const pick = (levels, k) => levels.at(Math.min(k, levels.length - 1));
const totalH = y;
const names = D.names;
// A name's hue (FNV-1a), kept out of red and yellow: those mean lock wait and lock hold.
function hue(str) { let h = 2166136261; for (let i = 0; i < str.length; i++) { h ^= str.charCodeAt(i); h = Math.imul(h, 16777619); } return 75 + (h >>> 0) % 250; }
const ZONE_COLORS = D.colors || {};
const nameColor = names.map((n) => ZONE_COLORS[n] ? ZONE_COLORS[n] : n.startsWith("task: ") ? `hsl(${hue(n)},35%,52%)` : `hsl(${hue(n)},62%,58%)`);

const canvas = document.getElementById("tl"), ctx = canvas.getContext("2d");
const card = document.getElementById("card");
const end = Math.max(1, D.duration);
let view = { t0: 0, t1: end }, scrollY = 0, highlight = null;
const hashView = new URLSearchParams(location.hash.slice(1));
if (hashView.has("t0") && hashView.has("t1")) view = { t0: +hashView.get("t0"), t1: +hashView.get("t1") };
let W = 0, H = 0;
function resize() {
  const r = canvas.getBoundingClientRect(), dpr = window.devicePixelRatio || 1;
  W = Math.max(300, r.width); H = Math.max(200, r.height);
  canvas.width = W * dpr; canvas.height = H * dpr; ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
}
const plotW = () => W - LABEL_W;
const X = (t) => LABEL_W + (t - view.t0) / (view.t1 - view.t0) * plotW();
const Tx = (x) => view.t0 + (x - LABEL_W) / plotW() * (view.t1 - view.t0);
function level() {
  const nsPerPx = (view.t1 - view.t0) / plotW();
  let k = 0;
  while (k < D.levels.length && D.levels[k] <= nsPerPx) k++;
  return k; // 0 = raw; k = merged at D.levels[k-1]
}
// First index whose end reaches t (rows are sorted and do not overlap).
function first(r, t) { let lo = 0, hi = r.n; while (lo < hi) { const m = (lo + hi) >> 1; if (r.e[m] < t) lo = m + 1; else hi = m; } return lo; }
function fmt(ns) {
  if (ns >= 1e9) return (ns / 1e9).toFixed(3) + " s";
  if (ns >= 1e6) return (ns / 1e6).toFixed(2) + " ms";
  if (ns >= 1e3) return (ns / 1e3).toFixed(1) + " µs";
  return Math.round(ns) + " ns";
}

// The time axis's ticks over [t0, t1]: a step of 1, 2 or 5 × 10^n giving 6 to 15 ticks, each
// labelled in the unit of its time (s, ms, µs, ns) with as many decimals as the step needs, so
// that neighbouring ticks never read the same ("30.00 ms" at every tick of a 10 µs window).
// `fits(tick, ticks)`, when given, may refuse a step (labels too wide for the room between two
// ticks): the next coarser step (2, 5, 10 × …) is tried instead.
function axisTicks(t0, t1, fits) {
  const span = Math.max(t1 - t0, 1), step = Math.pow(10, Math.floor(Math.log10(span / 6)));
  let tick = Math.max(1, span / step > 30 ? step * 5 : span / step > 12 ? step * 2 : step);
  for (;;) {
    const out = [];
    for (let i = Math.ceil(t0 / tick); i * tick <= t1; i++) {
      const t = i * tick;
      const a = Math.abs(t), [unit, name] = a >= 1e9 ? [1e9, "s"] : a >= 1e6 ? [1e6, "ms"] : a >= 1e3 ? [1e3, "µs"] : [1, "ns"];
      const digits = Math.min(9, Math.max(0, Math.ceil(Math.log10(unit / tick) - 1e-9)));
      out.push({ t, label: (t / unit).toFixed(digits) + " " + name });
    }
    if (!fits || out.length < 2 || fits(tick, out)) return out;
    const m = tick / Math.pow(10, Math.floor(Math.log10(tick) + 1e-9));
    tick = m < 1.5 ? tick * 2 : m < 3 ? tick * 2.5 : tick * 2;
  }
}

let drawnLog = [], drawnCount = 0, lastLevel = 0, axisBoxes = [];
let markStats = { frames: 0, lateFrames: 0, plotPoints: 0, messages: 0 };
// First index in a sorted array whose key reaches t.
function firstBy(arr, t, key) { let lo = 0, hi = arr.length; while (lo < hi) { const m = (lo + hi) >> 1; if (key(arr[m]) < t) lo = m + 1; else hi = m; } return lo; }
function drawMarks() {
  for (const M of marks) {
    const y0 = M.y - scrollY;
    if (y0 + M.h < TOP || y0 > H) continue;
    if (M.kind === "frames") {
      const fr = M.f.frames;
      let lastX = -1;
      for (let i = firstBy(fr, view.t0, (f) => f[1]); i < fr.length && fr[i][0] <= view.t1; i++) {
        const x0 = Math.max(LABEL_W, X(fr[i][0])), x1 = Math.min(W, X(fr[i][1]));
        const w = Math.max(1, x1 - x0 - 1), late = M.late.has(i);
        if (x0 + w <= lastX && !late) continue;
        lastX = x0 + w;
        ctx.fillStyle = late ? "#e5534b" : (i % 2 ? "#2e7d57" : "#3cb371");
        ctx.fillRect(x0, y0, w, FRAME_H);
        markStats.frames++; if (late) markStats.lateFrames++;
        if (w > 46) {
          ctx.fillStyle = "#101216"; ctx.font = "10px system-ui, sans-serif";
          ctx.save(); ctx.beginPath(); ctx.rect(x0, y0, w, FRAME_H); ctx.clip();
          ctx.fillText(`${i + 1}: ${fmt(fr[i][1] - fr[i][0])}`, x0 + 3, y0 + FRAME_H - 4); ctx.restore();
        }
      }
    } else {
      const { t, v } = M.p, span = M.hi - M.lo || 1;
      const Y = (val) => y0 + PLOT_H - (val - M.lo) / span * (PLOT_H - 2) - 1;
      ctx.fillStyle = "#1c2027"; ctx.fillRect(LABEL_W, y0, W - LABEL_W, PLOT_H);
      ctx.strokeStyle = "#4cc9f0"; ctx.lineWidth = 1.2; ctx.beginPath();
      let i = Math.max(0, firstBy(t, view.t0, (x) => x) - 1), started = false, lastY = 0;
      for (; i < t.length && t[i] <= view.t1; i++) {
        const x = Math.max(LABEL_W, X(t[i])), yy = Y(v[i]);
        if (!started) { ctx.moveTo(x, yy); started = true; } else { ctx.lineTo(x, lastY); ctx.lineTo(x, yy); }
        lastY = yy; markStats.plotPoints++;
      }
      if (started) { ctx.lineTo(W, lastY); ctx.stroke(); }
      ctx.lineWidth = 1;
      ctx.fillStyle = "#8b93a3"; ctx.font = "10px system-ui, sans-serif";
      ctx.fillText(`${+M.hi.toPrecision(4)}`, W - 60, y0 + 10); ctx.fillText(`${+M.lo.toPrecision(4)}`, W - 60, y0 + PLOT_H - 2);
    }
    ctx.fillStyle = "#16181d"; ctx.fillRect(0, y0 - 2, LABEL_W - 4, M.h);
    ctx.fillStyle = M.kind === "frames" ? "#3cb371" : "#4cc9f0"; ctx.font = "11px system-ui, sans-serif";
    ctx.fillText(`${M.kind === "frames" ? "frames" : "plot"}: ${M.name}`.slice(0, 26), 6, y0 + 11);
    if (M.kind === "frames") {
      ctx.fillStyle = "#8b93a3"; ctx.font = "10px system-ui, sans-serif";
      ctx.fillText(`${M.late.size} late of ${M.f.frames.length} (> ${fmt(M.f.target)})`.slice(0, 30), 6, y0 + FRAME_H + 6);
    }
  }
}
function drawMessages(L, y0) {
  const ms = L.msgs;
  let lastX = -10;
  for (let i = firstBy(ms, view.t0, (m) => m[1]); i < ms.length && ms[i][1] <= view.t1; i++) {
    const x = X(ms[i][1]);
    if (x - lastX < 2) continue;
    lastX = x;
    ctx.fillStyle = ms[i][3] ? "#" + ms[i][3].toString(16).padStart(6, "0") : "#f2f2f2";
    ctx.beginPath(); ctx.moveTo(x - 4, y0 - 1); ctx.lineTo(x + 4, y0 - 1); ctx.lineTo(x, y0 + 6); ctx.fill();
    markStats.messages++;
  }
}
function drawRow(r, y0, h, color, log, lane) {
  let i = first(r, view.t0), lastX = -1;
  const xmax = W;
  for (; i < r.n && r.s[i] <= view.t1; i++) {
    const x0 = Math.max(LABEL_W, X(r.s[i])), x1 = Math.min(xmax, X(r.e[i]));
    const w = Math.max(1, x1 - x0);
    if (x0 + w <= lastX) continue; // this pixel column is drawn already
    lastX = x0 + w;
    ctx.fillStyle = color(r.l[i], r.c[i]);
    ctx.fillRect(x0, y0, w, h);
    drawnCount++;
    if (log) {
      if (drawnLog.length < 400) drawnLog.push({ name: names[r.l[i]], t0: r.s[i], t1: r.e[i], x0, x1: x0 + w, count: r.c[i], lane });
      if (w > 36) {
        ctx.fillStyle = "#101216"; ctx.font = "10px system-ui, sans-serif";
        const label = r.c[i] > 1 ? `${names[r.l[i]]} ×${r.c[i]}` : names[r.l[i]];
        ctx.save(); ctx.beginPath(); ctx.rect(x0, y0, w, h); ctx.clip();
        ctx.fillText(label, x0 + 3, y0 + h - 3); ctx.restore();
      }
    }
  }
}
function draw() {
  drawnLog = []; drawnCount = 0; markStats = { frames: 0, lateFrames: 0, plotPoints: 0, messages: 0 };
  const k = level(); lastLevel = k;
  ctx.fillStyle = "#16181d"; ctx.fillRect(0, 0, W, H);
  ctx.font = "10px system-ui, sans-serif";
  // Time axis.
  ctx.fillStyle = "#8b93a3"; ctx.strokeStyle = "#262a33";
  // A label starts 2 px right of its tick and must end 6 px before the next one.
  const room = (tick) => tick / (view.t1 - view.t0) * plotW();
  const fits = (tick, ticks) => ticks.every((k) => ctx.measureText(k.label).width + 8 <= room(tick));
  axisBoxes = [];
  for (const { t, label } of axisTicks(view.t0, view.t1, fits)) {
    const x = X(t); ctx.beginPath(); ctx.moveTo(x, TOP - 4); ctx.lineTo(x, H); ctx.stroke();
    ctx.fillText(label, x + 2, 11);
    axisBoxes.push({ label, x0: x + 2, x1: x + 2 + ctx.measureText(label).width });
  }
  drawMarks();
  for (const L of lanes) {
    const y0 = L.y - scrollY;
    if (y0 + L.h < TOP || y0 > H) continue;
    if (highlight && highlight.has(L.i)) { ctx.fillStyle = "#2b2a1d"; ctx.fillRect(0, y0 - 2, W, L.h); }
    L.spans.forEach((levels, d) => {
      drawRow(pick(levels, k), y0 + d * ROW_H, ROW_H - 1,
        (l, c) => c > 1 ? nameColor[l].replace("%)", "%,0.7)").replace("hsl", "hsla") : nameColor[l], true, L.i);
    });
    const sy = y0 + Math.max(1, L.spans.length) * ROW_H;
    drawRow(pick(L.states, k), sy, STATE_H - 1, (l) => STATE_COLORS[l], false);
    ctx.globalAlpha = 1;
    // Preemption: the share of time runnable but off the CPU, over the state strip.
    const P = L.pre.at(0);
    for (let i = first(P, view.t0); i < P.n && P.s[i] <= view.t1; i++) {
      ctx.fillStyle = PREEMPT; ctx.globalAlpha = Math.min(0.85, P.l[i] / 1000);
      ctx.fillRect(X(P.s[i]), sy, Math.max(1, X(P.e[i]) - X(P.s[i])), 3);
    }
    ctx.globalAlpha = 1;
    drawRow(pick(L.holds, k), sy + STATE_H, HOLD_H, () => HOLD, false);
    drawMessages(L, y0);
    // Label column.
    ctx.fillStyle = "#16181d"; ctx.fillRect(0, y0 - 2, LABEL_W - 4, L.h);
    ctx.fillStyle = highlight && highlight.has(L.i) ? "#f0d060" : "#d8dce4";
    ctx.font = COMPACT ? "9px system-ui, sans-serif" : "11px system-ui, sans-serif";
    ctx.fillText(L.th.name.slice(0, 26), 6, y0 + (COMPACT ? 9 : 10));
    ctx.fillStyle = "#8b93a3"; ctx.font = "10px system-ui, sans-serif";
    if (!COMPACT && L.h > 22) ctx.fillText(`tid ${L.th.tid}${L.th.worker !== null ? " · worker " + L.th.worker : ""}`, 6, y0 + 21);
  }
  // Arrows, when few enough to read.
  const A = D.arrows;
  let lo = 0, hi = A.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (A[m][2] < view.t0) lo = m + 1; else hi = m; }
  let shown = 0;
  const visible = [];
  for (let i = lo; i < A.length && A[i][2] <= view.t1 && visible.length <= 400; i++) visible.push(A[i]);
  if (visible.length <= 400) {
    for (const [kind, a, ta, b, tb] of visible) {
      const ya = lanes[a].y - scrollY + ROW_H / 2, yb = lanes[b].y - scrollY + ROW_H / 2;
      const xa = X(ta), xb = X(tb);
      ctx.strokeStyle = ARROW_COLORS[kind]; ctx.fillStyle = ARROW_COLORS[kind]; ctx.lineWidth = 1.2;
      ctx.beginPath(); ctx.moveTo(xa, ya); ctx.bezierCurveTo(xa + 20, ya, xb - 20, yb, xb, yb); ctx.stroke();
      const dir = yb >= ya ? -1 : 1;
      ctx.beginPath(); ctx.moveTo(xb, yb); ctx.lineTo(xb - 5, yb + dir * 4); ctx.lineTo(xb + 3, yb + dir * 5); ctx.fill();
      shown++;
    }
    ctx.lineWidth = 1;
  }
  ctx.fillStyle = "#16181d"; ctx.fillRect(0, 0, LABEL_W - 4, TOP - 2);
  // Which detail is drawn, in words: every span, or spans shorter than a pixel merged.
  const detail = k === 0 ? "every span" : `merged < ${fmt(D.levels[k - 1])}`;
  let corner = `${fmt(view.t1 - view.t0)} shown · ${detail}`;
  if (ctx.measureText(corner).width > LABEL_W - 10) corner = `${fmt(view.t1 - view.t0)} · ${detail}`;
  ctx.fillStyle = "#8b93a3"; ctx.fillText(corner, 6, 11);
  publish(shown);
}

// What the page drew, for tests and tools: written into #layout after each frame.
let firstDrawMs = null, pixels = null;
function publish(arrows) {
  if (firstDrawMs === null) {
    firstDrawMs = performance.now();
    const img = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let lit = 0;
    for (let p = 0; p < img.length; p += 4) if (img[p] + img[p + 1] + img[p + 2] > 3 * 60) lit++;
    pixels = { total: img.length / 4, lit };
  }
  document.getElementById("layout").textContent = JSON.stringify({
    lanes: lanes.length, laneNames: lanes.slice(0, 64).map((l) => l.th.name),
    laneY: lanes.slice(0, 64).map((l) => l.y - scrollY), view, plot: { x0: LABEL_W, x1: W },
    level: lastLevel, drawnCount, arrows, drawn: drawnLog, firstDrawMs, scriptMs: firstDrawMs - T0,
    pixels, errors, marks: markStats, axis: axisBoxes.filter((b) => b.x1 > LABEL_W && b.x0 < W),
    markRows: marks.map((m) => ({ kind: m.kind, name: m.name, y: m.y - scrollY, h: m.h })),
    card: card.style.display === "block" ? card.textContent : null,
    // The answer cards as drawn: class, figure, threshold, and whether any text is cut.
    answers: [...document.querySelectorAll("#answers .answer")].map((c, i) => ({
      cls: c.className, value: D.answers[i].value ?? null, threshold: D.answers[i].threshold ?? null,
      shown: c.querySelector(".v").textContent,
      cut: [c, ...c.children].some((e) => e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1),
    })),
  });
}

// Interaction.
let drag = null;
canvas.addEventListener("mousedown", (e) => { drag = { x: e.clientX, y: e.clientY, v: { ...view }, s: scrollY }; canvas.style.cursor = "grabbing"; });
window.addEventListener("mouseup", () => { drag = null; canvas.style.cursor = "grab"; });
window.addEventListener("mousemove", (e) => {
  if (drag) {
    const dt = (e.clientX - drag.x) / plotW() * (drag.v.t1 - drag.v.t0);
    view = { t0: drag.v.t0 - dt, t1: drag.v.t1 - dt };
    scrollY = Math.max(0, Math.min(totalH - H + 20, drag.s - (e.clientY - drag.y)));
    schedule();
  }
  hover(e);
});
canvas.addEventListener("wheel", (e) => {
  e.preventDefault();
  if (e.shiftKey) { scrollY = Math.max(0, Math.min(Math.max(0, totalH - H + 20), scrollY + e.deltaY)); schedule(); return; }
  const r = canvas.getBoundingClientRect(), t = Tx(e.clientX - r.left);
  const f = Math.exp(e.deltaY * 0.002), span = Math.max(50, (view.t1 - view.t0) * f);
  const a = (t - view.t0) / (view.t1 - view.t0);
  view = { t0: t - a * span, t1: t - a * span + span };
  schedule();
}, { passive: false });
canvas.addEventListener("dblclick", reset);
document.getElementById("reset").addEventListener("click", reset);
function reset() { view = { t0: 0, t1: end }; scrollY = 0; highlight = null; schedule(); }
let pending = false;
function schedule() { if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; draw(); }); } }
window.addEventListener("resize", () => { resize(); schedule(); });

function findAt(r, t, tol) { const i = first(r, t - tol); return i < r.n && r.s[i] <= t + tol ? i : -1; }
function hover(e) {
  const r = canvas.getBoundingClientRect(), mx = e.clientX - r.left, my = e.clientY - r.top;
  card.style.display = "none";
  if (mx < LABEL_W || mx > W || my < TOP || my > H) return;
  const yy = my + scrollY, M = marks.find((m) => yy >= m.y && yy < m.y + m.h);
  if (M) return hoverMark(M, Tx(mx), mx, my);
  const L = lanes.find((l) => yy >= l.y && yy < l.y + l.h);
  if (!L) return;
  if (yy - L.y < 7 && L.msgs.length) {
    const tol = 4 * (view.t1 - view.t0) / plotW(), t = Tx(mx);
    const i = firstBy(L.msgs, t - tol, (m) => m[1]);
    if (i < L.msgs.length && L.msgs[i][1] <= t + tol) return showCard(`message: ${L.msgs[i][2]}\nat ${fmt(L.msgs[i][1])}\nthread ${L.th.name}`, mx, my);
  }
  const t = Tx(mx), tol = (view.t1 - view.t0) / plotW(), k = lastLevel, rel = yy - L.y;
  const depths = Math.max(1, L.spans.length);
  let text = null;
  if (rel < depths * ROW_H) {
    const levels = L.spans[Math.floor(rel / ROW_H)];
    if (levels) {
      const row = pick(levels, k), i = findAt(row, t, tol);
      if (i >= 0) text = `${names[row.l[i]]}${row.c[i] > 1 ? `  (${row.c[i]} spans merged at this zoom)` : ""}\nduration ${fmt(row.e[i] - row.s[i])}\nat ${fmt(row.s[i])}`;
    }
  } else if (rel < depths * ROW_H + STATE_H) {
    const row = pick(L.states, k), i = findAt(row, t, tol);
    if (i >= 0) text = `state: ${STATE_LABELS[row.l[i]]}${row.c[i] > 1 ? " (mostly)" : ""}\nduration ${fmt(row.e[i] - row.s[i])}`;
    // A lock wait: which lock, and who held it.
    const Wt = L.waits.at(0), w = findAt(Wt, t, tol);
    if (w >= 0) text = (text || "") + `\n${names[Wt.l[w]]}`;
    const P = L.pre.at(0), j = findAt(P, t, 0);
    if (j >= 0) text = (text || "") + `\npreempted ${(P.l[j] / 10).toFixed(1)}% of ${fmt(P.e[j] - P.s[j])}`;
  } else {
    const row = pick(L.holds, k), i = findAt(row, t, tol);
    if (i >= 0) text = `holding lock ${names[row.l[i]]}\nfor ${fmt(row.e[i] - row.s[i])}`;
  }
  if (!text) return;
  const s = L.th.summary;
  card.textContent = `${text}\nthread ${L.th.name} (tid ${L.th.tid})\nlock wait ${fmt(s["lock wait"])} in all`;
  card.style.display = "block";
  card.style.left = Math.min(mx + 14, W - 280) + "px"; card.style.top = (my + 14) + "px";
}

function showCard(text, mx, my) {
  card.textContent = text; card.style.display = "block";
  card.style.left = Math.min(mx + 14, W - 280) + "px"; card.style.top = (my + 14) + "px";
}
function hoverMark(M, t, mx, my) {
  if (M.kind === "frames") {
    const fr = M.f.frames, i = firstBy(fr, t, (f) => f[1]);
    if (i < fr.length && fr[i][0] <= t) {
      showCard(`${M.name} frame ${i + 1}: ${fmt(fr[i][1] - fr[i][0])}${M.late.has(i) ? " — LATE" : ""}\ntarget ${fmt(M.f.target)} · median ${fmt(M.f.median)}\nat ${fmt(fr[i][0])}`, mx, my);
    }
  } else {
    const { t: ts, v } = M.p, i = firstBy(ts, t, (x) => x) - 1;
    if (i >= 0) showCard(`plot ${M.name}: ${+v[i].toPrecision(6)}\nsince ${fmt(ts[i])}`, mx, my);
  }
}

// Panels.
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
document.getElementById("meta").textContent = `${fmt(D.duration)} · ${D.threads.length} threads · ${D.events.toLocaleString()} events · ${D.cpus} CPUs`;
// A card is coloured by its figure against the threshold of the finding it bears on (at or
// above it is worse); a figure without a threshold is not coloured, and a question the trace
// holds too little to judge says so instead of showing 0.
function answerCard(a) {
  const judged = a.value !== null && a.value !== undefined;
  const cls = !judged ? " unjudged" : a.threshold == null ? "" : a.value >= a.threshold ? " bad" : " good";
  const v = judged
    ? `${esc(+a.value.toFixed(2))} ${esc(a.unit)}${a.threshold == null ? "" : ` <span class="t">(threshold ${esc(a.threshold)})</span>`}`
    : "not enough to judge";
  return `<div class="answer${cls}"><div class="q">${esc(a.question)}</div><div class="v">${v}</div><div class="a">${esc(a.answer)}</div></div>`;
}
document.getElementById("answers").innerHTML = D.answers.map(answerCard).join("");
document.getElementById("legend").innerHTML = STATE_LABELS.map((l, i) => `<span><i style="background:${STATE_COLORS[i]}"></i>${l}</span>`).join("")
  + (marks.length || D.messages.length ? `<span><i style="background:#3cb371"></i>frame</span><span><i style="background:#e5534b"></i>late frame</span><span><i style="background:#4cc9f0"></i>plot</span><span><i style="background:#f2f2f2"></i>message</span>` : "")
  + `<span><i style="background:${PREEMPT}"></i>preempted</span><span><i style="background:${HOLD}"></i>holding a lock</span>`
  + ARROW_NAMES.map((n, i) => `<span><i style="background:${ARROW_COLORS[i]}"></i>${n} arrow</span>`).join("");
const F = document.getElementById("findings");
F.innerHTML = D.findings.length ? D.findings.map((f, i) =>
  `<div class="finding" data-i="${i}"><b>${esc(f.pitfall)}: ${esc(f.subject)}</b><div class="e">${esc(f.evidence)}</div><div class="s">${esc(f.suggestion)}</div></div>`).join("")
  : "<div class='e'>No pitfall found.</div>";
F.addEventListener("click", (e) => {
  const el = e.target.closest(".finding"); if (!el) return;
  const f = D.findings[+el.dataset.i], pad = Math.max(1000, (f.t1 - f.t0) * 0.05);
  view = { t0: Math.max(0, f.t0 - pad), t1: f.t1 + pad };
  highlight = new Set(f.threads);
  if (f.threads.length) scrollY = Math.max(0, lanes[f.threads[0]].y - TOP);
  schedule();
});
const sum = document.getElementById("summary"), keys = ["running", "searching", "spinning", "parked", "lock wait", "other"];
const rowsShown = Math.min(D.threads.length, 300);
sum.innerHTML = `<tr><th>thread</th><th>lifetime</th>${keys.map((k) => `<th>${k}</th>`).join("")}<th>preempted</th><th>tasks</th><th>steals</th><th>share of time in each state</th></tr>`
  + D.threads.slice(0, rowsShown).map((t) => {
    const s = t.summary, life = Math.max(1, keys.reduce((a, k) => a + s[k], 0));
    return `<tr><td>${esc(t.name)}</td><td>${fmt(s.lifetime)}</td>${keys.map((k) => `<td>${fmt(s[k])}</td>`).join("")}<td>${fmt(s.preempted)}</td><td>${s.tasks}</td><td>${s.steals}</td><td><div class="bar">${keys.map((k, i) => `<span style="width:${(100 * s[k] / life).toFixed(2)}%;background:${STATE_COLORS[i]}"></span>`).join("")}</div></td></tr>`;
  }).join("") + (D.threads.length > rowsShown ? `<tr><td colspan="12">… and ${D.threads.length - rowsShown} more threads</td></tr>` : "");

resize();
draw();
// For tests and tools: `#hover=LANE,T` hovers lane LANE's state strip at time T (ns) once drawn
// and publishes the hover card's text.
if (hashView.has("hover")) {
  const [li, ht] = hashView.get("hover").split(",").map(Number), L = lanes[li];
  if (L) {
    const r = canvas.getBoundingClientRect();
    const sy = L.y - scrollY + Math.max(1, L.spans.length) * ROW_H + STATE_H / 2;
    hover({ clientX: r.left + X(ht), clientY: r.top + sy });
    publish(0);
  }
}
