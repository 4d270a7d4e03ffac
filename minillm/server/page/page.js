// The page at "/": a prompt, the reply token by token (POST /inspect/steps, server-sent events),
// each step's candidates with their raw and sampled probabilities, and a clicked token's
// attention over the context (POST /inspect/attention) and logit lens column (POST /inspect/lens:
// every layer's top guess at the position that chose it). No library, no build step.
//
// sampledColumn() recomputes the sampled probabilities for the sliders' settings in the order
// minillm.sampling applies them (minillm/sampling/pipeline.py):
//     temperature -> top-k -> top-p -> min-p -> softmax
// on the step's K candidates (their raw log-probs) and its tail: the other tokens as a histogram
// of (log-prob, count) bins. Exact whenever top-k <= K (the tail cannot survive); otherwise the
// tail's mass comes from the histogram, each bin's tokens taken as equally likely.
"use strict";

function sampledColumn(candidates, tail, s) {
  // items: every token, best first; a candidate is 1 token, a tail bin `count` equal ones.
  // (sort is stable: at equal log-probs the candidates keep the server's order, lower id first)
  const items = candidates.map((c, i) => ({ lp: c.logprob, count: 1, cand: i }))
    .concat(tail.map(([lp, count]) => ({ lp, count, cand: -1 })))
    .sort((a, b) => b.lp - a.lp);
  const order = candidates.map((c, i) => items.findIndex(it => it.cand === i));
  if (s.temperature === 0) {                        // greedy: the argmax only
    return candidates.map((c, i) => (order[i] === 0 ? 1 : 0));
  }
  const top = items[0].lp / s.temperature;         // 1. temperature: z / T (shifted: max 0)
  let kept = items.map(it => ({ q: Math.exp(it.lp / s.temperature - top), n: it.count }));
  if (s.top_k > 0) {                                // 2. top-k: the k best tokens
    let room = s.top_k;
    kept = kept.map(k => { const n = Math.min(k.n, room); room -= n; return { q: k.q, n }; });
  }
  let total = kept.reduce((sum, k) => sum + k.q * k.n, 0);
  kept = kept.map(k => ({ q: k.q / total, n: k.n }));   // softmax of what is left
  if (s.top_p < 1) {                                // 3. top-p: keep j iff the mass before j < p
    let before = 0;
    kept = kept.map(k => {
      if (k.n === 0 || before >= s.top_p) return { q: k.q, n: 0 };
      const n = Math.min(k.n, Math.ceil((s.top_p - before) / k.q));   // the crossing one too
      before += n * k.q;
      return { q: k.q, n };
    });
  }
  if (s.min_p > 0) {                                // 4. min-p: p_i >= min_p * p_max
    const pmax = Math.max(...kept.filter(k => k.n > 0).map(k => k.q));
    kept = kept.map(k => ({ q: k.q, n: k.q >= s.min_p * pmax ? k.n : 0 }));
  }
  total = kept.reduce((sum, k) => sum + k.q * k.n, 0);   // 5. renormalise (the softmax)
  return candidates.map((c, i) => (kept[order[i]].n > 0 ? kept[order[i]].q / total : 0));
}

if (typeof module !== "undefined") {               // node (tests/server/test_page.py)
  module.exports = { sampledColumn };
} else {
  const $ = id => document.getElementById(id);
  const knobs = ["temperature", "top_k", "top_p", "min_p"];
  const state = { steps: [], promptIds: [], picked: null };

  const settings = () => Object.fromEntries(knobs.map(k => [k, Number($(k).value)]));
  const pct = p => (100 * p).toFixed(p >= 0.001 || p === 0 ? 1 : 3) + "%";
  const bar = p => `<span class="bar" style="width:${Math.round(60 * p)}px"></span>`;
  const esc = t => t.replace(/[&<>]/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" }[c]));

  function showKnobs() {
    for (const k of knobs) $(k).nextElementSibling.textContent = $(k).value;
  }

  async function post(path, body) {
    const headers = { "Content-Type": "application/json" };
    if ($("key").value) headers.Authorization = "Bearer " + $("key").value;
    const r = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
    if (!r.ok) throw new Error((await r.json()).error.message);
    return r;
  }

  async function generate() {
    const body = { prompt: $("prompt").value, max_tokens: Number($("max_tokens").value),
                   seed: Number($("seed").value), candidates: Number($("candidates").value),
                   ...settings() };
    state.steps = []; state.picked = null;
    $("tokens").textContent = ""; $("status").textContent = "generating…";
    try {
      const tok = await post("/tokenize", { content: body.prompt, with_pieces: true });
      state.promptIds = (await tok.json()).tokens;
      for (const t of state.promptIds) addToken(t.piece, null);
      const reader = (await post("/inspect/steps", body)).body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const line = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
          if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
          const event = JSON.parse(line.slice(6));
          if (event.candidates) { state.steps.push(event); addToken(event.piece, state.steps.length - 1); }
          if (event.finish_reason) $("status").textContent = `done: ${event.finish_reason}, ${state.steps.length} tokens`;
        }
      }
      if (state.steps.length) pick(state.steps.length - 1);
    } catch (err) {
      $("status").textContent = "error: " + err.message;
    }
  }

  function addToken(piece, index) {
    const span = document.createElement("span");
    span.textContent = piece;
    if (index === null) span.className = "prompt";
    else span.onclick = () => pick(index);
    span.dataset.index = index === null ? "" : index;
    $("tokens").appendChild(span);
  }

  function pick(index) {
    state.picked = index;
    for (const s of $("tokens").children) s.classList.toggle("chosen", s.dataset.index === String(index));
    renderTable();
    const position = state.promptIds.length + index - 1;   // the position whose output chose it
    attention(position);
    lens(position);
  }

  const contextIds = () => state.promptIds.map(t => t.id).concat(state.steps.map(s => s.id));

  function renderTable() {
    const step = state.steps[state.picked];
    if (!step) return;
    $("step-title").textContent = `Candidates for token ${state.picked + 1}: ${JSON.stringify(step.piece)}`;
    const live = sampledColumn(step.candidates, step.tail, settings());
    $("candidates-table").tBodies[0].innerHTML = step.candidates.map((c, i) => {
      const raw = Math.exp(c.logprob);
      return `<tr class="${c.id === step.id ? "picked" : ""}"><td>${i + 1}</td><td>${esc(JSON.stringify(c.piece))}</td>` +
        `<td>${bar(raw)}${pct(raw)}</td><td>${bar(c.sampled)}${pct(c.sampled)}</td>` +
        `<td class="live">${bar(live[i])}${pct(live[i])}</td></tr>`;
    }).join("");
  }

  async function attention(position) {
    const r = await (await post("/inspect/attention", { tokens: contextIds(), position })).json();
    state.attention = r;
    const fill = (sel, n) => {
      const keep = Number(sel.value) || 0;
      sel.innerHTML = Array.from({ length: n }, (_, i) => `<option value="${i}">${i}</option>`).join("");
      sel.value = Math.min(keep, n - 1);
    };
    fill($("layer"), r.weights.length);
    fill($("head"), r.weights[0].length);
    renderAttention();
  }

  function renderAttention() {
    const r = state.attention;
    if (!r) return;
    const w = r.weights[Number($("layer").value)][Number($("head").value)];
    const max = Math.max(...w);
    $("attention-text").innerHTML = r.pieces.map((p, j) =>
      `<span title="${pct(w[j])}" style="background: rgba(220, 80, 40, ${(w[j] / max).toFixed(3)})">${esc(p)}</span>`).join("");
  }

  async function lens(position) {
    const r = await (await post("/inspect/lens", { tokens: contextIds(), position })).json();
    const last = r.layers.length - 1;
    const name = l => (l === 0 ? "the embeddings" : l === last ? `block ${l} (the output)` : `block ${l}`);
    $("lens-next").textContent = `p(${JSON.stringify(r.next_piece)})`;
    $("lens-table").tBodies[0].innerHTML = r.layers.map(row =>
      `<tr class="${row.id === r.next ? "picked" : ""}"><td>${name(row.layer)}</td><td>${esc(JSON.stringify(row.piece))}</td>` +
      `<td>${bar(row.prob)}${pct(row.prob)}</td><td>${bar(row.next_prob)}${pct(row.next_prob)}</td></tr>`).join("");
  }

  for (const k of knobs) $(k).addEventListener("input", () => { showKnobs(); renderTable(); });
  $("layer").onchange = $("head").onchange = renderAttention;
  $("go").onclick = generate;
  showKnobs();
  // "/?demo": generate, then move the temperature slider; the two sampled columns are left in
  // data-before / data-after on <body> (tests/server/test_page.py, headless Chromium)
  if (new URLSearchParams(location.search).has("demo")) {
    generate().then(() => {
      const column = () => Array.from(document.querySelectorAll("td.live")).map(td => td.textContent).join(",");
      document.body.dataset.before = column();
      $("temperature").value = 2; $("temperature").dispatchEvent(new Event("input"));
      document.body.dataset.after = column();
    });
  }
  fetch("/v1/models").then(r => r.json()).then(m => {
    const d = m.data[0];
    $("model").textContent = `${d.id}: context ${d.meta.n_ctx}, vocabulary ${d.meta.n_vocab}`;
  }).catch(() => { $("model").textContent = "(the server asks for an API key: type it below)"; });
}
