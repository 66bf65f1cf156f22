// A large trace opened from its pyramid in headless Chromium (run by `cargo xtask bench-web`).
//
//   node bench-trace.mjs <url> <bundle name>
//
// Opens `#bundle=<name>&tab=gantt` and reports: page load to the first frame of the trace (its
// overview drawn), eframe's CPU time per frame (`frame_ms=` in the status line) while zooming in
// step by step down to single records and panning there, the WebAssembly memory and the JS heap
// of the tab, and how many tiles and chunks were fetched. Chromium renders through SwiftShader
// (software WebGL2) here; the CPU time includes issuing the WebGL calls.

import { field, launch, quantile } from "./common.mjs";

const [url, bundle] = process.argv.slice(2);
if (!bundle) {
  console.error("usage: node bench-trace.mjs <url> <bundle name>");
  process.exit(2);
}

const browser = await launch();
let failed = false;
try {
  const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
  page.on("pageerror", (e) => {
    console.error(`bench-web: page error: ${e.message}`);
    failed = true;
  });
  const loadStart = Date.now();
  await page.goto(`${url}#bundle=${encodeURIComponent(bundle)}&tab=gantt`);
  let status = "";
  while (Date.now() - loadStart < 120_000) {
    status = (await page.textContent("#status")) ?? "";
    if (status.startsWith("failed")) break;
    if (field(status, "trace_mode") && Number(field(status, "trace_loads")) >= 1 && field(status, "frame_ms")) break;
    await page.waitForTimeout(20);
  }
  const firstFrameSecs = (Date.now() - loadStart) / 1000;
  if (!field(status, "trace_mode")) {
    console.error(`bench-web: the trace did not open; status: ${status}`);
    process.exit(1);
  }
  console.log(`bench-web: trace ${bundle}: page load to first frame ${firstFrameSecs.toFixed(2)} s; ${status}`);
  const heap = async () => page.evaluate(() => (performance.memory ? performance.memory.usedJSHeapSize : 0));
  const samples = { pyramid: [], records: [] };
  let maxWasm = 0;
  let maxHeap = 0;
  let reachedRecords = false;
  let minView = Infinity;
  const sample = async () => {
    await page.waitForTimeout(40);
    const s = (await page.textContent("#status")) ?? "";
    const ms = Number(field(s, "frame_ms"));
    const mode = field(s, "trace_mode");
    if (Number.isFinite(ms) && (mode === "pyramid" || mode === "records")) samples[mode].push(ms);
    maxWasm = Math.max(maxWasm, Number(field(s, "wasm_mb")) || 0);
    maxHeap = Math.max(maxHeap, await heap());
    minView = Math.min(minView, Number(field(s, "view_ns")) || Infinity);
    if (mode === "records" && Number(field(s, "records_drawn")) > 0) reachedRecords = true;
    return s;
  };
  // Zoom in at the middle of the chart, step by step, until single records are drawn.
  await page.mouse.move(1100, 560);
  const zoomStart = Date.now();
  for (let i = 0; i < 400 && !(reachedRecords && minView < 2000); i += 1) {
    await page.mouse.wheel(0, -240);
    status = await sample();
    if (i % 25 === 0) console.log(`bench-web: zoom step ${i}: ${status}`);
    if (Date.now() - zoomStart > 240_000) {
      console.error(`bench-web: zooming in took over 240 s; status: ${status}`);
      failed = true;
      break;
    }
  }
  // Pan there: drag left and right.
  for (let i = 0; i < 40; i += 1) {
    await page.mouse.move(1100, 560);
    await page.mouse.down();
    await page.mouse.move(1100 + (i % 2 === 0 ? 300 : -300), 560, { steps: 4 });
    await page.mouse.up();
    status = await sample();
  }
  // Zoom back out to the whole trace, and pan at a middle zoom.
  for (let i = 0; i < 200; i += 1) {
    await page.mouse.wheel(0, 240);
    status = await sample();
    if (Number(field(status, "trace_level")) === 0 && field(status, "trace_mode") === "pyramid" && i > 20) break;
  }
  for (const mode of ["pyramid", "records"]) {
    const v = samples[mode].sort((a, b) => a - b);
    if (v.length === 0) continue;
    console.log(
      `bench-web: trace ${bundle}: ${mode} frames: CPU time median ${quantile(v, 0.5).toFixed(2)} ms ` +
        `(${(1000 / quantile(v, 0.5)).toFixed(0)} fps), p90 ${quantile(v, 0.9).toFixed(2)} ms, max ${v[v.length - 1].toFixed(2)} ms, ${v.length} samples`,
    );
  }
  console.log(
    `bench-web: trace ${bundle}: memory: wasm ${maxWasm} MiB, JS heap ${(maxHeap / 1048576).toFixed(0)} MiB (maxima); ` +
      `narrowest view ${minView.toFixed(0)} ns; single records drawn: ${reachedRecords}; last status: ${status}`,
  );
  if (!reachedRecords) {
    console.error("bench-web: zooming in never reached single records");
    failed = true;
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
